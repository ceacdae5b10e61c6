"""Issue 32 on the agent repo: cursors that leave their listing's key range, and writes retried after a timeout.

Reference: ../shared/reference/omr-agent-repo-tools.txt ("list_agent_prompt_versions", "agent_activity": limit,
cursor). AWS's rule: a Query's ExclusiveStartKey must lie in the range the key condition reads (same partition and,
with begins_with, the same sort-key prefix); DynamoDB answers a ValidationException otherwise, which moto lets pass.
"""

import json

import httpx
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ReadTimeoutError

from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after
from tests.integration.test_agent_repo_mcp import ok, refused

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("tool", "other_range"),
    [
        ("list_agent_prompt_versions", keys.agent_activity_sk("0kGogHmaqvZ")),
        ("agent_activity", keys.prompt_sk(1)),
        ("agent_activity", keys.AGENT_SK),
    ],
)
async def test_a_cursor_outside_the_listings_key_range_is_refused_by_name(agent, tool, other_range):
    made = await ok(agent, "create_agent", name="Paged", prompt="v1")
    forged = cursor_after({"PK": {"S": keys.agent_pk(made["id"])}, "SK": {"S": other_range}})
    text = await refused(agent, tool, {"agent": made["id"], "cursor": forged})
    assert "cursor is not one this listing returned" in text, text


class _Raw:
    """The body of a response handed back without sending (botocore reads a raw response as a stream)."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def stream(self, **_: object):
        yield self._content


async def _session(agent, agent_id: str) -> str:
    text, _ = await agent.raw("load_agent", {"agent": agent_id})
    return text.split("Session: ")[1].split()[0]


@pytest.mark.parametrize("honours_token", [True, False], ids=["aws", "moto"])
async def test_a_write_retried_after_its_answer_was_lost_is_applied_once(agent, runtime, honours_token):
    """The SDK retries a TransactWriteItems whose answer timed out although it had committed. The hook below plays
    DynamoDB: it commits the first attempt and loses its answer. On AWS (`aws`), a retry with the same
    ClientRequestToken within 10 minutes succeeds without applying again, and botocore gives every call a token
    (the operation's idempotency token) that its retries reuse. The local stack's moto ignores the token (`moto`):
    the retry is applied again and refused, and the write recognises its own memory in the refusal."""
    made = await ok(agent, "create_agent", name="Retried")
    session = await _session(agent, made["id"])
    tokens: list[str | None] = []
    answered: dict[str, bytes] = {}

    def lose_the_first_answer(request, **_):
        token = json.loads(request.body).get("ClientRequestToken")
        tokens.append(token)
        if len(tokens) > 1:
            return AWSResponse(request.url, 200, {}, _Raw(answered[token])) if token in answered else None
        reply = httpx.post(request.url, headers=dict(request.headers.items()), content=request.body)
        assert reply.status_code == 200, reply.text
        if token is not None and honours_token:
            answered[token] = reply.content
        raise ReadTimeoutError(endpoint_url=request.url)

    events = runtime.clients.dynamodb.meta.events
    events.register("before-send.dynamodb.TransactWriteItems", lose_the_first_answer)
    try:
        arguments = {"agent": made["id"], "session": session, "name": "first-note", "type": "project"}
        text, is_error = await agent.raw("agent_remember", arguments | {"description": "d", "body": "once"})
    finally:
        events.unregister("before-send.dynamodb.TransactWriteItems", lose_the_first_answer)
    assert not is_error, text
    assert json.loads(text)["revision"] == 1
    assert len(tokens) == 2 and tokens[0] is not None and tokens[0] == tokens[1]
    found = await ok(agent, "agent_recall", agent=made["id"], name="first-note")
    assert found["memories"][0]["revision"] == 1 and found["memories"][0]["body"] == "once", found


async def test_another_writers_memory_of_the_same_name_is_still_refused(agent):
    made = await ok(agent, "create_agent", name="Raced")
    session = await _session(agent, made["id"])
    arguments = {"agent": made["id"], "session": session, "name": "note", "type": "project", "description": "d"}
    await ok(agent, "agent_remember", **arguments, body="first")
    assert "exists at revision 1" in await refused(agent, "agent_remember", arguments | {"body": "first"})


async def test_every_transaction_sent_carries_its_own_request_token(agent, runtime):
    tokens: list[str | None] = []

    def seen(request, **_):
        tokens.append(json.loads(request.body).get("ClientRequestToken"))

    events = runtime.clients.dynamodb.meta.events
    events.register("before-send.dynamodb.TransactWriteItems", seen)
    try:
        made = await ok(agent, "create_agent", name="One")
        await _session(agent, made["id"])
        await ok(agent, "create_agent", name="Two")
    finally:
        events.unregister("before-send.dynamodb.TransactWriteItems", seen)
    assert len(tokens) == 3 and None not in tokens and len(set(tokens)) == 3


async def test_an_agent_created_by_a_retry_the_store_applied_twice_is_answered_as_made(agent, runtime):
    """The local stack's case (no token honoured) for create_agent: the retry's slug claim finds its own agent."""
    sent: list[bytes] = []

    def lose_the_first_answer(request, **_):
        sent.append(request.body)
        if len(sent) == 1:
            reply = httpx.post(request.url, headers=dict(request.headers.items()), content=request.body)
            assert reply.status_code == 200, reply.text
            raise ReadTimeoutError(endpoint_url=request.url)

    events = runtime.clients.dynamodb.meta.events
    events.register("before-send.dynamodb.TransactWriteItems", lose_the_first_answer)
    try:
        made = await ok(agent, "create_agent", name="Once Only")
    finally:
        events.unregister("before-send.dynamodb.TransactWriteItems", lose_the_first_answer)
    assert len(sent) == 2 and sent[0] == sent[1]
    assert [a["id"] for a in (await ok(agent, "list_agents"))["agents"]] == [made["id"]]
    assert "taken" in await refused(agent, "create_agent", {"name": "Once Only"})
