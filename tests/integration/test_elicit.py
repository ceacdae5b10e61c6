"""Elicit: the agent asks, the human answers over REST, the waiting agent receives exactly that."""

import json
import threading
import time
from datetime import timedelta

import anyio
import httpx
import pytest

from agent_workspace.domain.clock import iso
from agent_workspace.domain.elicitations import Elicitation
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.tasks import Message
from agent_workspace.domain.tokens import hash_token
from agent_workspace.local.stack import seed
from agent_workspace.mcp_server.dispatch import dispatch
from agent_workspace.services import accounts
from agent_workspace.tool_registry import Call
from agent_workspace.tools import REGISTRY
from tests.outbound import SECRET, outbound
from tests.support import bearer, mcp_client, text_of

pytestmark = pytest.mark.anyio

BRANCH = {
    "type": "object",
    "properties": {"branch": {"type": "string", "enum": ["main", "release"]}, "force": {"type": "boolean"}},
    "required": ["branch"],
}


def form_question(task_id: str, schema: dict = BRANCH, **fields) -> dict:
    """The payload of an elicit that asks for `schema`'s form on the task; `fields` add to it or change it.

    A call that must be refused gives `timeoutSeconds=3`: should the server take it, it waits 3 s at most."""
    return {"taskId": task_id, "message": "Which branch?", "mode": "form", "requestedSchema": schema, **fields}


def create_task(runtime, seeded) -> str:
    from agent_workspace.services.tasks import Actor, NewTask
    from agent_workspace.services.tasks import create_task as create

    return create(runtime, Actor("human", seeded.account_id, seeded.workspace_id, "t"), NewTask("Release", "")).id


def pending(live, seeded, token=None) -> list[dict]:
    url = f"{live.url}/api/workspaces/{seeded.workspace_id}/elicitations?status=pending"
    response = httpx.get(url, headers=bearer(token or seeded.human_token))
    assert response.status_code == 200, response.text
    return response.json()


def wait_for_question(live, seeded, deadline_seconds: float = 10) -> dict:
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        questions = pending(live, seeded)
        if questions:
            return questions[0]
        time.sleep(0.05)
    raise AssertionError("the question never appeared in the pending list")


def answer(live, seeded, question_id: str, body: dict, token=None) -> httpx.Response:
    url = f"{live.url}/api/workspaces/{seeded.workspace_id}/elicitations/{question_id}/answer"
    return httpx.post(url, json=body, headers=bearer(token or seeded.human_token))


async def elicit(live, token: str, **payload) -> tuple[str, bool, float]:
    async with mcp_client(live.url, token) as client:
        started = time.monotonic()
        result = await client.call_tool("task", {"action": "elicit", "payload": payload})
        return text_of(result), result.is_error, time.monotonic() - started


def in_thread(live, runtime, seeded, **payload) -> dict:
    """The agent's elicit call in its own thread, as a real client would block on it."""
    outcome: dict = {}

    def run() -> None:
        outcome["text"], outcome["is_error"], outcome["waited"] = anyio.run(
            lambda: elicit(live, seeded.agent_token, **payload)
        )

    thread = threading.Thread(target=run)
    thread.start()
    outcome["thread"] = thread
    return outcome


async def test_the_answer_arrives_while_the_agent_waits(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    waiting = in_thread(live, runtime, seeded, **form_question(task_id))
    question = wait_for_question(live, seeded)
    assert (question["taskId"], question["message"], question["mode"]) == (task_id, "Which branch?", "form")
    assert question["requestedSchema"] == BRANCH and question["url"] is None
    response = answer(
        live, seeded, question["id"], {"action": "accept", "content": {"branch": "release", "force": True}}
    )
    assert response.status_code == 200, response.text
    waiting["thread"].join(timeout=30)
    assert waiting["is_error"] is False
    assert json.loads(waiting["text"]) == {"action": "accept", "content": {"branch": "release", "force": True}}
    assert pending(live, seeded) == []

    detail = httpx.get(
        f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks/{task_id}", headers=bearer(seeded.human_token)
    ).json()
    kinds = [(m["kind"], m["from"]) for m in detail["conversation"]["messages"]]
    assert kinds == [("question", "agent"), ("answer", "human")]
    assert detail["conversation"]["messages"][1]["answer"]["content"] == {"branch": "release", "force": True}


async def test_decline_reaches_the_agent_and_a_second_answer_is_409(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    waiting = in_thread(
        live, runtime, seeded, taskId=task_id, message="Deploy now?", mode="url", url="https://example.com/approve"
    )
    question = wait_for_question(live, seeded)
    assert (question["mode"], question["url"]) == ("url", "https://example.com/approve")
    assert answer(live, seeded, question["id"], {"action": "decline"}).status_code == 200
    waiting["thread"].join(timeout=30)
    assert json.loads(waiting["text"]) == {"action": "decline"}
    again = answer(live, seeded, question["id"], {"action": "accept"})
    assert again.status_code == 409


async def test_invalid_answers_are_refused_and_the_question_stays_open(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    waiting = in_thread(live, runtime, seeded, **form_question(task_id, timeoutSeconds=20))
    question = wait_for_question(live, seeded)
    for body, field in [
        ({"action": "accept", "content": {"branch": "develop"}}, "content.branch"),
        ({"action": "accept", "content": {"force": True}}, "content.branch"),
        ({"action": "accept", "content": {"branch": "main", "force": "yes"}}, "content.force"),
        ({"action": "accept"}, "content"),
        ({"action": "decline", "content": {"branch": "main"}}, "content"),
        ({"action": "maybe"}, "action"),
    ]:
        response = answer(live, seeded, question["id"], body)
        assert response.status_code == 422, (body, response.text)
        assert field in response.text, (body, response.text)
    assert [q["id"] for q in pending(live, seeded)] == [question["id"]]
    assert answer(live, seeded, question["id"], {"action": "accept", "content": {"branch": "main"}}).status_code == 200
    waiting["thread"].join(timeout=30)
    assert json.loads(waiting["text"]) == {"action": "accept", "content": {"branch": "main"}}


async def test_timeout_returns_cancel_close_to_the_requested_time_and_expires_the_question(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    text, is_error, waited = await elicit(live, seeded.agent_token, **form_question(task_id, timeoutSeconds=2))
    assert (json.loads(text), is_error) == ({"action": "cancel"}, False)
    assert 2 <= waited < 4.5
    assert pending(live, seeded) == []
    expired = httpx.get(
        f"{live.url}/api/workspaces/{seeded.workspace_id}/elicitations?status=expired",
        headers=bearer(seeded.human_token),
    ).json()
    assert len(expired) == 1
    assert answer(live, seeded, expired[0]["id"], {"action": "decline"}).status_code == 409


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"message": "q", "mode": "form", "requestedSchema": BRANCH, "timeoutSeconds": 3601}, "3600"),
        ({"message": "q", "mode": "form"}, "form mode needs requestedSchema"),
        ({"message": "q", "mode": "form", "requestedSchema": {"type": "object"}}, "requestedSchema must be"),
        ({"message": "q", "mode": "form", "requestedSchema": {"type": 5}}, "not a valid JSON Schema"),
        (
            {
                "message": "q",
                "mode": "form",
                "requestedSchema": {"type": "object", "properties": {"a": {"type": "array"}}},
            },
            "requestedSchema.properties.a",
        ),
        ({"message": "q", "mode": "url"}, "url mode needs url"),
        ({"message": "q", "mode": "url", "url": "ftp://x"}, "url must be an http(s) link"),
        ({"mode": "url", "url": "https://x"}, "missing required field 'message'"),
        ({"message": "q", "mode": "chat"}, "field 'mode'"),
        # mode may be left out (requestedSchema means a form, url a link), but never contradicted
        ({"message": "q"}, "requestedSchema (a form) or url (a link)"),
        ({"message": "q", "requestedSchema": BRANCH, "url": "https://x.example"}, "requestedSchema and url"),
        (
            {"message": "q", "mode": "form", "requestedSchema": BRANCH, "url": "https://x.example"},
            "requestedSchema and url",
        ),
        ({"message": "q", "mode": "url", "requestedSchema": BRANCH}, "url mode needs url, not requestedSchema"),
        ({"message": "q", "mode": "form", "url": "https://x.example"}, "form mode needs requestedSchema, not url"),
    ],
)
async def test_bad_questions_are_refused_before_anything_is_asked(live, runtime, seeded, payload, expected):
    task_id = create_task(runtime, seeded)
    text, is_error, _ = await elicit(live, seeded.agent_token, taskId=task_id, **payload)
    assert is_error and text.startswith("task elicit:") and expected in text, text
    assert pending(live, seeded) == []


@pytest.mark.parametrize(
    ("fields", "mode"), [({"requestedSchema": BRANCH}, "form"), ({"url": "https://example.com/approve"}, "url")]
)
async def test_a_question_without_mode_takes_it_from_its_fields(runtime, seeded, fields, mode):
    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 0.2})
    task_id = create_task(runtime, seeded)
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    call = Call(principal, runtime, "req", deadline=time.monotonic() + 10)
    payload = {"taskId": task_id, "message": "Which branch?", **fields}
    outcome = await dispatch(REGISTRY, call, "task", {"action": "elicit", "payload": payload})
    assert not outcome.is_error, outcome.text
    assert json.loads(outcome.text)["action"] == "pending"
    [question] = runtime.elicitations.list_by_status(seeded.workspace_id, "pending")
    assert question.mode == mode


async def test_a_wait_longer_than_the_invocation_returns_pending_and_resumes_on_the_same_question(runtime, seeded):
    runtime.settings = runtime.settings.model_copy(update={"lambda_return_margin_seconds": 0.5})
    task_id = create_task(runtime, seeded)
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    short = Call(principal, runtime, "req", deadline=time.monotonic() + 1.5)  # a Lambda with 1.5 s left
    payload = form_question(task_id)
    started = time.monotonic()
    first = await dispatch(REGISTRY, short, "task", {"action": "elicit", "payload": payload})
    assert time.monotonic() - started < 1.5
    parked = json.loads(first.text)
    assert parked["action"] == "pending" and parked["elicitationId"]
    assert parked["elicitationId"] in parked["next"] and task_id in parked["next"]

    questions = runtime.elicitations.list_by_status(seeded.workspace_id, "pending")
    assert [q.id for q in questions] == [parked["elicitationId"]]  # asked once, still open
    from agent_workspace.services.elicitations import answer as answer_question

    answer_question(runtime, seeded.workspace_id, parked["elicitationId"], "accept", {"branch": "main"})
    resumed = await dispatch(
        REGISTRY,
        Call(principal, runtime, "req2", deadline=time.monotonic() + 5),
        "task",
        {"action": "elicit", "payload": {"taskId": task_id, "elicitationId": parked["elicitationId"]}},
    )
    assert json.loads(resumed.text) == {"action": "accept", "content": {"branch": "main"}}
    assert len(runtime.elicitations.list_by_status(seeded.workspace_id, None)) == 1


async def test_a_call_returns_pending_after_the_wait_cap_and_the_question_stays_open_until_answered(
    live, runtime, seeded
):
    """The cap ends one call, well before a client's 60 s request timeout; only timeoutSeconds ends the question."""
    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 1})
    task_id = create_task(runtime, seeded)
    text, is_error, waited = await elicit(live, seeded.agent_token, **form_question(task_id, timeoutSeconds=3600))
    parked = json.loads(text)
    assert not is_error and 1 <= waited < 3, (text, waited)
    [question] = pending(live, seeded)
    assert parked == {
        "action": "pending",
        "elicitationId": question["id"],
        "expiresAt": question["expiresAt"],  # the question's hour, not this call's second
        "next": (
            'The human has not answered yet. Keep waiting on the same question: task {"action": "elicit", '
            f'"payload": {{"taskId": "{task_id}", "elicitationId": "{question["id"]}"}}}}'
        ),
    }

    resume = {"taskId": task_id, "elicitationId": question["id"]}
    text, is_error, waited = await elicit(live, seeded.agent_token, **resume)
    assert (json.loads(text), is_error) == (parked, False) and 1 <= waited < 3  # capped again, same question
    assert answer(live, seeded, question["id"], {"action": "accept", "content": {"branch": "main"}}).status_code == 200
    text, is_error, waited = await elicit(live, seeded.agent_token, **resume)
    assert (json.loads(text), is_error) == ({"action": "accept", "content": {"branch": "main"}}, False)
    assert waited < 1
    assert len(runtime.elicitations.list_by_status(seeded.workspace_id, None)) == 1  # asked once


async def test_an_answer_given_while_a_capped_call_waits_reaches_it(live, runtime, seeded):
    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 2})
    task_id = create_task(runtime, seeded)
    waiting = in_thread(
        live, runtime, seeded, taskId=task_id, message="Deploy now?", mode="url", url="https://example.com/approve"
    )
    question = wait_for_question(live, seeded)
    assert answer(live, seeded, question["id"], {"action": "decline"}).status_code == 200
    waiting["thread"].join(timeout=30)
    assert json.loads(waiting["text"]) == {"action": "decline"} and waiting["waited"] < 2


async def test_the_question_expiring_before_the_cap_still_answers_cancel(runtime, seeded):
    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 30})
    task_id = create_task(runtime, seeded)
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    payload = {"taskId": task_id, "message": "q?", "mode": "url", "url": "https://x.example", "timeoutSeconds": 1}
    started = time.monotonic()
    result = await dispatch(REGISTRY, Call(principal, runtime, "r"), "task", {"action": "elicit", "payload": payload})
    assert json.loads(result.text) == {"action": "cancel"} and time.monotonic() - started < 3


async def test_a_resumed_call_reads_at_the_settled_rate_from_its_start(runtime, seeded, clock):
    """Resuming every cap must not restart the quick first reads: an old question is read every few seconds."""
    from agent_workspace.services import elicitations
    from agent_workspace.services.tasks import Actor

    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 1.5})
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    question = elicitations.ask(
        runtime, Actor.of(principal), create_task(runtime, seeded), "q?", "url", None, "https://x.example", 600
    )
    reads: list[float] = []

    def count_read(**_) -> None:
        reads.append(time.monotonic())

    events = runtime.clients.dynamodb.meta.events  # the session's shared client: the hook is removed after
    events.register("before-call.dynamodb.GetItem", count_read)
    try:
        fresh = await elicitations.wait_for_answer(runtime, question, None)
        fresh_reads = len(reads)
        clock.advance(minutes=5)  # the same question, five minutes on
        reads.clear()
        resumed = await elicitations.wait_for_answer(runtime, question, None)
    finally:
        events.unregister("before-call.dynamodb.GetItem", count_read)
    assert fresh["action"] == resumed["action"] == "pending"
    assert fresh_reads >= 3 and len(reads) == 1  # one read at the end of its 1.5 s, none in between


async def test_resuming_refuses_a_changed_question_or_another_tasks_id(runtime, seeded):
    task_id, other_task = create_task(runtime, seeded), create_task(runtime, seeded)
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    call = Call(principal, runtime, "r", deadline=time.monotonic() + 1)
    from agent_workspace.services.elicitations import ask
    from agent_workspace.services.tasks import Actor

    question = ask(runtime, Actor.of(principal), task_id, "q?", "url", None, "https://x.example", 60)
    changed = await dispatch(
        REGISTRY,
        call,
        "task",
        {"action": "elicit", "payload": {"taskId": task_id, "elicitationId": question.id, "message": "other"}},
    )
    assert changed.is_error and "leave out message" in changed.text
    wrong_task = await dispatch(
        REGISTRY, call, "task", {"action": "elicit", "payload": {"taskId": other_task, "elicitationId": question.id}}
    )
    assert wrong_task.is_error and f"no question {question.id}" in wrong_task.text


async def test_only_the_workspaces_own_human_sees_or_answers_its_questions(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    from agent_workspace.services.elicitations import ask
    from agent_workspace.services.tasks import Actor

    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    question = ask(runtime, Actor.of(principal), task_id, "q?", "form", BRANCH, None, 60)
    stranger = seed(runtime)
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}/elicitations"
    assert httpx.get(base, headers=bearer(stranger.human_token)).status_code == 404
    assert answer(live, seeded, question.id, {"action": "decline"}, token=stranger.human_token).status_code == 404
    assert answer(live, seeded, question.id, {"action": "decline"}, token=seeded.agent_token).status_code == 403
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    async with mcp_client(live.url, other.token) as client:
        result = await client.call_tool(
            "task", {"action": "elicit", "payload": {"taskId": task_id, "elicitationId": question.id}}
        )
    assert result.is_error and "no question" in text_of(result)
    assert [q["id"] for q in pending(live, seeded)] == [question.id]


# -- issue 15: schemas that refer outside, catastrophic patterns, sizes the store cannot take ---------------------


@pytest.fixture
def reach(tmp_path, monkeypatch):
    with outbound(tmp_path, monkeypatch) as reached:
        yield reached


def branch_with(**keywords) -> dict:
    return {"type": "object", "properties": {"branch": {"type": "string", **keywords}}, "required": ["branch"]}


def stored_question(runtime, seeded, schema: dict) -> str:
    """A question as the server stored it before it checked schemas: straight into the store."""
    now = runtime.clock()
    question = Elicitation(
        id=new_id(),
        workspace_id=seeded.workspace_id,
        task_id=create_task(runtime, seeded),
        message="Which branch?",
        mode="form",
        status="pending",
        created_at=iso(now),
        expires_at=iso(now + timedelta(minutes=5)),
        requested_schema=schema,
    )
    line = Message(new_id(), "agent", "Which branch?", question.created_at, kind="question")
    runtime.elicitations.create(question, line)
    return question.id


def asked(runtime, seeded, schema: dict) -> str:
    from agent_workspace.services.elicitations import ask
    from agent_workspace.services.tasks import Actor

    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    return ask(runtime, Actor.of(principal), create_task(runtime, seeded), "Which branch?", "form", schema, None, 60).id


@pytest.mark.parametrize("form_of_ref", ["http", "https", "never answers", "file", "data", "relative"])
async def test_a_question_whose_schema_refers_outside_is_refused_naming_it_and_nothing_is_read(
    live, runtime, seeded, reach, form_of_ref
):
    task_id = create_task(runtime, seeded)
    schema = branch_with(**{"$ref": reach.refs()[form_of_ref]})
    with anyio.fail_after(15):
        text, is_error, _ = await elicit(live, seeded.agent_token, **form_question(task_id, schema, timeoutSeconds=3))
    assert is_error, text
    assert text.startswith("task elicit: requestedSchema.properties.branch.$ref must refer within the schema"), text
    assert reach.touched == 0 and pending(live, seeded) == []


@pytest.mark.parametrize("form_of_ref", ["http", "never answers", "file", "data"])
async def test_answering_a_question_stored_with_an_outside_reference_is_422_naming_it_and_reads_nothing(
    live, runtime, seeded, reach, form_of_ref
):
    question_id = stored_question(runtime, seeded, branch_with(**{"$ref": reach.refs()[form_of_ref]}))
    response = answer(live, seeded, question_id, {"action": "accept", "content": {"branch": "main"}})
    assert response.status_code == 422, response.text  # it was a 500, after fetching
    detail = response.json()["detail"]
    assert detail.startswith("requestedSchema.properties.branch.$ref must refer within the schema"), detail
    assert SECRET not in detail and reach.touched == 0
    assert [q["id"] for q in pending(live, seeded)] == [question_id]  # still open: the human can decline it
    assert answer(live, seeded, question_id, {"action": "decline"}).status_code == 200


async def test_answering_a_question_stored_with_a_loop_is_422_naming_it(live, runtime, seeded):
    looping = {**branch_with(), "allOf": [{"$ref": "#"}]}
    question_id = stored_question(runtime, seeded, looping)
    response = answer(live, seeded, question_id, {"action": "accept", "content": {"branch": "main"}})
    assert response.status_code == 422, response.text  # it was a RecursionError: 500
    assert response.json()["detail"].startswith("requestedSchema.allOf[0].$ref refers back"), response.text


@pytest.mark.parametrize(
    ("pattern", "value", "says"),
    [
        ("^(a+)+$", "a" * 26 + "!", "does not match"),  # the issue's: 3 s in `re`, doubling per 'a'
        ("^(a|aa)+$", "a" * 40 + "!", "takes too long to evaluate"),  # slow in any backtracking engine
    ],
)
async def test_a_catastrophic_pattern_answers_the_human_within_seconds_naming_the_field(
    live, runtime, seeded, pattern, value, says
):
    question_id = asked(runtime, seeded, branch_with(pattern=pattern))
    started = time.monotonic()
    response = answer(live, seeded, question_id, {"action": "accept", "content": {"branch": value}})
    assert time.monotonic() - started < 2
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith("content.branch: ") and says in response.json()["detail"]


async def test_a_pattern_the_bounded_engine_cannot_take_is_refused_when_asked(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    huge = branch_with(pattern="(?:a{9999}){999}")
    text, is_error, _ = await elicit(live, seeded.agent_token, **form_question(task_id, huge, timeoutSeconds=3))
    assert is_error, text
    assert text.startswith("task elicit: requestedSchema.properties.branch.pattern is too large once"), text


async def test_a_500_kb_description_or_answer_is_refused_naming_the_field_not_an_internal_error(live, runtime, seeded):
    task_id = create_task(runtime, seeded)
    described = branch_with(description="d" * 500_000)
    text, is_error, _ = await elicit(live, seeded.agent_token, **form_question(task_id, described, timeoutSeconds=3))
    assert is_error and text.startswith("task elicit: requestedSchema takes 500,"), text
    text, is_error, _ = await elicit(
        live, seeded.agent_token, **form_question(task_id, branch_with(maxLength=10**40), timeoutSeconds=3)
    )
    assert is_error and text.startswith("task elicit: requestedSchema.properties.branch.maxLength is a number"), text
    question_id = asked(runtime, seeded, BRANCH)
    content = {"branch": "main", "notes": "n" * 500_000}
    response = answer(live, seeded, question_id, {"action": "accept", "content": content})
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith("content takes 500,"), response.text
    assert answer(live, seeded, question_id, {"action": "accept", "content": {"branch": "main"}}).status_code == 200
