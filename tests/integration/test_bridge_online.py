"""The browser's online state with push (issue 36): an open bridge socket is the heartbeat of a browser that hears
its calls pushed, since such a browser makes no request while idle.

Sockets open and close through the push function's handler (functions/push/app.py) as API Gateway invokes it, on
moto; time passes by moving the runtime's clock, never by waiting.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from agent_workspace.domain.models import Actor
from agent_workspace.domain.push import LISTENERS_PER_PUSH
from agent_workspace.domain.site_tools import ONLINE_SECONDS
from agent_workspace.domain.tokens import hash_token
from agent_workspace.runtime import Runtime
from agent_workspace.services import push, site_tools, tasks
from tests.support import FUNCTION_NAMES, PUSH_URL, ROOT, LambdaContext, bearer, load_function

SITE = "https://shop.example"
TOOL = {"name": "list_items", "description": "The list", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True}}  # fmt: skip
STALE = ONLINE_SECONDS + 1  # seconds after which the browser's last report no longer keeps it online


@pytest.fixture
def push_on(runtime: Runtime) -> Runtime:
    """The runtime as the template configures it: a WebSocket API."""
    runtime.settings = runtime.settings.model_copy(update={"push_url": PUSH_URL})
    return runtime


@pytest.fixture
def sockets(push_on, monkeypatch):
    """The push function (functions/push/app.py) on this test's resources: `open_bridge(token, connection_id)`
    and `close(connection_id)` invoke its `$connect` and `$disconnect` as API Gateway would."""
    module = load_function("push", push_on, monkeypatch)
    context = LambdaContext(FUNCTION_NAMES["push"])

    def event(name: str, connection_id: str, ticket: str | None = None) -> dict[str, Any]:
        event = json.loads((ROOT / "events" / name).read_text())
        event["requestContext"]["connectionId"] = connection_id
        if ticket is not None:
            event["queryStringParameters"]["ticket"] = ticket
            event["multiValueQueryStringParameters"]["ticket"] = [ticket]
        return event

    class Sockets:
        @staticmethod
        def open_bridge(token: str, connection_id: str) -> None:
            principal = push_on.accounts.resolve_token(hash_token(token))
            assert principal is not None
            ticket = push.mint_ticket(push_on, principal, hash_token(token), "bridge", None)["ticket"]
            assert module.handler(event("push_connect.json", connection_id, ticket), context) == {"statusCode": 200}

        @staticmethod
        def close(connection_id: str) -> None:
            assert module.handler(event("push_disconnect.json", connection_id), context) == {"statusCode": 200}

    return Sockets()


@pytest.fixture
def shared(push_on, seeded) -> None:
    """The browser reported one site, then went quiet: past `ONLINE_SECONDS`, only a socket keeps it online."""
    site_tools.report_sites(push_on, seeded.account_id, [{"origin": SITE, "title": "Shop", "tools": [TOOL]}])


def agent_of(rt: Runtime, seeded) -> Actor:
    principal = rt.accounts.resolve_token(hash_token(seeded.agent_token))
    assert principal is not None
    return Actor("agent", seeded.account_id, seeded.workspace_id, principal.token_id)


@contextmanager
def dynamodb_requests(rt: Runtime) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every DynamoDB request the runtime's client sends meanwhile: (operation, parameters)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    events = rt.clients.dynamodb.meta.events

    def record(model: Any, params: dict[str, Any], **_: Any) -> None:
        seen.append((model.name, params))

    events.register("before-parameter-build.dynamodb", record)
    try:
        yield seen
    finally:
        events.unregister("before-parameter-build.dynamodb", record)


def test_a_browser_whose_bridge_socket_is_open_stays_online_without_polling_or_reporting(
    push_on, seeded, shared, sockets, clock, live
):
    sockets.open_bridge(seeded.human_token, "Bridge1aaaaaaa=")
    clock.advance(seconds=STALE)

    assert site_tools.is_online(push_on, seeded.account_id)
    state = httpx.get(f"{live.url}/api/bridge/sites", headers=bearer(seeded.human_token), timeout=10).json()
    assert state["online"] is True
    assert site_tools.search(push_on, seeded.account_id, None, None)["online"] is True
    agent = agent_of(push_on, seeded)
    task = tasks.create_task(push_on, agent, tasks.NewTask("Stock up", ""))
    call = site_tools.start_call(push_on, agent, task.id, SITE, "list_items", {})  # not refused as offline
    assert call.status == "queued"


def test_a_closed_socket_leaves_the_browser_offline_once_its_last_report_is_stale(
    push_on, seeded, shared, sockets, clock
):
    sockets.open_bridge(seeded.human_token, "Bridge2aaaaaaa=")
    sockets.close("Bridge2aaaaaaa=")  # $disconnect

    assert site_tools.is_online(push_on, seeded.account_id)  # its report, a moment ago, still counts
    clock.advance(seconds=STALE)
    assert not site_tools.is_online(push_on, seeded.account_id)
    assert site_tools.bridge_state(push_on, seeded.account_id)["online"] is False


def test_a_browser_minting_a_bridge_ticket_is_online_across_its_reconnect(push_on, seeded, shared, sockets, clock):
    sockets.open_bridge(seeded.human_token, "Bridge7aaaaaaa=")
    clock.advance(seconds=STALE)
    sockets.close("Bridge7aaaaaaa=")  # the server cut it; the browser mints a ticket to open the next one
    assert not site_tools.is_online(push_on, seeded.account_id)

    principal = push_on.accounts.resolve_token(hash_token(seeded.human_token))
    assert principal is not None
    push.mint_ticket(push_on, principal, hash_token(seeded.human_token), "bridge", None)

    assert site_tools.is_online(push_on, seeded.account_id)  # an agent's call in the gap is queued, not refused


def test_a_socket_past_its_expiry_counts_for_nothing_though_ttl_has_not_removed_it(
    push_on, seeded, shared, sockets, clock
):
    sockets.open_bridge(seeded.human_token, "Bridge3aaaaaaa=")
    (listener,) = push_on.push.listeners("bridge", seeded.account_id, 10)
    clock.advance(seconds=int(listener["expiresAt"]) - int(clock.now.timestamp()))  # its $disconnect never came

    assert push_on.push.listeners("bridge", seeded.account_id, 10) != []  # still stored
    assert not site_tools.is_online(push_on, seeded.account_id)


def test_one_open_socket_of_two_keeps_the_browser_online(push_on, seeded, shared, sockets, clock):
    sockets.open_bridge(seeded.human_token, "Bridge4aaaaaaa=")
    sockets.open_bridge(seeded.human_token, "Bridge5aaaaaaa=")  # a second Chrome signed in with the same token
    sockets.close("Bridge4aaaaaaa=")
    clock.advance(seconds=STALE)

    assert site_tools.is_online(push_on, seeded.account_id)


def test_a_console_socket_or_another_accounts_bridge_socket_does_not_make_this_browser_online(
    push_on, seeded, shared, sockets, clock
):
    principal = push_on.accounts.resolve_token(hash_token(seeded.human_token))
    assert principal is not None
    console = push.mint_ticket(push_on, principal, hash_token(seeded.human_token), "console", seeded.workspace_id)
    push.connect(push_on, "Console1aaaaaa=", console["ticket"])
    push_on.push.connect("Other1aaaaaaaa=", "bridge", "01ANOTHERACCOUNT0000000000", {"tokenHash": "x"},
                         int(clock.now.timestamp()) + 3600)  # fmt: skip
    clock.advance(seconds=STALE)

    assert not site_tools.is_online(push_on, seeded.account_id)


def test_the_socket_is_read_only_when_the_heartbeat_is_stale_with_one_bounded_query(
    push_on, seeded, shared, sockets, clock
):
    sockets.open_bridge(seeded.human_token, "Bridge6aaaaaaa=")

    with dynamodb_requests(push_on) as fresh:
        assert site_tools.is_online(push_on, seeded.account_id)
    clock.advance(seconds=STALE)
    with dynamodb_requests(push_on) as stale:
        assert site_tools.is_online(push_on, seeded.account_id)

    assert [name for name, _ in fresh] == ["GetItem"]
    assert [name for name, _ in stale] == ["GetItem", "Query"]
    query = stale[1][1]
    assert query["ExpressionAttributeValues"][":pk"] == {"S": f"PUSH#bridge#{seeded.account_id}"}
    assert query["Limit"] == LISTENERS_PER_PUSH


def test_without_push_no_socket_is_looked_for(runtime, seeded, clock):
    site_tools.report_sites(runtime, seeded.account_id, [{"origin": SITE, "title": "Shop", "tools": [TOOL]}])
    clock.advance(seconds=STALE)

    with dynamodb_requests(runtime) as requests:
        assert not site_tools.is_online(runtime, seeded.account_id)
    assert [name for name, _ in requests] == ["GetItem"]
