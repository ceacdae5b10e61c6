"""WebSocket push (issue 36), the server core: tickets over REST, sockets through the push function's handler, and
the one sender (`services.push.publish` on the events queue, `deliver` in the events function).

moto records what is posted to a connection (`apigatewaymanagementapi.post_to_connection`) but never answers 410
and takes any size; where AWS is stricter the tests stand a stub in for the `@connections` endpoint that does
what AWS documents: botocore's `GoneException` (410) for a connection that is gone, frames over 32 KB refused.
"""

import json
from collections import defaultdict
from datetime import timedelta
from typing import Any

import boto3
import httpx
import pytest
from botocore.exceptions import ClientError
from moto.apigatewaymanagementapi.models import apigatewaymanagementapi_backends

from agent_workspace.domain import push as rules
from agent_workspace.domain.clock import parse_iso
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts, channel, elicitations, push, site_tools, task_board, tasks
from agent_workspace.store import keys
from agent_workspace.store.dynamo import key
from agent_workspace.store.push import ConnectionPoster
from agent_workspace.workers import fan_out
from tests.support import (
    FUNCTION_NAMES,
    PUSH_URL,
    ROOT,
    LambdaContext,
    assert_problem,
    bearer,
    load_function,
    receive_all,
)

TICKETS = "/api/push/tickets"
SITE = "https://tools.example.com"


# -- the stack, with push on ---------------------------------------------------------------------------------


@pytest.fixture
def push_on(runtime: Runtime) -> Runtime:
    """The runtime as the template configures it: a WebSocket API, so tickets are minted and changes published."""
    runtime.settings = runtime.settings.model_copy(update={"push_url": PUSH_URL})
    return runtime


@pytest.fixture
def api(push_on: Runtime, live) -> httpx.Client:
    with httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


class Sockets:
    """The `@connections` endpoint as AWS documents it: a post to a gone connection fails with 410 GoneException
    (botocore's modelled exception), a frame over 32 KB with 413; `failing` connections answer 429."""

    _modelled = boto3.client("apigatewaymanagementapi", region_name="us-east-1", endpoint_url="https://invalid")

    def __init__(self) -> None:
        self.frames: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.gone: set[str] = set()
        self.failing: set[str] = set()

    def post_to_connection(self, ConnectionId: str, Data: bytes) -> dict[str, Any]:  # noqa: N803 - boto3's names
        if ConnectionId in self.gone:
            raise self._modelled.exceptions.GoneException(_error("GoneException", 410), "PostToConnection")
        if len(Data) > rules.FRAME_BYTES_MAX:
            raise self._modelled.exceptions.PayloadTooLargeException(
                _error("PayloadTooLargeException", 413), "PostToConnection"
            )
        if ConnectionId in self.failing:
            raise ClientError(_error("LimitExceededException", 429), "PostToConnection")
        self.frames[ConnectionId].append(json.loads(Data))
        return {}


def _error(code: str, status: int) -> dict[str, Any]:
    return {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}


@pytest.fixture
def sockets(push_on: Runtime) -> Sockets:
    stub = Sockets()
    push_on.push_poster = ConnectionPoster(stub)
    return stub


def principal(rt: Runtime, token: str):
    found = rt.accounts.resolve_token(hash_token(token))
    assert found is not None
    return found


def ticket(rt: Runtime, token: str, topic: str, workspace_id: str | None = None) -> str:
    return push.mint_ticket(rt, principal(rt, token), hash_token(token), topic, workspace_id)["ticket"]


def connected(rt: Runtime, connection_id: str, token: str, topic: str, workspace_id: str | None = None) -> str:
    push.connect(rt, connection_id, ticket(rt, token, topic, workspace_id))
    return connection_id


def pushes(rt: Runtime) -> list[dict[str, Any]]:
    """The push messages on the events queue now (notifications beside them left out)."""
    bodies = [json.loads(m["Body"]) for m in receive_all(rt)]
    return [body for body in bodies if body.get("type") == "push"]


def deliver_all(rt: Runtime, bodies: list[dict[str, Any]]) -> list[int]:
    return [fan_out.deliver_message(rt, body) for body in bodies]


def item(rt: Runtime, pk: str, sk: str) -> dict[str, Any] | None:
    return rt.clients.dynamodb.get_item(TableName=rt.settings.table_name, Key=key(pk, sk), ConsistentRead=True).get(
        "Item"
    )


def listening(rt: Runtime, topic: str, scope: str) -> list[str]:
    """The connection ids the sender finds for `topic` of `scope`."""
    return [listener["connectionId"] for listener in rt.push.listeners(topic, scope, 100)]


def other_workspace(rt: Runtime, account_id: str) -> tuple[str, str]:
    workspace, token = accounts.create_workspace(rt.accounts, account_id, "Second", "")
    return workspace.id, token.token


# == tickets ====================================================================================================


def test_an_agent_token_mints_a_ticket_for_its_own_workspaces_channel(api, push_on, seeded, clock):
    response = api.post(TICKETS, json={"topic": "channel"}, headers=bearer(seeded.agent_token))

    assert response.status_code == 201, response.text
    minted = response.json()
    assert set(minted) == {"ticket", "url", "expiresAt", "pingSeconds", "reconnectSeconds"}
    # The clients' cadence, from the server: inside API Gateway's 10-minute idle timeout and 2-hour life.
    assert 0 < minted["pingSeconds"] < 600 and 0 < minted["reconnectSeconds"] < 7200
    assert minted["ticket"].startswith(rules.TICKET_PREFIX)
    assert minted["url"] == f"{PUSH_URL}?ticket={minted['ticket']}"
    assert parse_iso(minted["expiresAt"]) - clock.now <= timedelta(seconds=rules.TICKET_SECONDS)
    stored = item(push_on, keys.push_ticket_pk(hash_token(minted["ticket"])), keys.PUSH_SK)
    assert stored["topic"] == {"S": "channel"} and stored["scope"] == {"S": seeded.workspace_id}
    # Naming its own workspace is the same ticket's scope.
    named = api.post(TICKETS, json={"topic": "channel", "workspaceId": seeded.workspace_id},
                     headers=bearer(seeded.agent_token))  # fmt: skip
    assert named.status_code == 201, named.text


def test_a_human_token_mints_tickets_for_its_accounts_bridge_and_a_workspaces_console(api, push_on, seeded):
    bridge = api.post(TICKETS, json={"topic": "bridge"}, headers=bearer(seeded.human_token))
    console = api.post(
        TICKETS, json={"topic": "console", "workspaceId": seeded.workspace_id}, headers=bearer(seeded.human_token)
    )

    assert (bridge.status_code, console.status_code) == (201, 201), (bridge.text, console.text)
    for minted, scope in ((bridge.json(), seeded.account_id), (console.json(), seeded.workspace_id)):
        stored = item(push_on, keys.push_ticket_pk(hash_token(minted["ticket"])), keys.PUSH_SK)
        assert stored["scope"] == {"S": scope}


@pytest.mark.parametrize(
    ("who", "body"),
    [
        ("human", {"topic": "channel"}),
        ("agent", {"topic": "bridge"}),
        ("agent", {"topic": "console", "workspaceId": "WORKSPACE"}),
    ],
)
def test_a_topic_refuses_the_wrong_kind_of_token_with_403(api, seeded, who, body):
    token = seeded.human_token if who == "human" else seeded.agent_token
    body = {k: (seeded.workspace_id if v == "WORKSPACE" else v) for k, v in body.items()}

    assert_problem(api.post(TICKETS, json=body, headers=bearer(token)), 403, "token")


def test_an_agent_token_hears_no_other_workspaces_channel(api, push_on, seeded):
    neighbour, _ = other_workspace(push_on, seeded.account_id)

    refused = api.post(TICKETS, json={"topic": "channel", "workspaceId": neighbour}, headers=bearer(seeded.agent_token))

    assert_problem(refused, 403, "own workspace")


def test_another_accounts_workspace_is_not_found_for_the_console(api, push_on, seeded):
    _, stranger = accounts.create_account(push_on.accounts, "Stranger")

    for workspace_id in (seeded.workspace_id, "0000000000A", "../../x"):
        refused = api.post(
            TICKETS, json={"topic": "console", "workspaceId": workspace_id}, headers=bearer(stranger.token)
        )
        assert_problem(refused, 404, "no workspace")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"topic": "bridge", "workspaceId": "WORKSPACE"}, "workspaceId"),
        ({"topic": "console"}, "workspaceId"),
        ({"topic": "everything"}, "topic"),
        ({"topic": "bridge", "scope": "x"}, "scope"),
    ],
)
def test_a_malformed_ticket_request_is_refused_by_field(api, seeded, body, field):
    body = {k: (seeded.workspace_id if v == "WORKSPACE" else v) for k, v in body.items()}

    assert_problem(api.post(TICKETS, json=body, headers=bearer(seeded.human_token)), 422, field)


def test_no_token_or_a_revoked_one_mints_nothing(api, seeded):
    assert api.post(TICKETS, json={"topic": "bridge"}).status_code == 401
    assert api.post(TICKETS, json={"topic": "bridge"}, headers=bearer("aw_human_made-up")).status_code == 401


def test_a_stack_without_a_websocket_api_answers_503_so_clients_long_poll(runtime, live, seeded):
    with httpx.Client(base_url=live.url, timeout=30) as client:
        refused = client.post(TICKETS, json={"topic": "bridge"}, headers=bearer(seeded.human_token))

    assert_problem(refused, 503, "push is not configured", "long-poll")
    assert int(refused.headers["retry-after"]) >= 600


def test_a_ticket_is_stored_only_as_its_hash(push_on, seeded):
    minted = push.mint_ticket(push_on, principal(push_on, seeded.human_token), hash_token(seeded.human_token),
                              "bridge", None)  # fmt: skip

    stored = item(push_on, keys.push_ticket_pk(hash_token(minted["ticket"])), keys.PUSH_SK)
    assert stored is not None
    text = json.dumps(stored)
    assert minted["ticket"] not in text and minted["ticket"].removeprefix(rules.TICKET_PREFIX) not in text
    assert seeded.human_token not in text  # the token it is bound to: by hash too, as its own item is keyed
    assert stored["expiresAt"]["N"] == str(int(parse_iso(minted["expiresAt"]).timestamp()))


def test_minting_is_bounded_per_token_and_minute_with_retry_after(api, push_on, seeded, clock):
    clock.set(clock.now.replace(second=5, microsecond=0))
    body = {"topic": "bridge"}
    for _ in range(rules.TICKETS_PER_MINUTE):
        assert api.post(TICKETS, json=body, headers=bearer(seeded.human_token)).status_code == 201

    refused = api.post(TICKETS, json=body, headers=bearer(seeded.human_token))
    assert_problem(refused, 429, "push tickets this minute")
    assert 1 <= int(refused.headers["retry-after"]) <= 56
    # Another token of the account has its own count; the next minute, this one mints again.
    other = accounts.issue_token(push_on.accounts, TokenKind.HUMAN, seeded.account_id, None).token
    assert api.post(TICKETS, json=body, headers=bearer(other)).status_code == 201
    clock.advance(seconds=60)
    assert api.post(TICKETS, json=body, headers=bearer(seeded.human_token)).status_code == 201


# == sockets: the push function's handler, as API Gateway invokes it ===========================================


def ws_event(name: str, connection_id: str, ticket: str | None = None, body: str | None = None) -> dict[str, Any]:
    event = json.loads((ROOT / "events" / name).read_text())
    event["requestContext"]["connectionId"] = connection_id
    if "queryStringParameters" in event:
        if ticket is None:
            event.pop("queryStringParameters")
            event.pop("multiValueQueryStringParameters")
        else:
            event["queryStringParameters"]["ticket"] = ticket
            event["multiValueQueryStringParameters"]["ticket"] = [ticket]
    if body is not None:
        event["body"] = body
    return event


@pytest.fixture
def push_lambda(push_on, monkeypatch):
    """functions/push/app.py loaded with the environment template.yaml gives it, on this test's resources."""
    module = load_function("push", push_on, monkeypatch)

    def invoke(event: dict[str, Any]) -> dict[str, Any]:
        return module.handler(event, LambdaContext(FUNCTION_NAMES["push"]))

    invoke.runtime = module._runtime  # type: ignore[attr-defined]
    return invoke


def test_the_sample_websocket_events_are_shaped_like_api_gateways():
    for name, route, kind in (("push_connect.json", "$connect", "CONNECT"),
                              ("push_disconnect.json", "$disconnect", "DISCONNECT"),
                              ("push_ping.json", "$default", "MESSAGE")):  # fmt: skip
        context = json.loads((ROOT / "events" / name).read_text())["requestContext"]
        assert (context["routeKey"], context["eventType"], context["stage"]) == (route, kind, "live")
        assert context["connectionId"] and context["apiId"] and context["domainName"].startswith(context["apiId"])


def test_a_ticket_opens_a_socket_recorded_with_its_listener_and_disconnect_forgets_both(push_lambda, push_on, seeded):
    minted = ticket(push_on, seeded.human_token, "console", seeded.workspace_id)

    assert push_lambda(ws_event("push_connect.json", "Conn1aaaaaaaaaa=", minted)) == {"statusCode": 200}

    connection = item(push_on, keys.push_connection_pk("Conn1aaaaaaaaaa="), keys.PUSH_SK)
    listener = item(
        push_on, keys.push_listeners_pk("console", seeded.workspace_id), keys.push_listener_sk("Conn1aaaaaaaaaa=")
    )
    assert connection["topic"] == {"S": "console"} and connection["scope"] == {"S": seeded.workspace_id}
    assert listener["tokenId"] == connection["tokenId"] == {"S": principal(push_on, seeded.human_token).token_id}
    lives = int(listener["expiresAt"]["N"]) - int(parse_iso(listener["connectedAt"]["S"]).timestamp())
    assert 2 * 3600 < lives <= rules.CONNECTION_SECONDS  # past API Gateway's 2-hour cut, so TTL is the backstop
    assert item(push_on, keys.push_ticket_pk(hash_token(minted)), keys.PUSH_SK) is None  # spent

    assert push_lambda(ws_event("push_disconnect.json", "Conn1aaaaaaaaaa=")) == {"statusCode": 200}
    assert item(push_on, keys.push_connection_pk("Conn1aaaaaaaaaa="), keys.PUSH_SK) is None
    assert push_on.push.listeners("console", seeded.workspace_id, 10) == []
    # A second notice (or one for a socket that was refused) changes nothing.
    assert push_lambda(ws_event("push_disconnect.json", "Conn1aaaaaaaaaa=")) == {"statusCode": 200}


def test_a_ticket_opens_one_socket_only(push_lambda, push_on, seeded):
    minted = ticket(push_on, seeded.agent_token, "channel")

    assert push_lambda(ws_event("push_connect.json", "Conn2aaaaaaaaaa=", minted)) == {"statusCode": 200}
    assert push_lambda(ws_event("push_connect.json", "Conn3aaaaaaaaaa=", minted)) == {"statusCode": 401}

    assert listening(push_on, "channel", seeded.workspace_id) == ["Conn2aaaaaaaaaa="]


def test_a_ticket_expires_after_a_minute(push_lambda, push_on, seeded, clock):
    minted = ticket(push_on, seeded.human_token, "bridge")
    push_lambda.runtime.clock = clock
    clock.advance(seconds=rules.TICKET_SECONDS + 1)

    assert push_lambda(ws_event("push_connect.json", "Conn4aaaaaaaaaa=", minted)) == {"statusCode": 401}
    assert push_on.push.listeners("bridge", seeded.account_id, 10) == []


def test_a_revoked_tokens_ticket_opens_nothing(push_lambda, push_on, seeded):
    second = accounts.issue_token(push_on.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    minted = ticket(push_on, second.token, "channel")
    push_on.accounts.revoke_token(seeded.account_id, seeded.workspace_id, second.record.id)

    assert push_lambda(ws_event("push_connect.json", "Conn5aaaaaaaaaa=", minted)) == {"statusCode": 401}
    assert push_on.push.listeners("channel", seeded.workspace_id, 10) == []


@pytest.mark.parametrize("sent", [None, "", "aw_ticket_made-up", "aw_ticket_" + "x" * 5000, "aw_human_not-a-ticket"])
def test_a_socket_without_a_good_ticket_is_refused(push_lambda, push_on, seeded, sent):
    assert push_lambda(ws_event("push_connect.json", "Conn6aaaaaaaaaa=", sent)) == {"statusCode": 401}
    assert item(push_on, keys.push_connection_pk("Conn6aaaaaaaaaa="), keys.PUSH_SK) is None


def test_a_ping_is_answered_with_a_pong_and_anything_else_with_a_small_error_frame(push_lambda):
    assert push_lambda(ws_event("push_ping.json", "Conn7aaaaaaaaaa=")) == {"statusCode": 200, "body": '{"type":"pong"}'}
    for body in ('{"type": "ping", "at": 1}', " " + json.dumps({"type": "ping"})):
        assert json.loads(push_lambda(ws_event("push_ping.json", "Conn7aaaaaaaaaa=", body=body))["body"]) == rules.PONG
    for body in ("hello", '{"type": "subscribe", "topic": "console"}', "[]", "x" * 100_000):
        answer = push_lambda(ws_event("push_ping.json", "Conn7aaaaaaaaaa=", body=body))
        frame = json.loads(answer["body"])
        assert frame["type"] == "error" and "ping" in frame["error"] and len(answer["body"]) < 200


# == the one sender ===============================================================================================


def test_a_push_reaches_the_listeners_of_its_scope_and_no_other(push_on, seeded, sockets):
    neighbour, neighbour_agent = other_workspace(push_on, seeded.account_id)
    connected(push_on, "ConsA1aaaaaaaaa=", seeded.human_token, "console", seeded.workspace_id)
    connected(push_on, "ConsA2aaaaaaaaa=", seeded.human_token, "console", seeded.workspace_id)
    connected(push_on, "ConsB1aaaaaaaaa=", seeded.human_token, "console", neighbour)
    connected(push_on, "ChanA1aaaaaaaaa=", seeded.agent_token, "channel")

    push.console_changed(push_on, seeded.workspace_id, "0kGogHmaqvZ")
    (body,) = pushes(push_on)

    assert body == {"type": "push", "topic": "console", "scope": seeded.workspace_id,
                    "message": {"type": "changed", "what": "needs", "taskId": "0kGogHmaqvZ"}}  # fmt: skip
    assert deliver_all(push_on, [body]) == [2]
    assert dict(sockets.frames) == {
        "ConsA1aaaaaaaaa=": [body["message"]],
        "ConsA2aaaaaaaaa=": [body["message"]],
    }


def test_moto_records_what_the_sender_posts_through_the_connections_api(push_on, seeded):
    """The real client, on the moto server like every AWS call locally: the frame arrives as posted. (An id without
    API Gateway's trailing `=`, which the client percent-encodes in the path and moto keeps encoded.)"""
    connected(push_on, "MotoAaaaaaaaaaaQ", seeded.human_token, "bridge")

    push.publish(push_on, "bridge", seeded.account_id, {"type": "siteCall", "id": "0kGogHmaqvZ", "status": "queued"})
    assert deliver_all(push_on, pushes(push_on)) == [1]

    (received,) = [
        backend["us-east-1"].connections["MotoAaaaaaaaaaaQ"].data
        for backend in apigatewaymanagementapi_backends.values()
        if "MotoAaaaaaaaaaaQ" in backend["us-east-1"].connections
    ]
    assert json.loads(received) == {"type": "siteCall", "id": "0kGogHmaqvZ", "status": "queued"}


def test_a_gone_connection_loses_its_items_and_the_others_still_hear(push_on, seeded, sockets):
    connected(push_on, "GoneAaaaaaaaaaa=", seeded.human_token, "bridge")
    connected(push_on, "HereAaaaaaaaaaa=", seeded.human_token, "bridge")
    sockets.gone.add("GoneAaaaaaaaaaa=")

    push.publish(push_on, "bridge", seeded.account_id, {"type": "siteCall", "id": "0kGogHmaqvZ", "status": "pending"})
    assert deliver_all(push_on, pushes(push_on)) == [1]

    assert list(sockets.frames) == ["HereAaaaaaaaaaa="]
    assert listening(push_on, "bridge", seeded.account_id) == ["HereAaaaaaaaaaa="]
    assert item(push_on, keys.push_connection_pk("GoneAaaaaaaaaaa="), keys.PUSH_SK) is None


def test_a_failed_post_is_logged_and_counted_never_raised_or_retried(push_on, seeded, sockets, logged):
    connected(push_on, "BusyAaaaaaaaaaa=", seeded.human_token, "bridge")
    sockets.failing.add("BusyAaaaaaaaaaa=")

    push.publish(push_on, "bridge", seeded.account_id, {"type": "siteCall", "id": "0kGogHmaqvZ", "status": "queued"})
    assert deliver_all(push_on, pushes(push_on)) == [0]  # handled: the queue deletes it, nobody retries a hint

    assert "LimitExceededException" in logged.getvalue()
    assert len(push_on.push.listeners("bridge", seeded.account_id, 10)) == 1  # not gone: only busy


def test_a_message_too_large_for_a_frame_is_sent_as_fetch(push_on, seeded, sockets):
    connected(push_on, "BigAaaaaaaaaaaa=", seeded.agent_token, "channel")
    huge = {"type": "event", "cursor": "0kGogHmaqvZ", "event": {"content": "é" * 20_000}}  # 40 KB in UTF-8

    push.publish(push_on, "channel", seeded.workspace_id, huge)
    (body,) = pushes(push_on)
    assert deliver_all(push_on, [body]) == [1]

    fetch = {"type": "fetch", "topic": "channel", "scope": seeded.workspace_id, "cursor": "0kGogHmaqvZ"}
    assert body["message"] == fetch  # the queue never carries it whole either
    assert sockets.frames["BigAaaaaaaaaaaa="] == [fetch]
    # And a message that reaches the sender whole (queued by an older publisher) is cut there, at the frame.
    deliver_all(push_on, [{**body, "message": huge}])
    assert sockets.frames["BigAaaaaaaaaaaa="] == [fetch, fetch]


def test_a_revoked_tokens_open_socket_hears_nothing_more(push_on, seeded, sockets):
    second = accounts.issue_token(push_on.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    connected(push_on, "RevokedAaaaaaaa=", second.token, "channel")
    connected(push_on, "StaysAaaaaaaaaa=", seeded.agent_token, "channel")
    push_on.accounts.revoke_token(seeded.account_id, seeded.workspace_id, second.record.id)

    channel.push(push_on, seeded.workspace_id, "reply", "0kGogHmaqvZ", "a secret reply")
    assert deliver_all(push_on, pushes(push_on)) == [1]

    assert list(sockets.frames) == ["StaysAaaaaaaaaa="]
    assert listening(push_on, "channel", seeded.workspace_id) == ["StaysAaaaaaaaaa="]


def test_a_permission_verdict_reaches_the_asking_tokens_sockets_alone(push_on, seeded, sockets):
    second = accounts.issue_token(push_on.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    asker = Actor("agent", seeded.account_id, seeded.workspace_id, principal(push_on, seeded.agent_token).token_id)
    connected(push_on, "AskerAaaaaaaaaa=", seeded.agent_token, "channel")
    connected(push_on, "OtherAaaaaaaaaa=", second.token, "channel")
    question, _ = channel.ask_permission(push_on, asker, "req-1", "Bash", "ls", "", None)
    pushes(push_on)  # the console's inbox heard of the question; not what this test is about

    channel.decide(push_on, seeded.workspace_id, question["id"], "allow")
    bodies = pushes(push_on)
    deliver_all(push_on, bodies)

    (verdict,) = [body for body in bodies if body["topic"] == "channel"]
    assert verdict["tokenId"] == asker.token_id
    assert list(sockets.frames) == ["AskerAaaaaaaaaa="]
    (frame,) = sockets.frames["AskerAaaaaaaaaa="]
    assert frame["event"]["meta"] == {"kind": "permission", "request_id": "req-1", "behavior": "allow"}


def test_the_events_lambda_delivers_the_sample_push_message(push_on, monkeypatch):
    module = load_function("events", push_on, monkeypatch)
    event = json.loads((ROOT / "events" / "sqs_event_push.json").read_text())

    for _ in range(2):  # warm
        assert module.handler(event, LambdaContext(FUNCTION_NAMES["events"])) == {"batchItemFailures": []}


# == publish points: one SQS message each, in the request that made the change ================================


def agent_of(rt: Runtime, seeded) -> Actor:
    return Actor("agent", seeded.account_id, seeded.workspace_id, principal(rt, seeded.agent_token).token_id)


def test_a_stored_channel_event_publishes_one_push_with_its_cursor(push_on, seeded):
    human = Actor("human", seeded.account_id, seeded.workspace_id, principal(push_on, seeded.human_token).token_id)

    task = tasks.create_task(push_on, human, tasks.NewTask("Ship it", "details"))

    (body,) = [body for body in pushes(push_on) if body["topic"] == "channel"]  # the console hears it apart
    assert body["scope"] == seeded.workspace_id
    message = body["message"]
    stored = push_on.channel.events_after(seeded.workspace_id, "0", 10)
    assert message == {"type": "event", "cursor": stored[-1].id, "event": stored[-1].public()}
    assert message["event"]["taskId"] == task.id and message["event"]["kind"] == "task"


def test_a_site_call_waiting_for_the_human_publishes_to_the_bridge_and_the_console(push_on, seeded):
    tool = {"name": "delete_repo", "description": "Delete it", "inputSchema": {"type": "object"}, "annotations": {}}
    site_tools.report_sites(push_on, seeded.account_id, [{"origin": SITE, "title": "Tools", "tools": [tool]}])
    agent = agent_of(push_on, seeded)
    task = tasks.create_task(push_on, agent, tasks.NewTask("Clean up", ""))
    pushes(push_on)  # the task's creation: its board's business (tests/integration/test_push_console.py)

    call = site_tools.start_call(push_on, agent, task.id, SITE, "delete_repo", {})

    bodies = pushes(push_on)
    assert [(b["topic"], b["scope"], b["message"]) for b in bodies] == [
        ("bridge", seeded.account_id, {"type": "siteCall", "id": call.id, "status": "pending",
                                       "workspaceId": seeded.workspace_id}),
        ("console", seeded.workspace_id, {"type": "changed", "what": "needs", "taskId": task.id}),
    ]  # fmt: skip
    site_tools.decide(push_on, seeded.account_id, seeded.workspace_id, call.id, "allow_once")
    decided = pushes(push_on)
    assert [(b["topic"], b["message"].get("status")) for b in decided] == [("bridge", "queued"), ("console", None)]


def test_a_question_asked_and_answered_publishes_one_console_push_each(push_on, seeded):
    agent = agent_of(push_on, seeded)
    task = tasks.create_task(push_on, agent, tasks.NewTask("Ask", ""))
    pushes(push_on)

    schema = {"type": "object", "properties": {"colour": {"type": "string"}}}
    asked = elicitations.ask(push_on, agent, task.id, "Which colour?", None, schema, None, 600)
    assert [(b["topic"], b["message"]) for b in pushes(push_on)] == [
        ("console", {"type": "changed", "what": "needs", "taskId": task.id})
    ]

    elicitations.answer(push_on, seeded.workspace_id, asked.id, "decline", None)
    answered = pushes(push_on)
    assert sorted(b["topic"] for b in answered) == ["channel", "console"]  # the agent hears it; the inbox drops it


def test_a_blocker_publishes_to_the_consoles_inbox_and_a_plain_status_change_to_its_board_alone(push_on, seeded):
    agent = agent_of(push_on, seeded)
    made = task_board.create(push_on, agent, "Work", "", task_board.Fields())
    pushes(push_on)
    task_board.claim(push_on, agent, made.id)
    assert [b["message"] for b in pushes(push_on)] == [{"type": "changed", "what": "task", "taskId": made.id}]

    task_board.report_blocker(push_on, agent, made.id, None, ["Which database?"])

    assert [(b["topic"], b["message"]) for b in pushes(push_on)] == [
        ("console", {"type": "changed", "what": "needs", "taskId": made.id})
    ]


def test_nothing_is_published_while_push_is_off(runtime, seeded):
    human = Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")

    tasks.create_task(runtime, human, tasks.NewTask("Ship it", "details"))

    assert pushes(runtime) == []


def test_a_publish_that_cannot_be_enqueued_is_logged_and_the_change_stands(push_on, seeded, monkeypatch, logged):
    def refused(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("SQS is down")

    monkeypatch.setattr(push_on.queue, "send", refused)
    human = Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")

    task = tasks.create_task(push_on, human, tasks.NewTask("Ship it", "details"))

    assert push_on.tasks.get(seeded.workspace_id, task.id) is not None
    assert "push not enqueued" in logged.getvalue()
