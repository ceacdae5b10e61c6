"""The push source against a fake WebSocket gateway (`websockets.serve`) and a fake REST record: what reaches the
session, once, in order, across drops and renewals; when the long poll takes over; and the heartbeat."""

import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fakes import Recorder, built, config, until
from websockets.asyncio.server import ServerConnection, serve

from agent_workspace_channel import poller as poller_module
from agent_workspace_channel.push import LONG_POLL, SOCKET, PushSource, Timing
from agent_workspace_channel.state import State
from agent_workspace_channel.upstream import Event, NoPush, Page, Refused, Unreachable, Workspace

pytestmark = pytest.mark.anyio

TICKET = "aw_ticket_not-for-the-logs"
POLL_WAIT = 20  # the bridge's default --poll-wait: a read with it is the long poll
QUICK = Timing(backoff_first=0.02, backoff_cap=0.1)


def stored(number: int, kind: str = "task") -> Event:
    ident = f"e{number:02d}"  # sorts as the workspace's ids do: by when they were made
    return Event(ident, kind, f"t{number}", f"content of {ident}", {"chat_id": f"t{number}", "kind": kind})


class Gateway:
    """The workspace's WebSocket: each connection it took, every frame a client sent, a pong for each ping."""

    def __init__(self) -> None:
        self.connections: list[ServerConnection] = []
        self.received: list[Any] = []
        self.answers_pings = True
        self.url = ""

    async def handler(self, connection: ServerConnection) -> None:
        self.connections.append(connection)
        async for frame in connection:
            message = json.loads(frame)
            self.received.append(message)
            if message == {"type": "ping"} and self.answers_pings:
                await connection.send(json.dumps({"type": "pong"}))

    async def send(self, message: dict[str, Any]) -> None:
        await self.connections[-1].send(json.dumps(message))

    def pings(self) -> int:
        return sum(message == {"type": "ping"} for message in self.received)


class Record:
    """The workspace's REST as the push source and the poller use it: the events stored (the record), the tickets it
    mints (or the refusals queued in `tickets`), and every read with its wait."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.events_stored: list[Event] = []
        self.reads: list[tuple[str | None, int]] = []
        self.tickets: list[Exception] = []  # what the next mints answer, before they mint
        self.failing_reads: list[Exception] = []  # what the next reads answer
        self.minted = 0

    async def events(self, cursor: str | None, wait: int) -> Page:
        self.reads.append((cursor, wait))
        if self.failing_reads:
            raise self.failing_reads.pop(0)
        after = [e for e in self.events_stored if cursor is None or e.id > cursor][:2]  # small pages: paging counts
        if not after and wait:
            await anyio.sleep(0.05)  # a long poll that found nothing, shortened
        return Page(after, after[-1].id if after else cursor or "e00")

    async def push_ticket(self) -> str:
        self.minted += 1
        if self.tickets:
            raise self.tickets.pop(0)
        return self.gateway.url

    async def task_status(self, task_id: str) -> str | None:
        return "notstarted"

    def long_polled(self) -> bool:
        return any(wait for _, wait in self.reads)


async def publish(record: Record, event: Event, pushed: bool = True) -> None:
    """An event stored, and pushed to the open socket as the workspace's sender frames it."""
    record.events_stored.append(event)
    if pushed:
        public = {"id": event.id, "kind": event.kind, "taskId": event.task_id, "content": event.content}
        message = {"type": "event", "cursor": event.id, "event": public | {"meta": event.meta, "at": "now"}}
        await record.gateway.send(message)


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    fake = Gateway()
    async with serve(fake.handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}/push?ticket={TICKET}"
        yield fake


def source_of(tmp_path: Path, record: Record, timing: Timing = QUICK) -> tuple[PushSource, Recorder, State]:
    poller, outbox, _, state, _ = built(tmp_path, record)
    return PushSource(record, poller, timing), outbox, state  # type: ignore[arg-type]


@asynccontextmanager
async def running(source: PushSource) -> AsyncIterator[None]:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(source.run)
        yield
        tasks.cancel_scope.cancel()


def contents(outbox: Recorder) -> list[str]:
    return [content.removeprefix("content of ") for content, _ in outbox.pushes]


# -- over the socket -----------------------------------------------------------------------------------------------


async def test_pushed_events_reach_the_session_once_in_order_and_no_long_poll_runs(tmp_path: Path, gateway, caplog):
    caplog.set_level(logging.DEBUG, logger="agent_workspace_channel")
    record = Record(gateway)
    await publish(record, stored(1), pushed=False)  # said before the bridge ran: the first catch-up reads it
    source, outbox, state = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == SOCKET and contents(outbox) == ["e01"])
        for number in (2, 3, 4):
            await publish(record, stored(number))
        await until(lambda: state.cursor == "e04")
    assert contents(outbox) == ["e01", "e02", "e03", "e04"]
    assert not record.long_polled() and record.minted == 1
    assert State.load(tmp_path / "s.json").cursor == "e04"
    assert TICKET not in caplog.text and "channel events over the WebSocket" in caplog.text


async def test_an_event_whose_push_was_lost_arrives_with_the_read_that_follows_the_next_push(tmp_path: Path, gateway):
    record = Record(gateway)
    source, outbox, state = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == SOCKET)
        await publish(record, stored(1), pushed=False)  # its push lost on the way
        await publish(record, stored(2))
        await until(lambda: state.cursor == "e02")
    assert contents(outbox) == ["e02", "e01"]  # the push at once, then the record's read; each once


async def test_a_socket_killed_mid_way_loses_nothing_the_new_socket_catches_up_from_the_cursor(tmp_path: Path, gateway):
    record = Record(gateway)
    source, outbox, state = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == SOCKET)
        await publish(record, stored(1))
        await until(lambda: contents(outbox) == ["e01"])
        await publish(record, stored(2), pushed=False)  # stored as the socket dies: its push never arrives
        await publish(record, stored(3), pushed=False)
        gateway.connections[0].transport.abort()  # no close frame: a cut connection
        await until(lambda: len(gateway.connections) == 2 and state.cursor == "e03")
        await publish(record, stored(4))
        await until(lambda: state.cursor == "e04")
    assert contents(outbox) == ["e01", "e02", "e03", "e04"]
    assert record.minted == 2 and not record.long_polled()


async def test_a_fetch_frame_reads_the_channel_over_rest_from_the_cursor(tmp_path: Path, gateway):
    record = Record(gateway)
    source, outbox, state = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == SOCKET and state.cursor == "e00")
        reads = len(record.reads)
        await publish(record, stored(1), pushed=False)  # too big for a frame
        await gateway.send({"type": "fetch", "topic": "channel", "scope": "0kGogHmaqvZ", "cursor": "e01"})
        await until(lambda: contents(outbox) == ["e01"])
    assert record.reads[reads] == ("e00", 0)


async def test_the_socket_is_pinged_and_one_that_stops_answering_is_replaced(tmp_path: Path, gateway):
    record = Record(gateway)
    source, outbox, _ = source_of(tmp_path, record, Timing(ping_every=0.05, pong_within=0.2, backoff_first=0.02))
    async with running(source):
        await until(lambda: gateway.pings() >= 3)
        assert len(gateway.connections) == 1  # answered pings keep the socket
        gateway.answers_pings = False
        await until(lambda: len(gateway.connections) == 2)
        await publish(record, stored(1))
        await until(lambda: contents(outbox) == ["e01"])
    assert not record.long_polled()


async def test_a_socket_is_renewed_before_the_gateways_cut_without_pushing_anything_twice(tmp_path: Path, gateway):
    record = Record(gateway)
    source, outbox, state = source_of(tmp_path, record, Timing(renew_after=0.3))
    async with running(source):
        await until(lambda: source.source == SOCKET)
        await publish(record, stored(1))
        await until(lambda: len(gateway.connections) == 3)
        await publish(record, stored(2))
        await until(lambda: state.cursor == "e02")
    assert contents(outbox) == ["e01", "e02"]
    assert all(c.close_code == 1000 for c in gateway.connections[:2])  # closed by the bridge, cleanly


async def test_a_catch_up_that_fails_is_tried_again_on_a_new_socket(tmp_path: Path, gateway):
    record = Record(gateway)
    await publish(record, stored(1), pushed=False)
    record.failing_reads = [Unreachable("the workspace answered 502")]
    source, outbox, _ = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == SOCKET and contents(outbox) == ["e01"])
    assert record.minted == 2 and len(gateway.connections) == 2


# -- the long poll instead -----------------------------------------------------------------------------------------


async def test_a_workspace_without_push_is_long_polled_and_the_socket_tried_again_later(tmp_path: Path, gateway):
    record = Record(gateway)
    record.tickets = [NoPush("the push ticket answered 503", None)]
    source, outbox, state = source_of(tmp_path, record, Timing(long_poll_for=0.5))
    async with running(source):
        await until(lambda: source.source == LONG_POLL)
        await publish(record, stored(1), pushed=False)
        await until(lambda: contents(outbox) == ["e01"])
        assert record.long_polled() and record.minted == 1
        await until(lambda: source.source == SOCKET)  # tried again after long_poll_for
        polls = len([wait for _, wait in record.reads if wait])
        await publish(record, stored(2))
        await until(lambda: state.cursor == "e02")
    assert contents(outbox) == ["e01", "e02"] and record.minted == 2
    assert len([wait for _, wait in record.reads if wait]) == polls  # the long poll stopped once the socket opened


async def test_a_socket_that_cannot_be_opened_a_few_times_in_a_row_gives_way_to_the_long_poll(tmp_path: Path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    record = Record(Gateway())
    record.gateway.url = f"ws://127.0.0.1:{port}/push?ticket={TICKET}"  # nothing listens there
    source, outbox, _ = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == LONG_POLL)
        await publish(record, stored(1), pushed=False)
        await until(lambda: contents(outbox) == ["e01"])
    assert record.minted == QUICK.open_tries and record.long_polled()


async def test_a_busy_ticket_counts_as_a_socket_not_had_and_waits_its_retry_after(tmp_path: Path, gateway):
    record = Record(gateway)
    record.tickets = [Unreachable("the workspace answered 429", retry_after=0.3)]
    source, _, _ = source_of(tmp_path, record)
    started = anyio.current_time()
    async with running(source):
        await until(lambda: source.source == SOCKET)
    assert anyio.current_time() - started >= 0.3 and record.minted == 2 and not record.long_polled()


async def test_a_refused_token_is_not_long_polled_but_asked_again_later_as_the_poll_does(
    tmp_path: Path, gateway, monkeypatch
):
    monkeypatch.setattr(poller_module, "REFUSED_SECONDS", 0.2)
    record = Record(gateway)
    record.tickets = [Refused(401, "bad token"), Refused(401, "bad token")]
    source, _, _ = source_of(tmp_path, record)
    async with running(source):
        await until(lambda: source.source == SOCKET)  # the token was allowed again
    assert record.minted == 3 and record.reads and not record.long_polled()


# -- the ticket over REST ------------------------------------------------------------------------------------------


async def test_the_ticket_is_minted_with_the_token_and_its_refusals_read_as_what_they_mean(tmp_path: Path, monkeypatch):
    answers: list[httpx2.Response] = []
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return answers.pop(0)

    real = httpx2.AsyncClient
    monkeypatch.setattr(httpx2, "AsyncClient", lambda **kw: real(transport=httpx2.MockTransport(answer), **kw))
    workspace = Workspace(config(tmp_path))
    url = f"ws://127.0.0.1:9/push?ticket={TICKET}"
    answers += [
        httpx2.Response(201, json={"ticket": TICKET, "url": url, "expiresAt": "soon"}),
        httpx2.Response(503, headers={"Retry-After": "3600"}, json={"detail": "push is not configured"}),
        httpx2.Response(404, json={"detail": "Not Found"}),
        httpx2.Response(429, headers={"Retry-After": "7"}, json={"detail": "10 tickets this minute"}),
        httpx2.Response(401, json={"detail": "unknown token"}),
        httpx2.Response(201, json={"ticket": TICKET, "url": "http://127.0.0.1:9/push", "expiresAt": "soon"}),
    ]
    try:
        assert await workspace.push_ticket() == url
        with pytest.raises(NoPush) as off:
            await workspace.push_ticket()
        assert off.value.retry_after == 3600
        with pytest.raises(NoPush):
            await workspace.push_ticket()  # a server from before push
        with pytest.raises(Unreachable) as busy:
            await workspace.push_ticket()
        assert busy.value.retry_after == 7
        with pytest.raises(Refused) as refused:
            await workspace.push_ticket()
        assert refused.value.status == 401
        with pytest.raises(NoPush):
            await workspace.push_ticket()  # no WebSocket URL to open
    finally:
        await workspace.aclose()
    assert seen[0].method == "POST" and seen[0].url.path == "/api/push/tickets"
    assert seen[0].headers["Authorization"] == "Bearer t" and json.loads(seen[0].content) == {"topic": "channel"}
