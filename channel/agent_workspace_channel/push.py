"""The channel's events over the workspace's WebSocket push (issue 36), the long poll as the fallback.

An open socket costs next to nothing while nothing happens, where every long poll holds a Lambda for its wait. The
socket is a hint, never the record: a pushed event goes into the session at once, then the poller reads over REST
without waiting from the saved cursor, and that read alone moves the cursor; so an event whose push was lost or came
out of order is still pushed, and once. Each (re)connect starts with the same read, for what was said meanwhile.

The socket keeps to API Gateway's rules (the local stack serves the same protocol): a ping every few minutes (a
socket idle 10 is closed), a new socket before the 2-hour cut, reconnects with exponential backoff and jitter. When
the workspace has no push (the ticket answers 503, or a server from before push) or a socket cannot be opened a few
times in a row, the long poll runs instead, and the socket is tried again later.
"""

import json
import logging
import random
import time
from dataclasses import dataclass
from typing import Any

import anyio
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from agent_workspace_channel import __version__
from agent_workspace_channel.poller import Poller
from agent_workspace_channel.upstream import Event, NoPush, Refused, Unreachable, Workspace

logger = logging.getLogger(__name__)

SOCKET, LONG_POLL = "socket", "long-poll"
MESSAGE_BYTES_MAX = 128 * 1024  # API Gateway's largest message; the workspace sends `fetch` for anything larger
OPEN_SECONDS = 10.0
PING = json.dumps({"type": "ping"})
NO_PUSH_RETRY_MAX = 3600.0  # however late a workspace without push says to ask again, ask within the hour


class NotOpened(Exception):
    """The socket's URL did not give a socket (refused, unreachable, timed out); the message names why, not the URL."""


@dataclass(frozen=True)
class Timing:
    """How the socket is kept; the tests shorten it."""

    ping_every: float = 270.0  # API Gateway closes a socket idle 10 minutes
    pong_within: float = 30.0  # a ping unanswered by then: the socket is dead though not closed
    renew_after: float = 110 * 60.0  # API Gateway ends every socket after 2 hours: the next one opens before
    backoff_first: float = 1.0
    backoff_cap: float = 60.0
    open_tries: int = 3  # sockets not had in a row before the long poll takes over
    long_poll_for: float = 600.0  # then the socket is tried again (or when a workspace without push says)


class PushSource:
    """Where the channel's events come from: the socket while one can be had, the long poll meanwhile."""

    def __init__(self, workspace: Workspace, poller: Poller, timing: Timing = Timing()) -> None:
        self._workspace = workspace
        self._poller = poller
        self._timing = timing
        self.source: str | None = None  # SOCKET or LONG_POLL, once known
        self._pong_due: float | None = None

    async def run(self) -> None:
        await self._poller.ready()
        while True:
            poll_for = await self._sockets()
            self._now(LONG_POLL, f"the socket is tried again in {poll_for:.0f} s")
            with anyio.move_on_after(poll_for):
                await self._poller.run()

    def _now(self, source: str, why: str) -> None:
        if source != self.source:
            self.source = source
            logger.info("channel events %s (%s)", "over the WebSocket" if source == SOCKET else "by long poll", why)

    async def _sockets(self) -> float:
        """Sockets one after another for as long as one can be had; then how long to long-poll before trying again."""
        failures = 0  # sockets not had (or not caught up on), in a row
        retry_after: float | None = None
        while True:
            if failures >= self._timing.open_tries:
                return self._timing.long_poll_for
            if failures:
                await anyio.sleep(max(retry_after or 0.0, self._backoff(failures)))
            try:
                dropped = await self._serve(await self._open(await self._workspace.push_ticket()))
            except NoPush as error:
                logger.info("no WebSocket push at this workspace (%s)", error)
                return min(error.retry_after or self._timing.long_poll_for, NO_PUSH_RETRY_MAX)
            except Refused as error:  # the ticket (the token: hammering will not cure it) or the read after it
                await self._poller.failed(error, 1)
                continue
            except (Unreachable, NotOpened) as error:
                failures += 1
                retry_after = getattr(error, "retry_after", None)
                logger.warning("no push socket (%s), try %d of %d", error, failures, self._timing.open_tries)
                continue
            failures = 0
            if dropped:
                await anyio.sleep(self._backoff(1))  # a moment, so that a stack shedding sockets is not hammered

    def _backoff(self, failures: int) -> float:
        """Exponential, capped, and jittered so that many bridges cut at once do not come back at once."""
        ceiling = min(self._timing.backoff_cap, self._timing.backoff_first * 2 ** (failures - 1))
        return random.uniform(ceiling / 2, ceiling)

    async def _open(self, url: str) -> ClientConnection:
        try:
            return await connect(
                url,
                open_timeout=OPEN_SECONDS,
                ping_interval=None,  # the protocol's own {"type": "ping"} keeps API Gateway's idle timer away
                close_timeout=2.0,  # a socket given up as silent does not hold the next one back
                max_size=MESSAGE_BYTES_MAX,
                user_agent_header=f"agent-workspace-channel/{__version__}",
            )
        except InvalidStatus as error:
            raise NotOpened(f"the socket answered HTTP {error.response.status_code}") from None
        except (OSError, TimeoutError, WebSocketException) as error:
            raise NotOpened(type(error).__name__) from None

    async def _serve(self, socket: ClientConnection) -> bool:
        """Catch up over REST, then relay what the socket hears until it drops (True) or renewal is due (False)."""
        try:
            await self._poller.catch_up()
            self._now(SOCKET, "pushed by the workspace")
            if await self._listen(socket):
                return True
            logger.info("renewing the push socket before the workspace's 2-hour cut")
            return False
        except ConnectionClosed as closed:
            logger.info("push socket closed (%s); reconnecting", closed.rcvd.code if closed.rcvd else "no close frame")
            return True
        finally:
            await socket.close()

    async def _listen(self, socket: ClientConnection) -> bool:
        """A frame at a time, a ping when it is time, until renewal is due (False) or the socket stops answering
        pings (True); raises `ConnectionClosed` when it drops."""
        timing = self._timing
        renew_at = time.monotonic() + timing.renew_after
        ping_at = time.monotonic() + timing.ping_every
        self._pong_due = None
        while (now := time.monotonic()) < renew_at:
            if self._pong_due is not None and now >= self._pong_due:
                logger.warning("push socket silent: no pong within %.0f s; reconnecting", timing.pong_within)
                return True
            if now >= ping_at:
                await socket.send(PING)
                if self._pong_due is None:  # an earlier ping still unanswered keeps its deadline
                    self._pong_due = now + timing.pong_within
                ping_at = now + timing.ping_every
            frame: str | bytes | None = None
            with anyio.move_on_after(min(renew_at, ping_at, self._pong_due or renew_at) - now):
                frame = await socket.recv()  # cancelling a recv loses nothing (websockets says so)
            if frame is not None:
                await self._heard(frame)
        return False

    async def _heard(self, frame: str | bytes) -> None:
        message = _parsed(frame)
        kind = message.get("type")
        if kind == "event":
            event = _event(message.get("event"))
            if event is not None:
                await self._poller.pushed(event)
            await self._poller.catch_up()  # the record: moves the cursor, and brings what a lost push did not
        elif kind == "fetch":  # too big for a frame: read it over REST
            await self._poller.catch_up()
        elif kind == "pong":
            self._pong_due = None
        elif kind == "error":
            logger.warning("the push socket answered an error: %.200s", message.get("error"))
        else:
            logger.debug("push frame ignored: %.40s", kind)


def _parsed(frame: str | bytes) -> dict[str, Any]:
    try:
        message = json.loads(frame)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _event(raw: object) -> Event | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return None
    try:
        return Event.of(raw)
    except (TypeError, ValueError, AttributeError):
        return None
