"""AWS requests per tools/call, held to each action's budget: an action that comes to need another DynamoDB or S3
request fails here, not on the bill.

The deployed handler (functions/api/app.py) runs in-process against moto, as a warm Lambda runs it; botocore's
`before-call` event counts every request its clients send, the bearer-token lookup (`AccountStore.admit`) apart
from the action's own. Each action is called once to warm up, then measured on each of the calls after it.
"""

import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from agent_workspace.domain.clock import iso
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Task
from agent_workspace.local.stack import Seed, local_runtime, seed
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts
from agent_workspace.services import skills as skill_service
from agent_workspace.services.tasks import NewTask, create_task
from agent_workspace.store.board import BoardStore
from agent_workspace.store.dynamo import to_item
from agent_workspace.store.tasks import TaskStore, task_item
from tests.integration.test_lambda_handler import Lambda, load_event, result_of, text_of_json
from tests.support import CREATED, b64, load_function

CALLS = 3  # per action: a warm-up, then the calls held to the budget
BACKLOG = 2_000  # the long queue a dequeue must not notice (against 10): moto's index Query reads every item
DDB_READS = {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}
DDB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


# -- budgets -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    text: str
    met: Callable[[Counter[str]], bool]


def _dynamodb(requests: Counter[str]) -> Counter[str]:
    return Counter({name.removeprefix("DynamoDB "): n for name, n in requests.items() if name.startswith("DynamoDB ")})


def one_write(puts: int = 0, writes: int = 1) -> Goal:
    """One DynamoDB write (a transaction counts as one; `writes` when more are due), and an S3 PutObject per
    attachment: nothing else."""

    def met(requests: Counter[str]) -> bool:
        ddb = _dynamodb(requests)
        others = Counter({name: n for name, n in requests.items() if not name.startswith("DynamoDB ")})
        return (
            sum(ddb.values()) == writes
            and set(ddb) <= DDB_WRITES
            and others == Counter({"S3 PutObject": puts} if puts else {})
        )

    return Goal(f"{writes} write(s) + {puts} S3 PutObject" if puts else f"{writes} write(s)", met)


def reads_at_most(limit: int) -> Goal:
    def met(requests: Counter[str]) -> bool:
        ddb = _dynamodb(requests)
        return sum(ddb.values()) == sum(requests.values()) <= limit and set(ddb) <= DDB_READS

    return Goal(f"<= {limit} DynamoDB reads", met)


def requests_at_most(limit: int) -> Goal:
    return Goal(f"<= {limit} requests", lambda requests: sum(requests.values()) <= limit)


def pushed(goal: Goal) -> Goal:
    """`goal`, and the one SQS SendMessage that publishes the change to the sockets that hear it (issue 36: a task
    changed tells the workspace's consoles): pushed to the events queue, never waited on."""

    def met(requests: Counter[str]) -> bool:
        rest = Counter({name: n for name, n in requests.items() if name != "SQS SendMessage"})
        return requests["SQS SendMessage"] == 1 and goal.met(rest)

    return Goal(f"{goal.text} + 1 SQS SendMessage (the push)", met)


# -- the handler, watched ---------------------------------------------------------------------------------


class Watched:
    """functions/api/app.py on one runtime's resources, each tools/call answered with the requests it sent."""

    def __init__(self, module: Any) -> None:
        self._lambda = Lambda(module.handler)
        self._counting: Counter[str] | None = None  # where a request is counted now: None outside a call
        self._auth: Counter[str] = Counter()
        self._action: Counter[str] = Counter()
        runtime = module._asgi.app.state.runtime  # the handler's own: its clients are the ones to watch
        for client in (runtime.clients.dynamodb, runtime.clients.s3, runtime.clients.sqs, runtime.clients.scheduler):
            client.meta.events.register("before-call", self._count)
        admit = runtime.accounts.admit

        def admit_as_auth(*args: Any) -> Any:
            with self._counting_into(self._auth):
                return admit(*args)

        runtime.accounts.admit = admit_as_auth

    def _count(self, model: Any, **_: Any) -> None:
        if self._counting is not None:
            self._counting[f"{model.service_model.service_id} {model.name}"] += 1

    @contextmanager
    def _counting_into(self, counter: Counter[str]) -> Iterator[None]:
        outer, self._counting = self._counting, counter
        try:
            yield
        finally:
            self._counting = outer

    def call(self, token: str, tool: str, arguments: dict[str, Any]) -> tuple[str, Counter[str], Counter[str]]:
        """(the answer's text, the action's own requests, the token lookup's)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        self._auth, self._action = Counter(), Counter()
        with self._counting_into(self._action):
            reply = self._lambda.invoke(load_event("mcp_tools_call_help.json", token, body))
        result = result_of(reply)
        assert not result.get("isError"), text_of_json(result)
        return text_of_json(result), self._action, self._auth

    def ok(self, token: str, tool: str, action: str, **payload: Any) -> str:
        return self.call(token, tool, {"action": action, "payload": payload})[0]


@dataclass
class Made:
    """The module's workspace and what the measured calls act on, made through the handler beforehand."""

    runtime: Runtime
    seeded: Seed
    handler: Watched
    plain: list[str]  # task ids, one per call
    with_files: list[str]  # tasks with the attachments a1 and a2, one per call
    guest_token: str  # of another workspace of the account, which the skill shared-0 is shared into
    empty_token: str  # of a workspace whose queue stays empty
    claimable: list[str]  # board tasks, one per claim
    working: list[str]  # board tasks claimed beforehand, one per progress report
    delivering: list[str]  # board tasks claimed beforehand, one per completion
    agent_id: str = ""  # an agent of the repo with a prompt, the memory budget-note and the brief budget-brief
    agent_session: str = ""  # a load session of it
    project_token: str = ""  # of a workspace whose queue holds a task of no project and one of `project_id`
    project_id: str = ""
    blocking: list[str] = field(default_factory=list)  # board tasks claimed beforehand, one per blocker reported


def attachments(*ids: str) -> list[dict[str, str]]:
    return [{"id": i, "filename": f"{i}.txt", "mimeType": "text/plain", "data": b64(b"budget\n" * 8)} for i in ids]


def skill_md(description: str, i: int) -> str:
    return f"---\ndescription: {description}\n---\n# Budget skill\nSaved {i} times.\n"


def created_id(text: str) -> str:
    match = CREATED.match(text)
    assert match, text
    return match.group(1)


@pytest.fixture(scope="module")
def made(moto_endpoint, aws_clients) -> Iterator[Made]:
    runtime = local_runtime(moto_endpoint, clients=aws_clients)
    seeded = seed(runtime)
    with pytest.MonkeyPatch.context() as monkeypatch:
        handler = Watched(load_function("api", runtime, monkeypatch))
        token = seeded.agent_token
        plain = [created_id(handler.ok(token, "task", "create", title=f"plain {i}", body="b")) for i in range(CALLS)]
        with_files = [
            created_id(
                handler.ok(token, "task", "create", title=f"files {i}", body="b", attachments=attachments("a1", "a2"))
            )
            for i in range(CALLS)
        ]
        for i in range(CALLS):
            handler.ok(token, "memory", "save", name="budget.md", content=f"revision {i}")
            handler.ok(token, "skills", "save", uri="skill://budget/SKILL.md", content=skill_md("A budget skill.", i))
            handler.ok(token, "skills", "save", uri=f"skill://budget/notes/{i}.md", content=f"note {i}")
            handler.ok(token, "skills", "save", uri=f"skill://budget/trash/{i}.md", content=f"trash {i}")
        handler.ok(token, "skills", "save", uri="skill://shared-0/SKILL.md", content=skill_md("A shared skill.", 0))
        guest, guest_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Guest", "Shared into.")
        skill_service.share(runtime, seeded.workspace_id, "shared-0", guest.id)
        _, empty_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Empty", "Nothing queued.")

        def board_tasks(name: str, claimed: bool) -> list[str]:
            made = [
                json.loads(handler.ok(token, "task", "propose", title=f"{name} {i}", criteria=["c"]))["id"]
                for i in range(CALLS)
            ]
            for task_id in made if claimed else ():
                handler.ok(token, "task", "claim", taskId=task_id)
            return made

        claimable, working, delivering, blocking = (
            board_tasks(n, c) for n, c in (("claim", False), ("work", True), ("deliver", True), ("block", True))
        )
        _, project_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Projects", "Narrowed.")
        project_id = json.loads(handler.ok(project_token.token, "board", "createProject", title="Budget"))["id"]
        handler.ok(project_token.token, "task", "propose", title="in no project", priority="urgent")
        handler.ok(project_token.token, "task", "propose", title="in the project", projectId=project_id)
        agent_id = json.loads(handler.ok(token, "agent", "create", name="Budget Agent", prompt="Spend little."))["id"]
        session = handler.ok(token, "agent", "load", agent=agent_id).rsplit("Session: ", 1)[1][:36]
        handler.ok(
            token,
            "agent",
            "remember",
            agent=agent_id,
            session=session,
            name="budget-note",
            type="project",
            description="d",
            body="budget words",
        )
        handler.ok(
            token,
            "agent",
            "updateBrief",
            agent=agent_id,
            session=session,
            name="budget-brief",
            description="d",
            body="b",
        )
        yield Made(
            runtime,
            seeded,
            handler,
            plain,
            with_files,
            guest_token.token,
            empty_token.token,
            claimable,
            working,
            delivering,
            agent_id,
            session,
            project_token.token,
            project_id,
            blocking,
        )


# -- each action within its budget ----------------------------------------------------------------------------


def act(action: str, **payload: Any) -> dict[str, Any]:
    """The arguments of a tools/call for one action."""
    return {"action": action, "payload": payload}


@dataclass(frozen=True)
class Case:
    goal: Goal
    tool: str
    arguments: Callable[[Made, int], dict[str, Any]]  # the i-th call's
    token: Callable[[Made], str] = lambda made: made.seeded.agent_token
    answered: Callable[[str], bool] = lambda text: True


def dequeued(text: str) -> bool:
    return json.loads(text) is not None


# `pushed`: a change to a task the board shows is one SQS SendMessage more, the push that tells the workspace's open
# consoles (the loaded function runs with a WebSocket API configured, as the template deploys it).
CASES = {
    # A create takes the workspace's next short identifier (one atomic ADD), then writes in one transaction.
    "task create": Case(pushed(one_write(writes=2)), "task", lambda m, i: act("create", title=f"new {i}", body="b")),
    "task create, 2 attachments": Case(
        pushed(one_write(puts=2, writes=2)),
        "task",
        lambda m, i: act("create", title=f"files {i}", body="b", attachments=attachments("a1", "a2")),
    ),
    "task create, cronSchedule": Case(
        pushed(requests_at_most(3)),
        "task",
        lambda m, i: act("create", title=f"hourly {i}", body="b", cronSchedule="30 * * * *"),
    ),
    "workspace publishEvent": Case(
        requests_at_most(2), "workspace", lambda m, i: act("publishEvent", name="budget_done", payload=f"run {i}")
    ),
    "task get by id": Case(reads_at_most(2), "task", lambda m, i: act("get", taskId=m.plain[i])),
    "task get by id, includeConversation": Case(
        reads_at_most(2), "task", lambda m, i: act("get", taskId=m.with_files[i], includeConversation=True)
    ),
    # The task's read and the transaction: the board's rules need no other read for a task out of triage.
    "task updateStatus": Case(
        pushed(requests_at_most(2)), "task", lambda m, i: act("updateStatus", taskId=m.plain[i], status="ongoing")
    ),
    # A dequeue reads the token's own queue (tasks named for it) and the open one, then claims: one write.
    "task get (dequeue)": Case(pushed(requests_at_most(3)), "task", lambda m, i: act("get"), answered=dequeued),
    "task get (dequeue), queue empty": Case(
        requests_at_most(2),
        "task",
        lambda m, i: act("get"),
        token=lambda m: m.empty_token,
        answered=lambda text: json.loads(text) is None,
    ),
    "memory save": Case(requests_at_most(2), "memory", lambda m, i: act("save", name="budget.md", content=f"v{i}")),
    "memory save, expectedRevision": Case(
        requests_at_most(2),
        "memory",
        lambda m, i: act("save", name="checked.md", content=f"v{i}", expectedRevision=i),
    ),
    "memory load": Case(reads_at_most(1), "memory", lambda m, i: act("load", name="budget.md")),
    "memory load, a revision": Case(
        reads_at_most(1), "memory", lambda m, i: act("load", name="budget.md", revision=i + 1)
    ),
    "skills save SKILL.md, new skill": Case(
        requests_at_most(2),
        "skills",
        lambda m, i: act("save", uri=f"skill://new-{i}/SKILL.md", content=skill_md("New.", i)),
    ),
    "skills save SKILL.md": Case(
        requests_at_most(2),
        "skills",
        lambda m, i: act("save", uri="skill://budget/SKILL.md", content=skill_md("A budget skill.", CALLS + i)),
    ),
    "skills save another file": Case(
        requests_at_most(2), "skills", lambda m, i: act("save", uri=f"skill://budget/more/{i}.md", content=f"{i}")
    ),
    "skills load": Case(reads_at_most(1), "skills", lambda m, i: act("load", uri="skill://budget")),
    "skills load a file": Case(
        reads_at_most(1), "skills", lambda m, i: act("load", uri=f"skill://budget/notes/{i}.md")
    ),
    "skills search": Case(reads_at_most(1), "skills", lambda m, i: act("search", q="budget")),
    # The workspace and the whole board (projects, epics) in one Query of its BOARD# items.
    "board context": Case(reads_at_most(2), "board", lambda m, i: act("context")),
    "board createEpic": Case(one_write(), "board", lambda m, i: act("createEpic", title=f"epic {i}")),
    # The board: the queues' first pages (the token's own, the open one) and the policy; the board's one Query,
    # the task's read and the transaction; ...
    "task next": Case(reads_at_most(3), "task", lambda m, i: act("next")),
    # Narrowed to a project: the board's one BatchGetItem finds the project and the policy together.
    "task next, one project": Case(
        reads_at_most(3),
        "task",
        lambda m, i: act("next", projectId=m.project_id),
        token=lambda m: m.project_token,
        answered=lambda text: json.loads(text)["task"]["title"] == "in the project",
    ),
    "task claim": Case(pushed(requests_at_most(3)), "task", lambda m, i: act("claim", taskId=m.claimable[i])),
    "task progress": Case(
        pushed(requests_at_most(2)), "task", lambda m, i: act("progress", taskId=m.working[i], message="m")
    ),
    "task complete": Case(
        pushed(requests_at_most(3)),  # the policy, the task's read, the transaction (and the tasks it blocks, if any)
        "task",
        lambda m, i: act("complete", taskId=m.delivering[i], summary="s", criteria=[{"index": 0, "met": True}]),
    ),
    # Blocked on the human: the task's read and the transaction, then the console's inbox hears it (issue 36). On AWS
    # the human's notification is one more SendMessage (decision 0010); the loaded function has no notification secret.
    "task reportBlocker": Case(
        pushed(requests_at_most(2)),
        "task",
        lambda m, i: act("reportBlocker", taskId=m.blocking[i], questions=[f"which {i}?"]),
    ),
    # The comment and its count on the task: one transaction.
    "task comment": Case(pushed(one_write()), "task", lambda m, i: act("comment", taskId=m.plain[i], text=f"note {i}")),
    "task show": Case(reads_at_most(4), "task", lambda m, i: act("show", taskId=m.plain[i])),
    "task list, filtered": Case(reads_at_most(1), "task", lambda m, i: act("list", query="plain", status="ready")),
    "task propose": Case(pushed(requests_at_most(3)), "task", lambda m, i: act("propose", title=f"proposed {i}")),
    # The agent repo (decision 0009): the record's read, then what the action needs, then one transaction.
    "agent load": Case(  # record, prompt, profiles, memory index, briefs; the session's transaction
        requests_at_most(6), "agent", lambda m, i: act("load", agent=m.agent_id)
    ),
    "agent recall by name": Case(
        reads_at_most(2), "agent", lambda m, i: act("recall", agent=m.agent_id, name="budget-note")
    ),
    "agent recall, words": Case(  # the record, the index's one Query, one BatchGetItem of bodies
        reads_at_most(3), "agent", lambda m, i: act("recall", agent=m.agent_id, query="budget words")
    ),
    "agent remember, append": Case(
        requests_at_most(2),
        "agent",
        lambda m, i: act(
            "remember", agent=m.agent_id, session=m.agent_session, name="budget-note", mode="append", body=f"more {i}"
        ),
    ),
    "agent remember, create": Case(
        requests_at_most(2),
        "agent",
        lambda m, i: act(
            "remember",
            agent=m.agent_id,
            session=m.agent_session,
            name=f"new-{i}",
            type="user",
            description="d",
            body="b",
        ),
    ),
    "agent updateBrief": Case(  # the record, the brief as read, the transaction
        requests_at_most(3),
        "agent",
        lambda m, i: act(
            "updateBrief",
            agent=m.agent_id,
            session=m.agent_session,
            name="budget-brief",
            body=f"v{i + 2}",
            expectedRevision=i + 1,
        ),
    ),
    "agent getBrief": Case(
        reads_at_most(2), "agent", lambda m, i: act("getBrief", agent=m.agent_id, name="budget-brief")
    ),
    "agent activity": Case(reads_at_most(2), "agent", lambda m, i: act("activity", agent=m.agent_id)),
    "skills delete a file": Case(
        requests_at_most(2), "skills", lambda m, i: act("delete", uri=f"skill://budget/trash/{i}.md")
    ),
    "skills load, shared into the workspace": Case(
        reads_at_most(2), "skills", lambda m, i: act("load", uri="skill://shared-0"), token=lambda m: m.guest_token
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_action_sends_no_more_aws_requests_than_its_budget(made, name):
    case = CASES[name]
    sent = []
    for i in range(CALLS):
        text, requests, _ = made.handler.call(case.token(made), case.tool, case.arguments(made, i))
        assert case.answered(text), text[:300]
        sent.append(requests)
    for requests in sent[1:]:  # the first call warms up
        assert case.goal.met(requests), f"{name}: {dict(requests)} is over the budget ({case.goal.text})"


def test_a_known_bearer_token_costs_one_write_per_call(made):
    """One UpdateItem resolves the token and counts the call against its rate limit; the first call of a minute
    opens the minute with a second."""
    for _ in range(CALLS):
        _, _, auth = made.handler.call(made.seeded.agent_token, "help", {})
    assert set(auth) == {"DynamoDB UpdateItem"} and auth["DynamoDB UpdateItem"] in (1, 2), auth


# -- a dequeue does not notice how long the queue is ---------------------------------------------------------


class _Recorder:
    """Stands in for the DynamoDB client under a TaskStore: keeps the transactions instead of sending them."""

    def __init__(self) -> None:
        self.transactions: list[list[dict[str, Any]]] = []
        self.numbers = 0

    def update_item(self, **request: Any) -> dict[str, Any]:
        """The workspace's identifier counter: counted here, summed into the table after."""
        self.numbers += 1
        return {"Attributes": {"taskNumbers": {"N": str(self.numbers)}}}

    def transact_write_items(self, TransactItems: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 (boto3's)
        self.transactions.append(TransactItems)
        return {}


def fill_queue(runtime: Runtime, actor: Actor, count: int) -> None:
    """`count` queued tasks, made as `task create` makes them, written in bulk: each task item with its queue keys
    in BatchWriteItem, and the workspace's task counts as one summed update (moto copies the whole table for each
    transaction, which would take minutes)."""
    recorder = _Recorder()
    staging = Runtime(settings=runtime.settings, clients=runtime.clients, clock=runtime.clock)
    staging.tasks = TaskStore(recorder, runtime.settings.table_name)  # type: ignore[misc]
    for n in range(count):
        create_task(staging, actor, NewTask(title=f"queued {n}", body=""))
    puts = [
        {"PutRequest": {"Item": entry["Put"]["Item"]}}
        for items in recorder.transactions
        for entry in items
        if "Put" in entry
    ]
    updates = [entry["Update"] for items in recorder.transactions for entry in items if "Update" in entry]
    assert len(puts) + len(updates) == sum(map(len, recorder.transactions)), "TaskStore.create wrote something new"
    db, table = runtime.clients.dynamodb, runtime.settings.table_name
    for start in range(0, len(puts), 25):
        pending: dict[str, Any] = {table: puts[start : start + 25]}
        while pending:
            pending = db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
    if updates:  # the same ADD of 1 to the same count for every task: once, by their number
        summed = json.loads(json.dumps(updates[0]))
        for value in summed["ExpressionAttributeValues"].values():
            value["N"] = str(int(value["N"]) * len(updates))
        db.update_item(**summed)


def test_a_dequeue_sends_the_same_requests_whether_10_or_thousands_of_tasks_are_queued(made):
    workspace, issued = accounts.create_workspace(made.runtime.accounts, made.seeded.account_id, "Backlog", "")
    actor = Actor("agent", made.seeded.account_id, workspace.id, issued.record.id)
    sent: dict[int, list[Counter[str]]] = {}
    queued = 0
    for backlog in (10, BACKLOG):
        fill_queue(made.runtime, actor, backlog - queued)
        sent[backlog] = []
        for _ in range(CALLS):
            text, requests, _ = made.handler.call(issued.token, "task", act("get"))
            assert dequeued(text), f"the queue of {backlog} ran dry"
            fill_queue(made.runtime, actor, 1)  # the backlog stays at its size
            sent[backlog].append(requests)
        queued = backlog
    measured = [requests for calls in sent.values() for requests in calls[1:]]  # each size's first call warms up
    goal = pushed(requests_at_most(3))
    assert all(goal.met(requests) for requests in measured), f"over the budget ({goal.text}): {sent}"
    assert len({json.dumps(sorted(requests.items())) for requests in measured}) == 1, sent


# -- the board's size does not show in its reads -------------------------------------------------------------


def test_board_context_and_a_task_write_cost_the_same_with_the_most_epics_and_projects(made):
    """Agent-made epics and projects, each with the longest description, up to the caps: the context is still
    the workspace's read and one Query page of headings, and a task naming an epic reads just that epic."""
    from agent_workspace.domain.board import EPICS_MAX, PROJECTS_MAX
    from agent_workspace.domain.text import BODY_MAX
    from agent_workspace.services import board

    workspace, issued = accounts.create_workspace(made.runtime.accounts, made.seeded.account_id, "Big board", "")
    actor = Actor("agent", made.seeded.account_id, workspace.id, issued.record.id)
    # Made as the service makes them, written in bulk (moto copies the whole table for each transaction).
    recorder = _Recorder()
    staging = Runtime(settings=made.runtime.settings, clients=made.runtime.clients, clock=made.runtime.clock)
    staging.board = BoardStore(recorder, made.runtime.settings.table_name)  # type: ignore[misc]
    for n in range(PROJECTS_MAX):
        board.create_project(staging, actor, f"project {n}", "p" * BODY_MAX)
    epics = [board.create_epic(staging, actor, f"epic {n}", "e" * BODY_MAX) for n in range(EPICS_MAX)]
    puts = [{"PutRequest": {"Item": e["Put"]["Item"]}} for items in recorder.transactions for e in items if "Put" in e]
    assert len(puts) == 2 * (PROJECTS_MAX + EPICS_MAX), "a heading and its text each"
    db, table = made.runtime.clients.dynamodb, made.runtime.settings.table_name
    for start in range(0, len(puts), 25):
        pending: dict[str, Any] = {table: puts[start : start + 25]}
        while pending:
            pending = db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
    for i in range(CALLS):
        text, requests, _ = made.handler.call(issued.token, "board", act("context"))
        assert len(json.loads(text)["epics"]) == EPICS_MAX
        if i:
            assert reads_at_most(2).met(requests), f"board context: {dict(requests)} is over <= 2 DynamoDB reads"
        arguments = act("propose", title=f"epic task {i}", epicId=epics[-1].id)
        text, requests, _ = made.handler.call(issued.token, "task", arguments)
        assert json.loads(text)["epicId"] == epics[-1].id
        if i:  # the short identifier, the board's one BatchGetItem, the transaction
            goal = pushed(requests_at_most(3))
            assert goal.met(requests), f"task propose: {dict(requests)} is over {goal.text}"


# -- tasks named for one token cost another nothing -------------------------------------------------------------

NAMED = 10_000  # tasks the human named for one agent token; another token's queue must not read them


def name_tasks_for(runtime: Runtime, actor: Actor, token_id: str, count: int) -> None:
    """`count` ready tasks the human assigned to `token_id`, as the store itemises them (`task_item`), written in
    bulk: a BatchWriteItem of 25 items per request, not `count` transactions (moto copies the table for each)."""
    now = iso(runtime.clock())
    items = [
        to_item(
            task_item(
                Task.new(
                    id=new_id(),
                    workspace_id=actor.workspace_id,
                    by="human",
                    now=now,
                    title=f"named {n}",
                    body="",
                    assignee="agent",
                    assigned_token=token_id,
                    column="ready",
                )
            )
        )
        for n in range(count)
    ]
    db, table = runtime.clients.dynamodb, runtime.settings.table_name
    for start in range(0, len(items), 25):
        pending: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]}
        while pending:
            pending = db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


def test_tasks_named_for_another_token_cost_a_token_next_and_dequeue_nothing(made):
    """10,000 ready tasks named for token A: token B's `next` and dequeue read its own queue and the open one, one
    bounded page each, and never see A's tasks."""
    workspace, named_for = accounts.create_workspace(made.runtime.accounts, made.seeded.account_id, "Named", "")
    other = accounts.issue_token(made.runtime.accounts, named_for.record.kind, made.seeded.account_id, workspace.id)
    actor = Actor("human", made.seeded.account_id, workspace.id, None)
    name_tasks_for(made.runtime, actor, named_for.record.id, NAMED)
    fill_queue(made.runtime, Actor("agent", made.seeded.account_id, workspace.id, other.record.id), CALLS)
    nexts, gets = [], []
    for _ in range(CALLS):
        text, requests, _ = made.handler.call(other.token, "task", act("next"))
        assert json.loads(text)["task"]["title"].startswith("queued"), text[:300]
        nexts.append(requests)
        text, requests, _ = made.handler.call(other.token, "task", act("get"))
        assert json.loads(text)["title"].startswith("queued"), text[:300]
        gets.append(requests)
    text, requests, _ = made.handler.call(other.token, "task", act("get"))
    assert json.loads(text) is None, "token B took a task named for token A"
    assert reads_at_most(3).met(requests), requests
    for requests in nexts[1:]:
        assert reads_at_most(3).met(requests), f"next: {dict(requests)}"
    for requests in gets[1:]:
        assert pushed(requests_at_most(3)).met(requests), f"dequeue: {dict(requests)}"
    text, _, _ = made.handler.call(named_for.token, "task", act("get"))
    assert json.loads(text)["title"].startswith("named"), "token A's named tasks are still its to take"
