"""Isolation, as a matrix: every MCP action and every REST route, called with the tokens that must not reach a
victim's data, reads nothing of it and changes nothing of it.

One victim world per module: account A with workspace W1 holding one of everything (a task with attachments, a
message, a cron template, a pending question, memory, a skill shared into W3, an event with a subscription and a
publication, a pano doc with a comment and files, a shared site with a running, a queued and a pending call), W2
(another workspace of A) and account B. Every piece of A's content carries SECRET, so "nothing readable" is one
substring check; every id of A is listed, so an id the caller did not send itself must not show up either.

The tables below are keyed by what the server serves: `ACTIONS` by (tool, action) of `REGISTRY`, `ROUTES` by the
path template of every `/api` route of `create_app`. A new action or route without an entry fails its own case.

Pano docs and site tools (and publishing an account's events) are account-wide by design (README: "Pano",
"Site tools", "Events"): another workspace of the same account may read and write them. Those cases assert that
documented exception explicitly, writing to a doc of their own so the victim's stays as it was.
"""

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from mcp_types.methods import SPEC_CLIENT_METHODS

from agent_workspace.app import create_app
from agent_workspace.config import Settings
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import WorkspaceError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Task
from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.local.stack import local_runtime
from agent_workspace.mcp_server.dispatch import ToolOutcome, dispatch
from agent_workspace.mcp_server.server import workspace_server
from agent_workspace.runtime import Runtime
from agent_workspace.services import (
    accounts,
    agent_briefs,
    agent_memory,
    agent_profiles,
    agent_sessions,
    agents,
    board,
    channel,
    elicitations,
    events,
    memory,
    pano,
    site_tools,
    skills,
    task_board,
    tasks,
)
from agent_workspace.services.tasks import NewTask
from agent_workspace.store.clients import AwsClients
from agent_workspace.store.schedules import schedule_name
from agent_workspace.store.waits import Lease
from agent_workspace.tool_registry import Call
from agent_workspace.tools import REGISTRY
from agent_workspace.tools.agent import PERSON_ONLY
from agent_workspace.tools.task import AttachmentIn
from agent_workspace.workers import fan_out
from tests.support import LiveServer, b64, bearer, connect_app

SECRET = f"victim-secret-{secrets.token_hex(6)}"  # in every piece of A's content, never in an attacker's payload
SITE = "https://victim-site.example"
EVENT_NAME = "victim_done"
MEMORY_NAME = "deploys.md"
SKILL_NAME = "victim-skill"
SKILL_FILE = "templates/entry.md"
BRANCH_SCHEMA = {
    "type": "object",
    "properties": {"branch": {"type": "string", "enum": ["main", "release"]}},
    "required": ["branch"],
}


def attachment(ident: str, filename: str, content: str) -> AttachmentIn:
    return AttachmentIn(id=ident, filename=filename, mimeType="text/plain", data=b64(content.encode()))


def attacker_file(ident: str = "attacker") -> dict[str, str]:
    return {"id": ident, "filename": f"{ident}.txt", "mimeType": "text/plain", "data": b64(b"attacker")}


# == the victim's world ===========================================================================


@dataclass(frozen=True)
class World:
    rt: Runtime
    http: httpx.Client  # to the app under uvicorn
    account_a: str
    w1: str  # the victim workspace
    w2: str  # another workspace of A, whose agent calls
    w3: str  # another workspace of A, that W1's skill is shared into
    w4: str  # another workspace of A nobody writes to: the wrong workspace in a path
    account_b: str
    wb: str  # B's workspace, whose agent calls
    wb_clean: str  # B's workspace nobody writes to: B's own workspace in a path
    agent_w1: str
    agent_w2: str
    agent_b: str
    human_a: str
    human_b: str
    human_b_token_id: str
    revoked_agent: str  # was an agent token of W1
    revoked_human: str  # was a human token of A
    agent_w1_token_id: str
    agent_w2_token_id: str
    human_a_token_id: str
    task_id: str
    template_id: str
    trigger_task_id: str
    message_id: str
    task_attachment_id: str
    message_attachment_id: str
    elicitation_id: str
    event_id: str
    subscription_id: str
    publication_id: str
    doc_id: str
    running_call_id: str
    queued_call_id: str
    pending_call_id: str
    project_id: str
    epic_id: str
    claimed_task_id: str  # a board task W1's agent holds under a live claim
    grant_id: str  # an app signed in to W1 (OAuth)
    agent_w1_other: str  # another agent token of W1: not the claimant
    permission_id: str  # a pending permission question of W1's channel (and W1 always allows VictimTool)
    agent_id: str  # an agent of A's repo: every workspace of A may use it, by design
    agent_session: str  # a load session of it, with a memory, a brief and a profile written
    a_workspaces: frozenset[str] = field(default_factory=frozenset)

    def actor(self) -> Actor:
        """W1's agent."""
        return Actor("agent", self.account_a, self.w1, self.agent_w1_token_id)

    def neighbour(self) -> Actor:
        """W2's agent."""
        return Actor("agent", self.account_a, self.w2, self.agent_w2_token_id)

    def ids_of_a(self) -> set[str]:
        """Every id and token of account A: none may show up for another account unless it sent it itself."""
        return {
            self.account_a,
            self.w1,
            self.w2,
            self.w3,
            self.w4,
            self.agent_w1,
            self.agent_w2,
            self.human_a,
            self.agent_w1_token_id,
            self.human_a_token_id,
            self.task_id,
            self.template_id,
            self.trigger_task_id,
            self.message_id,
            self.task_attachment_id,
            self.message_attachment_id,
            self.elicitation_id,
            self.event_id,
            self.subscription_id,
            self.agent_id,
            self.publication_id,
            self.doc_id,
            self.running_call_id,
            self.queued_call_id,
            self.pending_call_id,
            self.claimed_task_id,
            self.grant_id,
        }

    def ids_of_w1(self) -> set[str]:
        """What only W1 (and A's human) may see: another workspace of A sees neither these nor SECRET."""
        return self.ids_of_a() - {self.account_a, self.w2, self.event_id, self.doc_id, self.agent_w2, self.agent_id}


def build_world(rt: Runtime, http: httpx.Client) -> World:
    account_a, human_a = accounts.create_account(rt.accounts, "Victim account")
    w1, agent_w1 = accounts.create_workspace(rt.accounts, account_a, "Victim workspace", f"{SECRET} mission")
    w2, agent_w2 = accounts.create_workspace(rt.accounts, account_a, "Neighbour", "Another workspace of A")
    w3, _ = accounts.create_workspace(rt.accounts, account_a, "Shared into", "W1's skill is shared here")
    w4, _ = accounts.create_workspace(rt.accounts, account_a, "Untouched", "Only ever a wrong path")
    account_b, human_b = accounts.create_account(rt.accounts, "Attacker account")
    wb, agent_b = accounts.create_workspace(rt.accounts, account_b, "Attacker", "")
    wb_clean, _ = accounts.create_workspace(rt.accounts, account_b, "Attacker, untouched", "")
    revoked_agent = accounts.issue_token(rt.accounts, TokenKind.AGENT, account_a, w1.id)
    rt.accounts.revoke_token(account_a, w1.id, revoked_agent.record.id)
    revoked_human = accounts.issue_token(rt.accounts, TokenKind.HUMAN, account_a, None)
    rt.accounts.revoke_token(account_a, None, revoked_human.record.id)

    agent = Actor("agent", account_a, w1.id, agent_w1.record.id)
    human = Actor("human", account_a, w1.id, human_a.record.id)
    event = events.define_event(rt, account_a, EVENT_NAME, f"{SECRET} event")
    subscription = events.subscribe(rt, account_a, w1.id, event.id, f"{SECRET} trigger", f"{SECRET} trigger body")
    task_attachment_id, message_attachment_id = f"spec-{secrets.token_hex(4)}", f"reply-{secrets.token_hex(4)}"
    task = tasks.create_task(
        rt,
        agent,
        NewTask(
            title=f"{SECRET} task",
            body=f"{SECRET} body",
            assignee="human",
            attachments=(attachment(task_attachment_id, f"{SECRET}.txt", f"{SECRET} task file"),),
            event_id=event.id,
        ),
    )
    message = tasks.post_message(
        rt, human, task.id, f"{SECRET} message", [attachment(message_attachment_id, "r.txt", f"{SECRET} reply file")]
    )
    template = tasks.create_task(rt, human, NewTask(f"{SECRET} template", f"{SECRET} run", cron_schedule="30 * * * *"))
    question = elicitations.ask(rt, agent, task.id, f"{SECRET} which branch?", "form", BRANCH_SCHEMA, None, 3600)
    memory.save(rt, agent, MEMORY_NAME, f"{SECRET} memory, revision 1", None)
    memory.save(rt, agent, MEMORY_NAME, f"{SECRET} memory, revision 2", 1)
    memory.save(rt, agent, None, f"{SECRET} index: memory://{MEMORY_NAME}", None)
    skills.save(rt, agent, f"skill://{SKILL_NAME}/SKILL.md", f"---\ndescription: {SECRET} skill\n---\n# {SECRET}\n")
    skills.save(rt, agent, f"skill://{SKILL_NAME}/{SKILL_FILE}", f"{SECRET} skill file")
    skills.share(rt, w1.id, SKILL_NAME, w3.id)
    publication = events.publish(
        rt, agent, events.NewPublication(EVENT_NAME, f"{SECRET} published", task.id, ((f"{SECRET} q", "a"),))
    )
    # B's own account-wide data, so that B's listings show something: B's, never A's.
    attacker = Actor("agent", account_b, wb.id, agent_b.record.id)
    events.define_event(rt, account_b, "attacker_event", "attacker")
    events.publish(rt, attacker, events.NewPublication("attacker_event", "attacker publication"))
    pano.save(rt, attacker, None, "attacker doc", "attacker", None, None, [])
    assert drain_queue(rt, deliver=lambda message: True) == 2
    trigger = next(t for t in tasks.list_tasks(rt, w1.id, None, None, 200, None)["tasks"] if t["createdBy"] == "event")
    doc = pano.save(
        rt,
        agent,
        None,
        f"{SECRET} doc",
        f"# {SECRET}\n\n[plan](plan.txt)",
        "green",
        None,
        [attachment("plan", "plan.txt", f"{SECRET} plan")],
    )
    pano.comment(rt, account_a, w1.id, doc.id, f"{SECRET} comment")
    pano.attach(rt, agent, doc.id, [attachment("extra", "extra.txt", f"{SECRET} extra")])
    tool = {"inputSchema": {"type": "object"}, "description": f"{SECRET} tool"}
    site_tools.report_sites(
        rt,
        account_a,
        [
            {
                "origin": SITE,
                "title": f"{SECRET} site",
                "tools": [
                    {"name": "victim_read", "annotations": {"readOnlyHint": True}, **tool},
                    {"name": "victim_write", "annotations": {}, **tool},
                ],
            }
        ],
    )
    running = site_tools.start_call(rt, agent, task.id, SITE, "victim_read", {"q": f"{SECRET} running"})
    assert [c["id"] for c in anyio.run(site_tools.poll_calls, rt, account_a, "victim-browser", 0)] == [running.id]
    queued = site_tools.start_call(rt, agent, task.id, SITE, "victim_read", {"q": f"{SECRET} queued"})
    pending = site_tools.start_call(rt, agent, task.id, SITE, "victim_write", {"q": f"{SECRET} pending"})
    assert (queued.status, pending.status) == ("queued", "pending")
    project = board.create_project(rt, agent, f"{SECRET} project", f"{SECRET} description")
    epic = board.create_epic(rt, agent, f"{SECRET} epic", f"{SECRET} description")
    claimed = task_board.create(rt, agent, f"{SECRET} claimed", f"{SECRET} held", task_board.Fields(criteria=["c"]))
    task_board.link(rt, agent, task.id, "relates_to", claimed.id)  # a link for unlink to aim at
    task_board.claim(rt, agent, claimed.id)
    agent_w1_other = accounts.issue_token(rt.accounts, TokenKind.AGENT, account_a, w1.id)
    repo_agent, agent_session = furnished_agent(rt, agent, f"{SECRET} agent")
    channel.push(rt, w1.id, "reply", task.id, f"{SECRET} pushed")
    always, _ = channel.ask_permission(rt, agent, "victim-1", "VictimTool", f"{SECRET} d", f"{SECRET} p", None)
    channel.decide(rt, w1.id, always["id"], "always")
    permission, _ = channel.ask_permission(rt, agent, "victim-2", "OtherTool", f"{SECRET} d", f"{SECRET} p", None)
    grant_id, _ = anyio.run(connect_app, rt, w1.id, human_a.token)

    return World(
        rt=rt,
        http=http,
        account_a=account_a,
        w1=w1.id,
        w2=w2.id,
        w3=w3.id,
        w4=w4.id,
        account_b=account_b,
        wb=wb.id,
        wb_clean=wb_clean.id,
        agent_w1=agent_w1.token,
        agent_w2=agent_w2.token,
        agent_b=agent_b.token,
        human_a=human_a.token,
        human_b=human_b.token,
        human_b_token_id=human_b.record.id,
        revoked_agent=revoked_agent.token,
        revoked_human=revoked_human.token,
        agent_w1_token_id=agent_w1.record.id,
        agent_w2_token_id=agent_w2.record.id,
        human_a_token_id=human_a.record.id,
        task_id=task.id,
        template_id=template.id,
        trigger_task_id=trigger["id"],
        message_id=message.id,
        task_attachment_id=task_attachment_id,
        message_attachment_id=message_attachment_id,
        elicitation_id=question.id,
        event_id=event.id,
        subscription_id=subscription.id,
        publication_id=publication.id,
        doc_id=doc.id,
        running_call_id=running.id,
        queued_call_id=queued.id,
        pending_call_id=pending.id,
        project_id=project.id,
        epic_id=epic.id,
        claimed_task_id=claimed.id,
        grant_id=grant_id,
        agent_w1_other=agent_w1_other.token,
        permission_id=permission["id"],
        agent_id=repo_agent.id,
        agent_session=agent_session,
        a_workspaces=frozenset({w1.id, w2.id, w3.id, w4.id}),
    )


def furnished_agent(rt: Runtime, actor: Actor, name: str) -> tuple[Any, str]:
    """An agent of the repo with a secret prompt, memory, brief and profile, and a load session of it."""
    made = agents.create(rt, actor, name, None, f"{SECRET} description", f"{SECRET} prompt", None)
    _, session = agent_sessions.load(rt, actor, made.id, "codex", None, None, 32_000)
    agent_memory.remember(
        rt, actor, made.id, session.id, "victim-note", f"{SECRET} memory", "create", "user", f"{SECRET} note", None
    )
    agent_briefs.update_brief(
        rt, actor, made.id, "victim-brief", f"{SECRET} brief", session.id, f"{SECRET} d", None, None
    )
    agent_profiles.set_profile(rt, actor, made.id, "cursor", {"model": "m"}, f"{SECRET} addendum", None, session.id)
    return rt.agents.get(made.id, True), session.id


def drain_queue(rt: Runtime, deliver: Callable[[dict], bool]) -> int:
    """Take every queued publication off the events queue, running the fan-out on those `deliver` picks (and
    every notification, which sends nothing: no account here set any up)."""
    delivered = 0
    while True:
        page = rt.clients.sqs.receive_message(
            QueueUrl=rt.settings.events_queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", [])
        if not page:
            return delivered
        for message in page:
            body = json.loads(message["Body"])
            if body.get("type") == "notify":  # a question's notification: nobody here set any up
                assert fan_out.deliver_message(rt, body) == 0
            elif deliver(body):
                fan_out.deliver_message(rt, body)
                delivered += 1
            rt.clients.sqs.delete_message(QueueUrl=rt.settings.events_queue_url, ReceiptHandle=message["ReceiptHandle"])


def _without_links(value: Any) -> Any:
    """Presigned links are signed afresh on every read; everything else must compare equal."""
    if isinstance(value, dict):
        return {k: _without_links(v) for k, v in value.items() if k != "url"}
    if isinstance(value, list):
        return [_without_links(v) for v in value]
    return value


def _read(read: Callable[..., Any], *args: Any) -> Any:
    """A read's answer, or what refused it (a victim object that vanished must show as a change, not a crash)."""
    try:
        return read(*args)
    except WorkspaceError as error:
        return f"{type(error).__name__}: {error.message}"


def snapshot(w: World) -> dict[str, str]:
    """Everything of the victim another token could read or change, read back through the services and stores."""
    rt, a, w1 = w.rt, w.account_a, w.w1
    workspace = rt.accounts.get_workspace(a, w1)
    doc = rt.pano.get(a, w.doc_id)
    task_keys = [rt.tasks.get_attachment(w1, w.task_id, i) for i in (w.task_attachment_id, w.message_attachment_id)]
    publications, _ = rt.events.list_publications(a, 200, None, int(rt.clock().timestamp()))
    sections: dict[str, Any] = {
        "workspaces of A": sorted(ws.id for ws in rt.accounts.list_workspaces(a)),
        "W1": workspace and (workspace.summary(), workspace.task_counts),
        "tokens": [[t.id for t in rt.accounts.list_tokens(a, scope)] for scope in (None, w1)],
        "task": _read(tasks.get_task, rt, w1, w.task_id, True, 200, None),
        "template": _read(tasks.get_task, rt, w1, w.template_id, True, 200, None),
        "tasks of W1": tasks.list_tasks(rt, w1, None, None, 200, None),
        "task files": [ref and rt.blobs.read(ref.key) for ref in task_keys],
        "questions": elicitations.open_questions(rt, w1, None),
        "memory": memory.list_memories(rt, w1),
        "memory content": [
            _read(memory.load, rt, w1, name, r)
            for name, r in ((MEMORY_NAME, None), (MEMORY_NAME, 1), (MEMORY_NAME, 2), (None, None))
        ],
        "skills": [skills.list_skills(rt, ws) for ws in (w1, w.w3)],
        "skill": _read(skills.get_skill, rt, w1, SKILL_NAME),
        "skill file": _read(skills.get_file, rt, w1, SKILL_NAME, SKILL_FILE),
        "event": [e.public() for e in rt.events.list_events(a)],
        "subscriptions": [s.public() for s in rt.events.list_subscriptions(w1)],
        "publications of W1": [p.public() for p in publications if p.workspace_id == w1],
        "publishers in A": sorted({p.workspace_id for p in publications} - w.a_workspaces),
        "doc": _read(pano.read, rt, a, w.doc_id, True, True),
        "doc files": doc and [rt.blobs.read(f.ref.key) for f in doc.files],
        "sites": [(s.origin, s.title, [t.definition() for t in s.tools]) for s in rt.site_tools.sites(a)],
        "bridge last seen": rt.site_tools.last_seen(a),
        "site calls": site_tools.calls_of(rt, w1, None),
        "calls": [rt.site_tools.get_call(a, c) for c in (w.running_call_id, w.queued_call_id, w.pending_call_id)],
        "board": [rt.board.read(w1), rt.board.get_project(w1, w.project_id), rt.board.get_epic(w1, w.epic_id)],
        "agent": [rt.agents.get(w.agent_id, True), rt.agents.prompt(w.agent_id, 1)],
        "connected apps": rt.oauth.list_grants(a, w1),
        "schedules": [rt.schedules.get(name) for name in (schedule_name(w1, w.template_id), f"pano-{a}-{w.doc_id}")],
    }
    return {name: json.dumps(_without_links(value), sort_keys=True, default=repr) for name, value in sections.items()}


def assert_unchanged(w: World, before: dict[str, str]) -> None:
    after = snapshot(w)
    changed = {name: (before[name], after[name]) for name in before if before[name] != after[name]}
    assert not changed, f"the victim's data changed: {changed}"


def fingerprint(w: World) -> dict[str, str]:
    """Every stored item, object and schedule of the victim, raw, by key: one table scan, one bucket listing and
    one schedule listing, cheap enough to take after every case that may write.

    Kept: W1's partition, its skill's,
    W3's and W4's (nobody of A writes there during the matrix), and A's account partition except what another
    workspace of A changes by design (its own workspace record, its publications, pano docs other than the
    victim's). Token items are left out: their rate-limit counters move with every request.
    """
    mine = (f"WS#{w.w1}", f"WS#{w.w3}", f"WS#{w.w4}", f"SKILL#{w.w1}.", f"AGENT#{w.agent_id}", f"CHANNEL#{w.w1}")

    def kept(item: dict[str, Any]) -> bool:
        pk, sk = item["PK"]["S"], item["SK"]["S"]
        if pk.startswith(mine):
            return True
        if pk != f"ACCOUNT#{w.account_a}" or sk == f"WORKSPACE#{w.w2}":
            return False
        if sk.startswith("PUB#") and item.get("workspaceId", {}).get("S") == w.w2:
            return False
        if sk.startswith("AGENTSLUG#") and item["agentId"]["S"] != w.agent_id:
            return False  # agents another workspace of A made, by design (and the scratch agents of this matrix)
        return not sk.startswith(("PANO#", "PANOCMT#")) or w.doc_id in sk

    items: dict[str, str] = {}
    request: dict[str, Any] = {"TableName": w.rt.settings.table_name}
    while True:
        page = w.rt.clients.dynamodb.scan(**request)
        for item in page["Items"]:
            if kept(item):
                if item["SK"]["S"] == "ACCOUNT":
                    item = {k: v for k, v in item.items() if k != "agents"}  # its count of agents, as above
                items[f"{item['PK']['S']} {item['SK']['S']}"] = json.dumps(item, sort_keys=True)
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    listing = w.rt.clients.s3.list_objects_v2(Bucket=w.rt.settings.attachments_bucket).get("Contents", [])
    assert len(listing) < 1000, "one page of the listing is all there is"
    for obj in listing:
        if w.w1 in obj["Key"] or w.doc_id in obj["Key"]:
            items[f"s3 {obj['Key']}"] = f"{obj['ETag']} {obj['Size']}"
    for armed in w.rt.schedules.list_armed():  # the template's next firing, the doc's expiry
        if w.w1 in armed.name or w.doc_id in armed.name:
            items[f"schedule {armed.name}"] = f"{armed.fire_at.isoformat()} {json.dumps(armed.input, sort_keys=True)}"
    return items


def assert_untouched(w: World, before: dict[str, str]) -> None:
    after = fingerprint(w)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the victim's stored data changed: {[(k, before.get(k), after.get(k)) for k in changed]}"


def leaked(text: str, ids: set[str], sent: str) -> list[str]:
    """Ids (or tokens) of the victim in `text` that the caller did not send itself."""
    return sorted(i for i in ids if i in text and i not in sent)


@pytest.fixture(scope="module")
def world(moto_endpoint: str, aws_clients: AwsClients) -> World:
    # A public URL, as every deployed stack has: setting an e-mail address mails a link to confirm it.
    rt = local_runtime(moto_endpoint, clients=aws_clients, public_url="http://127.0.0.1")
    with LiveServer(rt) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        yield build_world(rt, http)


@pytest.fixture(scope="module")
def baseline(world: World) -> dict[str, str]:
    """The victim's data, read through the services, as the matrix found it; the last test compares against it."""
    return snapshot(world)


@pytest.fixture(scope="module")
def stored(world: World, baseline: dict[str, str]) -> dict[str, str]:
    """The victim's stored items, objects and schedules as the matrix found them (taken with `baseline`, before any
    case); each case that gets past authentication and may write compares against them."""
    return fingerprint(world)


# == MCP: every action of every tool ==============================================================

OTHER_WORKSPACE, OTHER_ACCOUNT, REVOKED, HUMAN_ON_MCP = "other-workspace", "other-account", "revoked", "human-token"
MCP_KINDS = (OTHER_WORKSPACE, OTHER_ACCOUNT, REVOKED, HUMAN_ON_MCP)


@dataclass(frozen=True)
class ActionCase:
    """How to aim one action at the victim: its payloads (each run in turn), and what the victim's id means.

    `by_id`: the payloads name an object of the victim by id, so a caller it is not shared with gets a tool
    error (a name-based action, like memory or skills, answers the caller's own, empty, namespace instead).
    `shared`: account-wide by design; another workspace of the same account may use it, and this checks that
    it did (run against a doc of its own when `fresh_doc`).
    `undone_by`: the action of the same tool whose case's payloads remove what this one's made in the caller's own
    namespace, run right after it; so a later by-name read of the victim's object (resources/read) finds nothing of
    the caller's either, whichever order or worker the matrix runs in.
    """

    payloads: Callable[[World], list[dict[str, Any]]]
    by_id: bool = False
    shared: Callable[[World, ToolOutcome], None] | None = None
    fresh_doc: bool = False
    fresh_agent: bool = False  # like fresh_doc: a same-account write aims at a scratch agent
    undone_by: str | None = None


def _succeeded(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error, outcome.text


def _reads_secret(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error and SECRET in outcome.text, outcome.text


def _doc_saved_by_w2(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error, outcome.text
    doc = w.rt.pano.get(w.account_a, w.doc_id)
    assert (doc.title, doc.updated_by, doc.revision) == ("attacker", w.w2, 2)


def _doc_commented_by_w2(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error, outcome.text
    assert [c.workspace_id for c in w.rt.pano.comments(w.account_a, w.doc_id)] == [w.w2]


def _doc_attached_by_w2(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error, outcome.text
    assert "attacker.txt" in {f.name for f in w.rt.pano.get(w.account_a, w.doc_id).files}


def _doc_deleted_by_w2(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error, outcome.text
    assert w.rt.pano.get(w.account_a, w.doc_id) is None


def _published_by_w2(w: World, outcome: ToolOutcome) -> None:
    assert not outcome.is_error, outcome.text
    found, _ = w.rt.events.list_publications(w.account_a, 200, None, int(w.rt.clock().timestamp()))
    assert any(p.workspace_id == w.w2 and p.payload == "attacker" for p in found)


ACTIONS: dict[tuple[str, str], ActionCase] = {
    ("task", "create"): ActionCase(lambda w: [{"title": "attacker", "body": "attacker", "eventId": w.event_id}]),
    ("task", "get"): ActionCase(
        lambda w: [{"taskId": w.task_id, "includeConversation": True}, {"taskId": w.template_id}], by_id=True
    ),
    ("task", "updateStatus"): ActionCase(lambda w: [{"taskId": w.task_id, "status": "rejected"}], by_id=True),
    ("task", "reply"): ActionCase(
        lambda w: [
            {"taskId": w.task_id, "text": "attacker"},
            {"taskId": w.task_id, "text": "attacker", "attachments": [attacker_file()]},
        ],
        by_id=True,
    ),
    ("task", "elicit"): ActionCase(
        lambda w: [
            {
                "taskId": w.task_id,
                "message": "attacker?",
                "mode": "url",
                "url": "https://attacker.example",
                "timeoutSeconds": 1,
            },
            {"taskId": w.task_id, "elicitationId": w.elicitation_id},
        ],
        by_id=True,
    ),
    ("task", "getAttachment"): ActionCase(
        lambda w: [
            {"taskId": w.task_id, "attachmentId": w.task_attachment_id, "format": "base64"},
            {"taskId": w.task_id, "attachmentId": w.message_attachment_id, "format": "url"},
        ],
        by_id=True,
    ),
    ("memory", "load"): ActionCase(lambda w: [{"name": MEMORY_NAME}, {"name": MEMORY_NAME, "revision": 1}, {}]),
    ("memory", "save"): ActionCase(
        lambda w: [{"name": MEMORY_NAME, "content": "attacker"}, {"content": "attacker", "expectedRevision": 1}],
        undone_by="delete",
    ),
    ("memory", "delete"): ActionCase(lambda w: [{"name": MEMORY_NAME}, {}]),
    ("skills", "search"): ActionCase(lambda w: [{}, {"q": "victim"}]),
    ("skills", "load"): ActionCase(
        lambda w: [{"uri": f"skill://{SKILL_NAME}"}, {"uri": f"skill://{SKILL_NAME}/{SKILL_FILE}"}]
    ),
    ("skills", "save"): ActionCase(
        lambda w: [
            {"uri": f"skill://{SKILL_NAME}/{SKILL_FILE}", "content": "attacker"},
            {"uri": f"skill://{SKILL_NAME}/SKILL.md", "content": "---\ndescription: attacker\n---\n"},
        ],
        undone_by="delete",
    ),
    ("skills", "delete"): ActionCase(
        lambda w: [{"uri": f"skill://{SKILL_NAME}/{SKILL_FILE}"}, {"uri": f"skill://{SKILL_NAME}"}]
    ),
    ("workspace", "get"): ActionCase(lambda w: [{}]),
    # The board's task actions (a short identifier resolves in the caller's own workspace: test_task_board_mcp).
    ("task", "list"): ActionCase(lambda w: [{}, {"query": "victim"}, {"includeArchived": True, "status": "ready"}]),
    ("task", "show"): ActionCase(lambda w: [{"taskId": w.task_id}], by_id=True),
    ("task", "next"): ActionCase(lambda w: [{}]),
    ("task", "claim"): ActionCase(lambda w: [{"taskId": w.task_id}], by_id=True),
    ("task", "progress"): ActionCase(lambda w: [{"taskId": w.task_id, "message": "attacker"}], by_id=True),
    ("task", "complete"): ActionCase(
        lambda w: [{"taskId": w.task_id, "summary": "attacker", "criteria": [{"index": 0, "met": True}]}], by_id=True
    ),
    ("task", "reportBlocker"): ActionCase(lambda w: [{"taskId": w.task_id, "questions": ["attacker?"]}], by_id=True),
    ("task", "release"): ActionCase(lambda w: [{"taskId": w.task_id}], by_id=True),
    ("task", "propose"): ActionCase(
        lambda w: [
            {"title": "attacker", "parentId": w.task_id},
            {"title": "attacker", "projectId": w.project_id},
            {"title": "attacker", "assignee": w.agent_w1_token_id},
        ],
        by_id=True,
    ),
    ("task", "edit"): ActionCase(lambda w: [{"taskId": w.task_id, "title": "attacker"}], by_id=True),
    ("task", "archive"): ActionCase(lambda w: [{"taskId": w.task_id, "reason": "attacker"}], by_id=True),
    ("task", "link"): ActionCase(
        lambda w: [{"taskId": w.task_id, "type": "blocks", "otherTaskId": w.template_id}], by_id=True
    ),
    ("task", "unlink"): ActionCase(
        lambda w: [{"taskId": w.task_id, "type": "relates_to", "otherTaskId": w.claimed_task_id}], by_id=True
    ),
    ("task", "comment"): ActionCase(lambda w: [{"taskId": w.task_id, "text": "attacker"}], by_id=True),
    ("task", "suggest"): ActionCase(lambda w: [{"taskId": w.task_id, "summary": "attacker"}], by_id=True),
    ("task", "search"): ActionCase(lambda w: [{"query": "victim"}, {"query": SECRET}]),
    ("task", "fetch"): ActionCase(lambda w: [{"id": w.task_id}], by_id=True),
    # The agent repo is account-wide: another workspace of A uses A's agents by design.
    ("agent", "list"): ActionCase(lambda w: [{}], shared=_reads_secret),
    ("agent", "create"): ActionCase(lambda w: [{"name": "attacker", "prompt": "attacker"}], shared=_succeeded),
    ("agent", "update"): ActionCase(
        lambda w: [{"agent": w.agent_id, "description": "attacker"}], by_id=True, shared=_succeeded, fresh_agent=True
    ),
    ("agent", "updatePrompt"): ActionCase(
        lambda w: [{"agent": w.agent_id, "body": "attacker", "basedOn": 1}],
        by_id=True,
        shared=_succeeded,
        fresh_agent=True,
    ),
    ("agent", "promptVersions"): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True, shared=_succeeded),
    ("agent", "getPrompt"): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True, shared=_reads_secret),
    ("agent", "load"): ActionCase(
        lambda w: [{"agent": w.agent_id}], by_id=True, shared=_reads_secret, fresh_agent=True
    ),
    ("agent", "recall"): ActionCase(
        lambda w: [{"agent": w.agent_id}, {"agent": w.agent_id, "name": "victim-note"}],
        by_id=True,
        shared=_reads_secret,
    ),
    ("agent", "remember"): ActionCase(
        lambda w: [
            {
                "agent": w.agent_id,
                "session": w.agent_session,
                "name": "attacker",
                "body": "attacker",
                "type": "user",
                "description": "attacker",
            },
            {
                "agent": w.agent_id,
                "session": w.agent_session,
                "name": "victim-note",
                "body": "attacker",
                "mode": "append",
            },
        ],
        by_id=True,
        shared=_succeeded,
        fresh_agent=True,
    ),
    ("agent", "forget"): ActionCase(
        lambda w: [{"agent": w.agent_id, "session": w.agent_session, "name": "victim-note", "reason": "attacker"}],
        by_id=True,
        shared=_succeeded,
        fresh_agent=True,
    ),
    ("agent", "activity"): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True, shared=_succeeded),
    ("agent", "profiles"): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True, shared=_reads_secret),
    ("agent", "setProfile"): ActionCase(
        lambda w: [{"agent": w.agent_id, "harness": "cursor", "addendum": "attacker"}],
        by_id=True,
        shared=_succeeded,
        fresh_agent=True,
    ),
    ("agent", "deleteProfile"): ActionCase(
        lambda w: [{"agent": w.agent_id, "harness": "cursor"}], by_id=True, shared=_succeeded, fresh_agent=True
    ),
    ("agent", "briefs"): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True, shared=_reads_secret),
    ("agent", "getBrief"): ActionCase(
        lambda w: [{"agent": w.agent_id, "name": "victim-brief"}], by_id=True, shared=_reads_secret
    ),
    ("agent", "updateBrief"): ActionCase(
        lambda w: [
            {
                "agent": w.agent_id,
                "session": w.agent_session,
                "name": "victim-brief",
                "body": "attacker",
                "expectedRevision": 1,
            },
        ],
        by_id=True,
        shared=_succeeded,
        fresh_agent=True,
    ),
    ("agent", "renameBrief"): ActionCase(
        lambda w: [{"agent": w.agent_id, "session": w.agent_session, "name": "victim-brief", "newName": "attacker"}],
        by_id=True,
        shared=_succeeded,
        fresh_agent=True,
    ),
    ("agent", "checkout"): ActionCase(
        lambda w: [{"agent": w.agent_id, "snapshot": True}], by_id=True, shared=_reads_secret
    ),
    ("agent", "import"): ActionCase(lambda w: [{"name": f"attacker {secrets.token_hex(4)}"}], shared=_succeeded),
    ("agent", "export"): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True, shared=_reads_secret),
    **{("agent", action): ActionCase(lambda w: [{"agent": w.agent_id}], by_id=True) for action in PERSON_ONLY},
    ("board", "context"): ActionCase(lambda w: [{}]),
    ("board", "project"): ActionCase(lambda w: [{"projectId": w.project_id}], by_id=True),
    ("board", "epic"): ActionCase(lambda w: [{"epicId": w.epic_id}], by_id=True),
    ("board", "createProject"): ActionCase(lambda w: [{"title": "attacker", "description": "attacker"}]),
    ("board", "createEpic"): ActionCase(lambda w: [{"title": "attacker", "description": "attacker"}]),
    ("workspace", "publishEvent"): ActionCase(
        lambda w: [{"name": EVENT_NAME, "payload": "attacker", "faq": [{"q": "attacker?", "a": "attacker"}]}],
        shared=_published_by_w2,
    ),
    ("siteTools", "search"): ActionCase(lambda w: [{}, {"q": "victim"}], shared=_reads_secret),
    ("siteTools", "getDefinition"): ActionCase(
        lambda w: [{"site": SITE, "tool": "victim_write"}], by_id=True, shared=_reads_secret
    ),
    ("siteTools", "call"): ActionCase(
        lambda w: [
            {"taskId": w.task_id, "site": SITE, "tool": "victim_read", "arguments": {"q": "attacker"}},
            {"taskId": w.task_id, "site": SITE, "tool": "victim_write", "callId": w.pending_call_id},
            {"taskId": w.task_id, "site": SITE, "tool": "victim_read", "callId": w.running_call_id},
        ],
        by_id=True,
    ),
    ("pano", "save"): ActionCase(
        lambda w: [{"id": w.doc_id, "title": "attacker", "markdown": "attacker"}],
        by_id=True,
        shared=_doc_saved_by_w2,
        fresh_doc=True,
    ),
    ("pano", "read"): ActionCase(
        lambda w: [{"id": w.doc_id, "includeComments": True, "includeAttachments": True}],
        by_id=True,
        shared=_reads_secret,
    ),
    ("pano", "comment"): ActionCase(
        lambda w: [{"id": w.doc_id, "comment": "attacker"}], by_id=True, shared=_doc_commented_by_w2, fresh_doc=True
    ),
    ("pano", "attach"): ActionCase(
        lambda w: [{"id": w.doc_id, "files": [attacker_file()]}], by_id=True, shared=_doc_attached_by_w2, fresh_doc=True
    ),
    ("pano", "delete"): ActionCase(lambda w: [{"id": w.doc_id}], by_id=True, shared=_doc_deleted_by_w2, fresh_doc=True),
}

REGISTERED = [(tool.name, action.name) for tool in REGISTRY for action in tool.actions]  # `help` is not an action here
READ_ONLY = {(tool.name, action.name) for tool in REGISTRY for action in tool.actions if action.read_only}


async def act(w: World, token: str, tool: str, action: str, payload: dict[str, Any]) -> ToolOutcome:
    """One tool call through the dispatcher as the endpoint makes it; a wait (elicit, call) returns at once."""
    principal = w.rt.accounts.resolve_token(hash_token(token))
    assert principal is not None
    call = Call(principal, w.rt, "isolation-matrix", deadline=time.monotonic())
    return await dispatch(REGISTRY, call, tool, {"action": action, "payload": payload})


def mcp_over_http(w: World, token: str, tool: str, action: str, payload: dict[str, Any]) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"action": action, "payload": payload}},
    }
    headers = {
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    return w.http.post("/mcp", json=body, headers=headers)


def fresh_doc(w: World) -> str:
    """A doc of W1 for a same-account write that is allowed by design, so the victim's own doc stays as it is."""
    doc = pano.save(
        w.rt,
        w.actor(),
        None,
        f"{SECRET} scratch",
        "[plan](plan.txt)",
        None,
        None,
        [attachment("plan", "plan.txt", f"{SECRET} scratch plan")],
    )
    return doc.id


def test_every_action_in_the_table_is_served():
    assert sorted(set(ACTIONS) - set(REGISTERED)) == []


MCP_MATRIX = [(tool, action, kind) for tool, action in REGISTERED for kind in MCP_KINDS]


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "action", "kind"), MCP_MATRIX, ids=[f"{t}.{a}/{k}" for t, a, k in MCP_MATRIX])
async def test_mcp_action(world: World, stored: dict[str, str], tool: str, action: str, kind: str):
    case = ACTIONS.get((tool, action))
    assert case is not None, f"no isolation case for MCP action {tool}.{action}: add one to ACTIONS"
    w = world
    payload = case.payloads(w)[0]
    if kind == REVOKED:  # refused before any action runs: the last test checks that nothing changed
        assert w.rt.accounts.resolve_token(hash_token(w.revoked_agent)) is None
        response = mcp_over_http(w, w.revoked_agent, tool, action, payload)
        assert response.status_code == 401, response.text
        assert SECRET not in response.text
        return
    if kind == HUMAN_ON_MCP:
        response = mcp_over_http(w, w.human_a, tool, action, payload)
        assert response.status_code == 403, response.text
        assert SECRET not in response.text
        return
    if kind == OTHER_WORKSPACE and case.shared is not None:
        # The documented exception: account-wide, so the neighbour workspace reaches it.
        target = replace(w, doc_id=fresh_doc(w)) if case.fresh_doc else w
        if case.fresh_agent:
            # The neighbour writes under a session of its own: a session belongs to the connection that loaded it.
            scratch, _ = furnished_agent(w.rt, w.actor(), f"scratch {secrets.token_hex(4)}")
            _, session = agent_sessions.load(w.rt, w.neighbour(), scratch.id, "codex", None, None, 32_000)
            target = replace(target, agent_id=scratch.id, agent_session=session.id)
        for payload in case.payloads(target):
            case.shared(target, await act(w, w.agent_w2, tool, action, payload))
        drain_queue(w.rt, deliver=lambda message: False)  # a neighbour's publication is not W1's to receive here
    else:
        token, ids = (w.agent_w2, w.ids_of_w1()) if kind == OTHER_WORKSPACE else (w.agent_b, w.ids_of_a())
        for payload in case.payloads(w):
            outcome = await act(w, token, tool, action, payload)
            where = f"{tool}.{action} {payload} as {kind}: {outcome.text}"
            assert SECRET not in outcome.text, where
            assert leaked(outcome.text, ids, json.dumps(payload)) == [], where
            if case.by_id:
                assert outcome.is_error, where
        if case.undone_by is not None:
            for payload in ACTIONS[(tool, case.undone_by)].payloads(w):
                await act(w, token, tool, case.undone_by, payload)
        if (tool, action) not in READ_ONLY:
            # What another account publishes is fanned out within that account only: deliver it and see.
            drain_queue(w.rt, deliver=lambda message: message["accountId"] != w.account_a)
    if (tool, action) not in READ_ONLY:  # a read is covered by the check after the whole matrix
        assert_untouched(w, stored)


# == MCP: the resource methods and the Agent Skills extension =====================================


# Each case: the method and its params aimed at the victim. `by_id`: the answer must be an error; `shared`: what
# another workspace of A reaches by design (the account's pano) instead.
@dataclass(frozen=True)
class MethodCase:
    method: str
    params: Callable[[World], dict[str, Any]]
    by_id: bool = False
    shared_by_design: bool = False


METHOD_CASES = {
    "resources/list": MethodCase("resources/list", lambda w: {}),
    "resources/templates/list": MethodCase("resources/templates/list", lambda w: {}),
    "resources/read skill": MethodCase(
        "resources/read", lambda w: {"uri": f"skill://{SKILL_NAME}/SKILL.md"}, by_id=True
    ),
    "resources/read skill file": MethodCase(
        "resources/read", lambda w: {"uri": f"skill://{SKILL_NAME}/{SKILL_FILE}"}, by_id=True
    ),
    "resources/read memory index": MethodCase("resources/read", lambda w: {"uri": "memory://MEMORY.md"}, by_id=True),
    "resources/read memory": MethodCase("resources/read", lambda w: {"uri": f"memory://{MEMORY_NAME}"}, by_id=True),
    "resources/read task attachment": MethodCase(
        "resources/read", lambda w: {"uri": f"task://{w.task_id}/attachments/{w.task_attachment_id}"}, by_id=True
    ),
    "resources/read message attachment": MethodCase(
        "resources/read", lambda w: {"uri": f"task://{w.task_id}/attachments/{w.message_attachment_id}"}, by_id=True
    ),
    "resources/read pano doc": MethodCase(
        "resources/read", lambda w: {"uri": f"pano://{w.doc_id}"}, by_id=True, shared_by_design=True
    ),
    "skills/list": MethodCase("skills/list", lambda w: {}),
    "skills/get": MethodCase("skills/get", lambda w: {"uri": f"skill://{SKILL_NAME}/SKILL.md"}, by_id=True),
}
METHOD_MATRIX = [(name, kind) for name in METHOD_CASES for kind in MCP_KINDS]


def mcp_method(w: World, token: str, method: str, params: dict[str, Any]) -> httpx.Response:
    """One JSON-RPC request over the stateless transport, no initialize first."""
    headers = {
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    return w.http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers)


def test_every_method_of_the_server_beyond_tools_and_prompts_has_a_case():
    server = workspace_server()
    candidates = SPEC_CLIENT_METHODS | {"skills/list", "skills/get", "resources/directory/read"}
    served = {method for method in candidates if server.get_request_handler(method) is not None}
    # logging/setLevel reads and keeps nothing: there is no data of anyone's behind it.
    beyond = served - {"ping", "server/discover", "tools/list", "tools/call", "prompts/list", "prompts/get"}
    beyond -= {"logging/setLevel"}
    assert beyond == {case.method for case in METHOD_CASES.values()}


@pytest.mark.parametrize(("name", "kind"), METHOD_MATRIX, ids=[f"{n}/{k}" for n, k in METHOD_MATRIX])
def test_mcp_method(world: World, name: str, kind: str):
    case = METHOD_CASES[name]
    w = world
    params = case.params(w)
    sent = json.dumps(params)
    if kind in (REVOKED, HUMAN_ON_MCP):
        response = mcp_method(w, w.revoked_agent if kind == REVOKED else w.human_a, case.method, params)
        assert response.status_code == (401 if kind == REVOKED else 403), response.text
        assert SECRET not in response.text
        return
    token, ids = (w.agent_w2, w.ids_of_w1()) if kind == OTHER_WORKSPACE else (w.agent_b, w.ids_of_a())
    response = mcp_method(w, token, case.method, params)
    assert response.status_code == 200, response.text
    answer = response.json()
    where = f"{name} {params} as {kind}: {response.text[:2000]}"
    if kind == OTHER_WORKSPACE and case.shared_by_design:
        assert SECRET in answer["result"]["contents"][0]["text"], where  # the account's pano, by design
        return
    if case.by_id:
        assert "error" in answer and answer["error"]["code"] == -32602, where
    if kind == OTHER_WORKSPACE and case.method == "resources/list":  # the account's pano docs are listed, by design
        others = [r for r in answer["result"]["resources"] if not r["uri"].startswith("pano://")]
        assert SECRET not in json.dumps(others), where
        assert leaked(json.dumps(others), ids, sent) == [], where
        return
    assert SECRET not in response.text, where
    assert leaked(response.text, ids, sent) == [], where


# == REST: every /api route =======================================================================

OTHER_ACCOUNT_HUMAN = "other-account"
AGENT_W1, AGENT_W2 = "agent-token-w1", "agent-token-w2"
REVOKED_HUMAN, NO_TOKEN = "revoked", "no-token"
OWN_WORKSPACE_PATH = "other-account-own-workspace"  # B's human, B's workspace in the path, A's object ids
WRONG_WORKSPACE_PATH = "same-account-other-workspace"  # A's human, another workspace of A in the path
REST_KINDS = (
    OTHER_ACCOUNT_HUMAN,
    AGENT_W1,
    AGENT_W2,
    REVOKED_HUMAN,
    NO_TOKEN,
    OWN_WORKSPACE_PATH,
    WRONG_WORKSPACE_PATH,
)


@dataclass(frozen=True)
class RouteCase:
    """Path parameters aimed at the victim (per method where one template means different objects), a valid
    body per method that takes one, query parameters, and for an account-scoped listing what B sees in it."""

    params: Callable[[World], dict[str, str]] = lambda w: {}
    by_method: dict[str, Callable[[World], dict[str, str]]] = field(default_factory=dict)
    bodies: dict[str, Callable[[World], Any]] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    b_sees: Callable[[World], str] | None = None  # account-scoped GET: something of B's that B's answer shows
    agent_route: bool = False  # called with an agent token (the channel): a human is refused, W2's agent sees W2's
    names_victim: bool = False  # the body names the victim's workspace: another account gets 404, as for a path

    def path_params(self, w: World, method: str) -> dict[str, str]:
        return {**self.params(w), **self.by_method.get(method, lambda w: {})(w)}


def _w1(w: World) -> dict[str, str]:
    return {"workspace_id": w.w1}


def _agent(w: World, **more: str) -> dict[str, str]:
    return {"agent": w.agent_id, **more}


def _task(w: World) -> dict[str, str]:
    return {"workspace_id": w.w1, "task_id": w.task_id}


ROUTES: dict[str, RouteCase] = {
    "/api/workspaces": RouteCase(
        bodies={"POST": lambda w: {"title": "attacker", "mission": "attacker"}}, b_sees=lambda w: w.wb
    ),
    "/api/workspaces/{workspace_id}": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/tokens": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/tokens/{token_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "token_id": w.agent_w1_token_id}
    ),
    "/api/tokens": RouteCase(b_sees=lambda w: w.human_b_token_id),
    "/api/tokens/{token_id}": RouteCase(lambda w: {"token_id": w.human_a_token_id}),
    "/api/workspaces/{workspace_id}/tasks": RouteCase(
        _w1, bodies={"POST": lambda w: {"title": "attacker", "body": "attacker", "attachments": [attacker_file()]}}
    ),
    "/api/workspaces/{workspace_id}/tasks/{task_id}": RouteCase(
        _task,
        by_method={"DELETE": lambda w: {"task_id": w.template_id}},
        bodies={"PATCH": lambda w: {"status": "rejected"}},
    ),
    "/api/workspaces/{workspace_id}/tasks/{task_id}/runs": RouteCase(
        lambda w: {"workspace_id": w.w1, "task_id": w.template_id}
    ),
    "/api/workspaces/{workspace_id}/tasks/{task_id}/messages": RouteCase(
        _task, bodies={"POST": lambda w: {"text": "attacker", "attachments": [attacker_file()]}}
    ),
    "/api/workspaces/{workspace_id}/tasks/{task_id}/messages/{message_id}": RouteCase(
        lambda w: {**_task(w), "message_id": w.message_id}
    ),
    "/api/workspaces/{workspace_id}/tasks/{task_id}/attachments/{attachment_id}": RouteCase(
        lambda w: {**_task(w), "attachment_id": w.task_attachment_id}, query={"format": "base64"}
    ),
    "/api/workspaces/{workspace_id}/elicitations": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/elicitations/{elicitation_id}/answer": RouteCase(
        lambda w: {"workspace_id": w.w1, "elicitation_id": w.elicitation_id},
        bodies={"POST": lambda w: {"action": "accept", "content": {"branch": "release"}}},
    ),
    "/api/workspaces/{workspace_id}/memory": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/board": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/board/policy": RouteCase(_w1, bodies={"PUT": lambda w: {"supervised": True}}),
    "/api/workspaces/{workspace_id}/projects": RouteCase(_w1, bodies={"POST": lambda w: {"title": "attacker"}}),
    "/api/workspaces/{workspace_id}/board/tasks": RouteCase(_w1, bodies={"POST": lambda w: {"title": "attacker"}}),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}": RouteCase(
        _task, bodies={"PATCH": lambda w: {"title": "attacker", "priority": "urgent"}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/triage": RouteCase(
        _task, bodies={"POST": lambda w: {"decision": "decline"}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/review": RouteCase(
        _task, bodies={"POST": lambda w: {"decision": "approve"}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/release": RouteCase(_task),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/unblock": RouteCase(
        _task, bodies={"POST": lambda w: {"answers": ["attacker"], "comment": "attacker"}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/archive": RouteCase(
        _task, bodies={"POST": lambda w: {"reason": "attacker"}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/links": RouteCase(
        _task, bodies={"POST": lambda w: {"type": "blocks", "otherTaskId": w.template_id}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/links/{link_type}/{other_task_id}": RouteCase(
        lambda w: {**_task(w), "link_type": "relates_to", "other_task_id": w.claimed_task_id}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/comments": RouteCase(
        _task, bodies={"POST": lambda w: {"text": "attacker"}}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/suggestions/{suggestion_id}/accept": RouteCase(
        lambda w: {**_task(w), "suggestion_id": "0kGogHmaqvZ"}
    ),
    "/api/workspaces/{workspace_id}/board/tasks/{task_id}/suggestions/{suggestion_id}": RouteCase(
        lambda w: {**_task(w), "suggestion_id": "0kGogHmaqvZ"}
    ),
    "/api/workspaces/{workspace_id}/board/cycles": RouteCase(_w1, bodies={"POST": lambda w: {"title": "attacker"}}),
    "/api/workspaces/{workspace_id}/board/cycles/active": RouteCase(_w1, bodies={"PUT": lambda w: {"cycleId": None}}),
    "/api/workspaces/{workspace_id}/board/needs-you": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/projects/{project_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "project_id": w.project_id},
        bodies={"PATCH": lambda w: {"expectedRevision": 1, "memory": "attacker"}},
    ),
    "/api/workspaces/{workspace_id}/epics": RouteCase(_w1, bodies={"POST": lambda w: {"title": "attacker"}}),
    "/api/workspaces/{workspace_id}/epics/{epic_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "epic_id": w.epic_id}, bodies={"PATCH": lambda w: {"title": "attacker"}}
    ),
    "/api/workspaces/{workspace_id}/memory/{name}": RouteCase(lambda w: {"workspace_id": w.w1, "name": MEMORY_NAME}),
    "/api/workspaces/{workspace_id}/skills": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/skills/{name}": RouteCase(lambda w: {"workspace_id": w.w1, "name": SKILL_NAME}),
    "/api/workspaces/{workspace_id}/skills/{name}/files/{path}": RouteCase(
        lambda w: {"workspace_id": w.w1, "name": SKILL_NAME, "path": SKILL_FILE}
    ),
    "/api/workspaces/{workspace_id}/skills/{name}/shares": RouteCase(
        lambda w: {"workspace_id": w.w1, "name": SKILL_NAME}, bodies={"POST": lambda w: {"workspaceId": w.w3}}
    ),
    "/api/workspaces/{workspace_id}/skills/{name}/shares/{target_workspace_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "name": SKILL_NAME, "target_workspace_id": w.w3}
    ),
    "/api/events": RouteCase(
        bodies={"POST": lambda w: {"name": EVENT_NAME, "description": "attacker"}}, b_sees=lambda w: "attacker_event"
    ),
    "/api/events/{event_id}": RouteCase(lambda w: {"event_id": w.event_id}),
    "/api/published-events": RouteCase(b_sees=lambda w: "attacker publication"),
    "/api/workspaces/{workspace_id}/subscriptions": RouteCase(
        _w1, bodies={"POST": lambda w: {"eventId": w.event_id, "title": "attacker", "body": "attacker"}}
    ),
    "/api/workspaces/{workspace_id}/subscriptions/{subscription_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "subscription_id": w.subscription_id}
    ),
    "/api/agents": RouteCase(
        bodies={"POST": lambda w: {"name": f"attacker {secrets.token_hex(4)}"}}, b_sees=lambda w: '"agents":'
    ),
    "/api/agents/import": RouteCase(bodies={"POST": lambda w: {"name": f"attacker {secrets.token_hex(4)}"}}),
    "/api/agents/{agent}": RouteCase(_agent, bodies={"PATCH": lambda w: {"description": "attacker"}}),
    "/api/agents/{agent}/archived": RouteCase(_agent, bodies={"PUT": lambda w: {"on": True}}),
    "/api/agents/{agent}/prompt-lock": RouteCase(_agent, bodies={"PUT": lambda w: {"on": True}}),
    "/api/agents/{agent}/prompt": RouteCase(_agent, bodies={"POST": lambda w: {"body": "attacker", "basedOn": 1}}),
    "/api/agents/{agent}/prompt/versions": RouteCase(_agent),
    "/api/agents/{agent}/prompt/versions/{version}/restore": RouteCase(lambda w: _agent(w, version="1")),
    "/api/agents/{agent}/profiles": RouteCase(_agent),
    "/api/agents/{agent}/profiles/{harness}": RouteCase(
        lambda w: _agent(w, harness="cursor"), bodies={"PUT": lambda w: {"addendum": "attacker"}}
    ),
    "/api/agents/{agent}/briefs": RouteCase(_agent),
    "/api/agents/{agent}/briefs/{name}": RouteCase(
        lambda w: _agent(w, name="victim-brief"), bodies={"PUT": lambda w: {"body": "attacker", "expectedRevision": 1}}
    ),
    "/api/agents/{agent}/briefs/{name}/rename": RouteCase(
        lambda w: _agent(w, name="victim-brief"), bodies={"POST": lambda w: {"newName": "attacker"}}
    ),
    "/api/agents/{agent}/memories": RouteCase(_agent),
    "/api/agents/{agent}/memories/{name}": RouteCase(
        lambda w: _agent(w, name="victim-note"), bodies={"PUT": lambda w: {"body": "attacker", "mode": "append"}}
    ),
    "/api/agents/{agent}/memories/{name}/forget": RouteCase(
        lambda w: _agent(w, name="victim-note"), bodies={"POST": lambda w: {"reason": "attacker"}}
    ),
    "/api/agents/{agent}/memories/{name}/pinned": RouteCase(
        lambda w: _agent(w, name="victim-note"), bodies={"PUT": lambda w: {"pinned": True}}
    ),
    "/api/agents/{agent}/forgotten": RouteCase(_agent),
    "/api/agents/{agent}/forgotten/{memory_id}/restore": RouteCase(lambda w: _agent(w, memory_id=w.agent_id)),
    "/api/agents/{agent}/activity": RouteCase(_agent),
    "/api/agents/{agent}/export": RouteCase(_agent),
    "/api/agents/{agent}/checkout": RouteCase(_agent),
    "/api/agents/{agent}/shares": RouteCase(
        _agent, bodies={"POST": lambda w: {"account": w.account_b, "access": "edit", "memory": True}}
    ),
    "/api/agents/{agent}/shares/{account}": RouteCase(lambda w: _agent(w, account=w.account_b)),
    "/api/agents/{agent}/accept": RouteCase(_agent, bodies={"POST": lambda w: {"follow": True}}),
    "/api/agents/{agent}/credentials": RouteCase(_agent, bodies={"POST": lambda w: {"workspace": w.w1}}),
    "/api/agents/{agent}/transfer": RouteCase(_agent, bodies={"POST": lambda w: {"account": w.account_b}}),
    "/api/agents/{agent}/transfer/accept": RouteCase(_agent),
    "/api/agents/{agent}/transfer/decline": RouteCase(_agent),
    "/api/agents/transfer-offers": RouteCase(b_sees=lambda w: '"offers":'),
    "/api/channel/events": RouteCase(agent_route=True),
    "/api/channel/permissions": RouteCase(
        bodies={"POST": lambda w: {"requestId": "attacker", "toolName": "VictimTool"}}, agent_route=True
    ),
    "/api/workspaces/{workspace_id}/permissions": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/permissions/{question_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "question_id": w.permission_id},
        bodies={"POST": lambda w: {"decision": "allow"}},
    ),
    "/api/workspaces/{workspace_id}/permission-rules": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/permission-rules/{tool}": RouteCase(
        lambda w: {"workspace_id": w.w1, "tool": "VictimTool"}
    ),
    "/api/pano": RouteCase(b_sees=lambda w: "attacker doc"),
    "/api/pano/{doc_id}": RouteCase(lambda w: {"doc_id": w.doc_id}),
    "/api/pano/{doc_id}/comments": RouteCase(
        lambda w: {"doc_id": w.doc_id}, bodies={"POST": lambda w: {"comment": "attacker"}}
    ),
    "/api/bridge/sites": RouteCase(
        bodies={
            "PUT": lambda w: {"sites": [{"origin": SITE, "title": "attacker", "tools": [{"name": "victim_read"}]}]}
        },
        b_sees=lambda w: '"sites":',
    ),
    "/api/bridge/online": RouteCase(),
    "/api/notifications": RouteCase(
        bodies={"PATCH": lambda w: {"email": "attacker@example.com"}}, b_sees=lambda w: '"triggers":'
    ),
    "/api/workspaces/{workspace_id}/notifications": RouteCase(_w1, bodies={"PUT": lambda w: {"muted": True}}),
    "/api/notifications/push-key": RouteCase(b_sees=lambda w: '"publicKey":'),
    "/api/notifications/push-subscriptions": RouteCase(
        bodies={
            "POST": lambda w: {
                "endpoint": "http://127.0.0.1:9/push/attacker",
                "keys": {"p256dh": "B" + "A" * 86, "auth": "A" * 22},
            }
        },
        b_sees=lambda w: "[",
    ),
    "/api/notifications/push-subscriptions/{subscription_id}": RouteCase(lambda w: {"subscription_id": "0" * 32}),
    "/api/bridge/pending": RouteCase(b_sees=lambda w: '{"calls":[]}'),
    "/api/bridge/calls": RouteCase(query={"wait": "0"}, b_sees=lambda w: '{"calls":[]}'),
    "/api/bridge/calls/{call_id}/result": RouteCase(
        lambda w: {"call_id": w.running_call_id}, bodies={"POST": lambda w: {"result": {"attacker": True}}}
    ),
    # Any token may mint a push ticket for what it may hear: an agent only its own channel (the console topic is a
    # human's), another account's human not A's console (404, as for a path), and nothing is stored for either.
    "/api/push/tickets": RouteCase(
        bodies={"POST": lambda w: {"topic": "console", "workspaceId": w.w1}}, names_victim=True
    ),
    "/api/workspaces/{workspace_id}/site-calls": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/connected-apps": RouteCase(_w1),
    "/api/workspaces/{workspace_id}/connected-apps/{grant_id}": RouteCase(
        lambda w: {"workspace_id": w.w1, "grant_id": w.grant_id}
    ),
    # A pending sign-in belongs to no account until a person decides it; an unknown one is 404 for everyone.
    "/api/oauth/requests/{request_id}": RouteCase(
        lambda w: {"request_id": "no-such-request"}, bodies={"POST": lambda w: {"decision": "deny"}}
    ),
    "/api/workspaces/{workspace_id}/site-calls/{call_id}/decision": RouteCase(
        lambda w: {"workspace_id": w.w1, "call_id": w.pending_call_id},
        bodies={"POST": lambda w: {"decision": "always_allow"}},
    ),
}


def _api_routes() -> list[tuple[str, str, Any]]:
    """Every (method, path template, route) under /api, as the app serves them (no AWS call is made).

    FastAPI (>= 0.165) keeps an included router as one entry of `app.routes`; `iter_route_contexts` yields
    each of its routes as mounted, with its full path, methods and body field.
    """
    app = create_app(Runtime(Settings(), AwsClients("us-east-1")))
    found = [
        (method, route.path.replace(":path}", "}"), route)
        for route in iter_route_contexts(app.routes)
        if isinstance(route.original_route, APIRoute) and route.path.startswith("/api")
        for method in sorted(route.methods)
    ]
    assert found, "the app serves no /api route?"
    return found


API_ROUTES = _api_routes()
API_PATHS = {path for _, path, _ in API_ROUTES}


def _kinds_for(path: str) -> list[str]:
    """The path-confusion kinds only where a workspace id sits beside another id of the victim."""
    nested = "{workspace_id}" in path and path.count("{") > 1
    return [k for k in REST_KINDS if nested or k not in (OWN_WORKSPACE_PATH, WRONG_WORKSPACE_PATH)]


REST_MATRIX = [(method, path, kind) for method, path, _ in API_ROUTES for kind in _kinds_for(path)]


def test_every_route_in_the_table_is_served():
    assert sorted(set(ROUTES) - API_PATHS) == []


def test_every_route_that_takes_a_body_has_one_in_the_table():
    missing = [
        f"{method} {path}"
        for method, path, route in API_ROUTES
        if route.body_field is not None and method not in getattr(ROUTES.get(path), "bodies", {})
    ]
    assert missing == []


def rest_call(w: World, method: str, path: str, kind: str) -> tuple[httpx.Response, str]:
    case = ROUTES.get(path)
    assert case is not None, f"no isolation case for {method} {path}: add one to ROUTES"
    params = case.path_params(w, method)
    token = {
        OTHER_ACCOUNT_HUMAN: w.human_b,
        AGENT_W1: w.agent_w1,
        AGENT_W2: w.agent_w2,
        REVOKED_HUMAN: w.revoked_human,
        NO_TOKEN: None,
        OWN_WORKSPACE_PATH: w.human_b,
        WRONG_WORKSPACE_PATH: w.human_a,
    }[kind]
    if kind == OWN_WORKSPACE_PATH:
        params["workspace_id"] = w.wb_clean
    if kind == WRONG_WORKSPACE_PATH:
        params["workspace_id"] = w.w4
    url = path.format(**params)
    body = case.bodies[method](w) if method in case.bodies else None
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = w.http.request(method, url, params=case.query, json=body, headers=headers)
    return response, f"{url} {json.dumps(body)}"


@pytest.mark.parametrize(("method", "path", "kind"), REST_MATRIX, ids=[f"{m} {p}/{k}" for m, p, k in REST_MATRIX])
def test_rest_route(world: World, stored: dict[str, str], method: str, path: str, kind: str):
    w = world
    response, sent = rest_call(w, method, path, kind)
    where = f"{method} {sent} as {kind}: {response.status_code} {response.text}"
    if ROUTES[path].agent_route and kind not in (REVOKED_HUMAN, NO_TOKEN):
        if kind == AGENT_W1:
            return  # the victim's own agent, on its own channel
        assert SECRET not in response.text, where
        if kind == AGENT_W2:  # the neighbour's agent hears its own workspace's channel, nothing of W1's
            assert 200 <= response.status_code < 300, where
            assert leaked(response.text, w.ids_of_w1(), sent) == [], where
        else:
            assert response.status_code == 403, where
        if method != "GET":
            assert_untouched(w, stored)
        return
    assert SECRET not in response.text, where
    if kind in (REVOKED_HUMAN, NO_TOKEN):  # refused before any handler runs: the last test checks the victim
        assert response.status_code == 401, where
        assert response.headers["www-authenticate"].startswith("Bearer "), where
        return
    if kind in (AGENT_W1, AGENT_W2):
        assert response.status_code == 403, where
        return
    if kind == WRONG_WORKSPACE_PATH:
        assert response.status_code == 404, where
        assert leaked(response.text, w.ids_of_w1(), sent) == [], where
    elif "{" in path or ROUTES[path].names_victim:  # another account naming A's objects, in A's workspace or its own
        assert response.status_code == 404, where
        assert leaked(response.text, w.ids_of_a(), sent) == [], where
    else:  # account-scoped by design: B's own data, and nothing of A's
        assert 200 <= response.status_code < 300, where
        assert leaked(response.text, w.ids_of_a(), sent) == [], where
        b_sees = ROUTES[path].b_sees
        if method == "GET":
            assert b_sees is not None, f"GET {path} is account-scoped: say in ROUTES what B sees there"
            assert b_sees(w) in response.text, where
    if method != "GET":  # a read is covered by the check after the whole matrix
        assert_untouched(w, stored)


# == agent transfers (issue 32): an offer grants nothing; acceptance ends every share and session ================

AGENT_ROUTES = [(m, p) for m, p, _ in API_ROUTES if "{agent}" in p]


def _person_calls(w: World, token: str, agent_id: str, skip: tuple[str, ...] = ()) -> list[tuple[str, httpx.Response]]:
    """Every agent route but `skip`, aimed at `agent_id` with this person's token."""
    answers = []
    for method, path in AGENT_ROUTES:
        if path.endswith(skip) and skip:
            continue
        case = ROUTES[path]
        url = path.format(**(case.path_params(w, method) | {"agent": agent_id}))
        body = case.bodies[method](w) if method in case.bodies else None
        response = w.http.request(method, url, json=body, headers={"authorization": f"Bearer {token}"})
        answers.append((f"{method} {url}", response))
    return answers


def _scratch_agent(w: World, secret: str) -> str:
    a = {"authorization": f"Bearer {w.human_a}"}
    made = w.http.post("/api/agents", json={"name": f"handed {secrets.token_hex(4)}", "prompt": secret}, headers=a)
    assert made.status_code == 201, made.text
    agent_id: str = made.json()["id"]
    memory = {"body": secret, "type": "user", "description": "d"}
    assert w.http.put(f"/api/agents/{agent_id}/memories/kept", json=memory, headers=a).status_code == 200
    return agent_id


def test_a_pending_transfer_offer_grants_the_receiving_account_nothing(world: World):
    w = world
    agent_id = _scratch_agent(w, SECRET)
    a = {"authorization": f"Bearer {w.human_a}"}
    offered = w.http.post(f"/api/agents/{agent_id}/transfer", json={"account": w.account_b}, headers=a)
    assert offered.status_code == 200, offered.text
    for sent, response in _person_calls(w, w.human_b, agent_id, skip=("/transfer/accept", "/transfer/decline")):
        assert response.status_code == 404 and SECRET not in response.text, f"{sent}: {response.text}"
    found = w.rt.agents.get(agent_id, True)
    assert found is not None and found.account_id == w.account_a and found.offered_to == w.account_b
    assert w.rt.agents.share(w.account_b, agent_id) is None


def test_after_acceptance_the_previous_owner_and_its_shares_reach_nothing(world: World):
    w = world
    agent_id = _scratch_agent(w, "handed-over")
    accomplice, person = accounts.create_account(w.rt.accounts, "Accomplice")
    a = {"authorization": f"Bearer {w.human_a}"}
    c = {"authorization": f"Bearer {person.token}"}
    terms = {"account": accomplice, "access": "edit", "memory": True}
    assert w.http.post(f"/api/agents/{agent_id}/shares", json=terms, headers=a).status_code == 201
    assert w.http.post(f"/api/agents/{agent_id}/accept", json={"follow": True}, headers=c).status_code == 200
    _, session = agent_sessions.load(w.rt, w.actor(), agent_id, None, None, None, 32_000)
    assert w.http.post(f"/api/agents/{agent_id}/transfer", json={"account": w.account_b}, headers=a).status_code == 200
    taken = w.http.post(f"/api/agents/{agent_id}/transfer/accept", headers={"authorization": f"Bearer {w.human_b}"})
    assert taken.status_code == 200, taken.text
    b_secret = f"b-secret-{secrets.token_hex(4)}"
    memory = {"body": b_secret, "type": "user", "description": "d"}
    b = {"authorization": f"Bearer {w.human_b}"}
    assert w.http.put(f"/api/agents/{agent_id}/memories/b-note", json=memory, headers=b).status_code == 200
    for token in (w.human_a, person.token):
        for sent, response in _person_calls(w, token, agent_id):
            assert response.status_code == 404 and b_secret not in response.text, f"{sent}: {response.text}"
    with pytest.raises(WorkspaceError, match="no agent"):
        agent_memory.remember(w.rt, w.actor(), agent_id, session.id, "late", "x", "create", "user", "d", None)
    assert w.rt.agents.shares_of(agent_id) == [] and w.rt.agents.share(accomplice, agent_id) is None


# == agent tokens of one workspace: a task named for one is never another's ==========================


@pytest.mark.anyio
async def test_a_task_named_for_one_agent_token_is_never_seen_or_taken_by_another_of_the_workspace(world: World):
    """Within one workspace the queue is shared, except for the tasks the human named for one token: another token's
    `next` and dequeue never show them, its claim is refused, and they stay where they were for their own token.
    In an account of its own, so the victim's fingerprint stays as it is."""
    rt = world.rt
    account, human_token = accounts.create_account(rt.accounts, "Named queues")
    workspace, named_for = accounts.create_workspace(rt.accounts, account, "Two agents", "")
    other = accounts.issue_token(rt.accounts, TokenKind.AGENT, account, workspace.id)
    human = Actor("human", account, workspace.id, human_token.record.id)
    named = Task.new(
        id=new_id(),
        workspace_id=workspace.id,
        by="human",
        now=iso(rt.clock()),
        title=f"{SECRET} named",
        body="",
        assignee="agent",
        assigned_token=named_for.record.id,
        column="ready",
        number=rt.tasks.next_number(account, workspace.id),
    )
    rt.tasks.create(account, named)
    tasks.create_task(rt, human, NewTask("open task", "for any agent"))
    for action, payload in (("next", {}), ("get", {}), ("next", {})):
        outcome = await act(world, other.token, "task", action, payload)
        assert SECRET not in outcome.text and named.id not in outcome.text, (action, outcome.text)
    for ref in (named.id, named.identifier):
        outcome = await act(world, other.token, "task", "claim", {"taskId": ref})
        assert outcome.is_error, outcome.text
    still = rt.tasks.get(workspace.id, named.id, consistent=True)
    assert still is not None and still.claim is None and still.status == "notstarted"
    mine = await act(world, named_for.token, "task", "get", {})
    assert json.loads(mine.text)["id"] == named.id, mine.text


# == and after all of it ==========================================================================


def test_the_victim_is_unchanged_after_the_whole_matrix(world: World, baseline: dict[str, str], stored: dict[str, str]):
    assert_unchanged(world, baseline)
    assert_untouched(world, stored)
    assert world.rt.accounts.resolve_token(hash_token(world.human_a)) is not None
    assert world.rt.accounts.resolve_token(hash_token(world.agent_w1)) is not None


# == waits in flight: one account's never take another's ==========================================


def test_an_accounts_waits_in_flight_never_block_another_accounts_waits(world: World):
    """Account A at its cap of waits (held on other Lambda instances, say): A's next wait is refused, B's run."""
    w, rt = world, world.rt
    now = int(rt.clock().timestamp())
    cap, a_tokens = rt.settings.account_waits_cap, (w.agent_w1_token_id, w.human_a_token_id, w.agent_w2_token_id)
    held = [Lease(a_tokens[i % len(a_tokens)], f"victim-wait-{i}", now + 120) for i in range(cap)]
    for lease in held:
        assert rt.waits.take(w.account_a, lease, now, rt.settings.waits_per_token, cap) is None
    try:
        refused = w.http.get("/api/channel/events", params={"wait": 5}, headers=bearer(w.agent_w2))
        assert refused.status_code == 429 and f"{cap} waits already in flight for this account" in refused.text
        for token, path in ((w.agent_b, "/api/channel/events"), (w.human_b, "/api/bridge/calls")):
            answer = w.http.get(path, params={"wait": 0.3}, headers=bearer(token))
            assert answer.status_code == 200, (path, answer.text)
    finally:
        for lease in held:
            rt.waits.let_go(w.account_a, lease)


# == permission verdicts: only the bridge that asked hears one =====================================


def test_another_token_of_the_workspace_never_hears_a_verdict_it_did_not_ask_for(world: World):
    """W1's agent asked (`victim-2`, pending); a second agent token of W1 asks with the same request id. The human's
    verdict on the victim's question reaches the victim's bridge alone. (Runs after the matrix: it decides.)"""
    w = world
    neighbour = accounts.issue_token(w.rt.accounts, TokenKind.AGENT, w.account_a, w.w1).token
    bridges = (w.agent_w1, neighbour)
    cursors = {t: w.http.get("/api/channel/events", headers=bearer(t)).json()["cursor"] for t in bridges}
    same_id = {"requestId": "victim-2", "toolName": "OtherTool", "description": "harmless"}
    assert w.http.post("/api/channel/permissions", json=same_id, headers=bearer(neighbour)).status_code == 201
    decided = w.http.post(f"/api/workspaces/{w.w1}/permissions/{w.permission_id}", json={"decision": "allow"},
                          headers=bearer(w.human_a))  # fmt: skip
    assert decided.status_code == 200, decided.text

    def verdicts(token: str) -> list[dict[str, str]]:
        got = w.http.get("/api/channel/events", params={"cursor": cursors[token]}, headers=bearer(token)).json()
        return [e["meta"] for e in got["events"] if e["kind"] == "permission"]

    assert verdicts(w.agent_w1) == [{"kind": "permission", "request_id": "victim-2", "behavior": "allow"}]
    assert verdicts(neighbour) == []


# == the same workspace: another agent than the claimant ===========================================

# What an agent may not do to a task another token of its own workspace holds under a live claim: change its status
# (AgentRQ's updateStatus as well as the board's loop), edit, archive, release or claim it over.
NON_CLAIMANT = [
    *(("updateStatus", {"status": status}) for status in ("notstarted", "ongoing", "blocked", "completed", "rejected")),
    ("claim", {}),
    ("progress", {"message": "attacker"}),
    ("complete", {"summary": "attacker"}),
    ("reportBlocker", {"questions": ["attacker?"]}),
    ("release", {}),
    ("edit", {"title": "attacker"}),
    ("archive", {"reason": "attacker"}),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("action", "payload"), NON_CLAIMANT, ids=[f"task.{a} {p}" for a, p in NON_CLAIMANT])
async def test_a_non_claimant_of_the_same_workspace_changes_nothing_of_a_claimed_task(
    world: World, stored: dict[str, str], action: str, payload: dict[str, Any]
):
    w = world
    outcome = await act(w, w.agent_w1_other, "task", action, {"taskId": w.claimed_task_id, **payload})
    assert outcome.is_error and "claimed by another agent" in outcome.text, outcome.text
    assert_untouched(w, stored)
