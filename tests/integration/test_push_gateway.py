"""The local WebSocket gateway (`local.push_gateway`, issue 36): `make serve` serves the push protocol API Gateway
serves on AWS, through the same handlers and the same poster, so clients and tests use it unchanged.

Each test runs the app as `make serve` runs it (the `pushing` fixture: the gateway in front, the queue drained by
the local drivers) and talks to it as a client would: a ticket over REST, a real WebSocket, a real publish.
"""

import asyncio
import contextlib
import json
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agent_workspace.domain import push as rules
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tokens import hash_token
from agent_workspace.local import push_gateway
from agent_workspace.runtime import Runtime
from agent_workspace.services import tasks
from agent_workspace.store.push import ConnectionPoster
from tests.support import LiveServer, bearer

WAIT = 10  # seconds a test waits for what should arrive well inside one


def mint(live: LiveServer, token: str, topic: str, workspace_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"topic": topic} | ({"workspaceId": workspace_id} if workspace_id else {})
    answer = httpx.post(f"{live.url}/api/push/tickets", json=body, headers=bearer(token), timeout=WAIT)
    assert answer.status_code == 201, answer.text
    return answer.json()


def human(rt: Runtime, seeded: Any) -> Actor:
    found = rt.accounts.resolve_token(hash_token(seeded.human_token))
    assert found is not None
    return Actor("human", seeded.account_id, seeded.workspace_id, found.token_id)


async def next_message(socket: Any) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(socket.recv(), WAIT))


def refused_status(*urls: str) -> int:
    """The HTTP status that refused opening these sockets, one inside the other (a refusal opens none)."""

    async def scenario() -> None:
        async with contextlib.AsyncExitStack() as stack:
            for url in urls:
                await stack.enter_async_context(websockets.connect(url))

    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(scenario())
    return refused.value.response.status_code


def test_a_ticket_from_the_local_stack_names_its_websocket(pushing, seeded):
    minted = mint(pushing, seeded.agent_token, "channel")

    assert minted["url"] == f"ws://127.0.0.1:{pushing.port}{push_gateway.PATH}?ticket={minted['ticket']}"


def test_a_task_created_for_the_agent_is_pushed_to_its_channel_socket(pushing, runtime, seeded):
    async def scenario() -> dict[str, Any]:
        async with websockets.connect(mint(pushing, seeded.agent_token, "channel")["url"]) as socket:
            await asyncio.to_thread(tasks.create_task, runtime, human(runtime, seeded), tasks.NewTask("Ship it", ""))
            return await next_message(socket)

    message = asyncio.run(scenario())

    stored = runtime.channel.events_after(seeded.workspace_id, "0", 10)
    assert message == {"type": "event", "cursor": stored[-1].id, "event": stored[-1].public()}
    assert message["event"]["kind"] == "task"


def test_a_ping_is_answered_with_a_pong(pushing, seeded):
    async def scenario() -> list[dict[str, Any]]:
        async with websockets.connect(mint(pushing, seeded.agent_token, "channel")["url"]) as socket:
            await socket.send(json.dumps(rules.PING))
            pong = await next_message(socket)
            await socket.send("hello")
            return [pong, await next_message(socket)]

    pong, error = asyncio.run(scenario())

    assert pong == rules.PONG
    assert error["type"] == "error"


@pytest.mark.parametrize("query", ["", "?ticket=aw_ticket_made-up", "?ticket=not-a-ticket"])
def test_a_socket_without_a_good_ticket_is_refused_with_401(pushing, query):
    assert refused_status(f"ws://127.0.0.1:{pushing.port}{push_gateway.PATH}{query}") == 401
    assert pushing.gateway.connection_ids == []


def test_a_ticket_opens_one_socket_only(pushing, seeded):
    url = mint(pushing, seeded.human_token, "bridge")["url"]

    assert refused_status(url, url) == 401


def test_a_closed_socket_forgets_its_listener(pushing, runtime, seeded):
    async def scenario() -> int:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]):
            return len(runtime.push.listeners(rules.BRIDGE, seeded.account_id, 10))

    assert asyncio.run(scenario()) == 1
    # $disconnect runs once the gateway sees the close: after the client's close handshake, within moments.
    assert _eventually(lambda: runtime.push.listeners(rules.BRIDGE, seeded.account_id, 10) == [])


def test_the_server_closing_a_socket_is_seen_by_the_client_and_a_post_to_it_is_gone(pushing, runtime, seeded):
    poster = ConnectionPoster(runtime.clients.connections(runtime.settings.push_endpoint or ""))

    async def scenario() -> tuple[int | None, bool, bool]:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]) as socket:
            (connection_id,) = pushing.gateway.connection_ids
            reached = await asyncio.to_thread(poster.post, connection_id, b'{"type":"siteCall"}')
            assert await next_message(socket) == {"type": "siteCall"}
            await asyncio.to_thread(pushing.gateway.close, connection_id)
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(socket.recv(), WAIT)
            gone = await asyncio.to_thread(poster.post, connection_id, b"{}")
            return socket.close_code, reached, gone

    code, reached, after_close = asyncio.run(scenario())

    assert code == push_gateway.GOING_AWAY and reached is True and after_close is False


def test_an_idle_socket_is_closed_as_api_gateway_closes_it(pushing, seeded):
    pushing.gateway.idle_seconds = 0.5

    async def scenario() -> int | None:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]) as socket:
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(socket.recv(), WAIT)
            return socket.close_code

    assert asyncio.run(scenario()) == push_gateway.GOING_AWAY


def test_a_socket_reaching_its_longest_life_is_closed_even_when_busy(pushing, seeded):
    pushing.gateway.life_seconds = 1.0

    async def scenario() -> int | None:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]) as socket:
            with pytest.raises(ConnectionClosed):
                for _ in range(200):  # a ping every 0.1 s keeps it from idling, not from ageing out
                    await socket.send(json.dumps(rules.PING))
                    await asyncio.wait_for(socket.recv(), WAIT)
                    await asyncio.sleep(0.1)
            return socket.close_code

    assert asyncio.run(scenario()) == push_gateway.GOING_AWAY


def test_a_client_frame_over_32_kb_closes_the_socket(pushing, seeded):
    async def scenario() -> int | None:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]) as socket:
            await socket.send("x" * (rules.FRAME_BYTES_MAX + 1))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(socket.recv(), WAIT)
            return socket.close_code

    assert asyncio.run(scenario()) == push_gateway.TOO_BIG


def test_the_connections_endpoint_answers_only_this_processs_signed_posts(pushing, seeded):
    async def scenario() -> list[int]:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]):
            (connection_id,) = pushing.gateway.connection_ids
            url = f"{pushing.url}{push_gateway.CONNECTIONS}{connection_id}"
            unsigned = httpx.post(url, content=b'{"type":"siteCall"}', headers={"Origin": "https://evil.example"})
            forged = httpx.post(url, content=b"{}", headers={"Authorization": "AWS4-HMAC-SHA256 Credential=x/y"})
            return [unsigned.status_code, forged.status_code]

    assert asyncio.run(scenario()) == [403, 403]


def test_a_post_over_128_kb_is_refused_as_api_gateway_refuses_it(pushing, runtime, seeded):
    connections = runtime.clients.connections(runtime.settings.push_endpoint or "")

    async def scenario() -> str:
        async with websockets.connect(mint(pushing, seeded.human_token, "bridge")["url"]):
            (connection_id,) = pushing.gateway.connection_ids
            try:
                await asyncio.to_thread(
                    connections.post_to_connection,
                    ConnectionId=connection_id,
                    Data=b"x" * (push_gateway.POST_BYTES_MAX + 1),
                )
            except connections.exceptions.PayloadTooLargeException as error:
                return error.response["Error"]["Code"]
            return "posted"

    assert asyncio.run(scenario()) == "PayloadTooLargeException"


def test_the_app_serves_no_other_websocket(pushing):
    assert refused_status(f"ws://127.0.0.1:{pushing.port}/mcp") == 403


def _eventually(check: Any, seconds: float = WAIT) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())
