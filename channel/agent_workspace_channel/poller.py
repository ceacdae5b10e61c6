"""The workspace's news, pushed into the session: the channel's events read from the saved cursor (by long poll, or
without waiting when the WebSocket push says there is news: see `push`), each event pushed once, and a task still not
started some time after its push pushed again, a bounded number of times.

Claude Code acknowledges nothing, and drops a push made while it is starting or not listening, so a task is the one
thing worth pushing again: the agent's own status change (`ongoing`) is the acknowledgement.
"""

import logging
import time
from collections.abc import Awaitable, Callable

import anyio

from agent_workspace_channel.config import Config
from agent_workspace_channel.outbox import Outbox
from agent_workspace_channel.relay import Relay
from agent_workspace_channel.state import Pending, State
from agent_workspace_channel.upstream import Event, Refused, Unreachable, Workspace

logger = logging.getLogger(__name__)

# Events that hand the agent a task to start: pushed again while the task stays not started.
STARTS = frozenset({"task", "assigned", "reopened", "trigger"})
BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
REFUSED_SECONDS = 60.0  # a token the workspace refuses is not cured by hammering it
RECHECK_SECONDS = 5.0  # a status read that failed is tried again this much later
CATCH_UP_PAGES = 100  # reads in one catch-up at most: a workspace that never stops answering news is not chased


class Poller:
    def __init__(
        self,
        config: Config,
        workspace: Workspace,
        state: State,
        outbox: Outbox,
        relay: Relay,
        on_answer: Callable[[], Awaitable[None]],
    ) -> None:
        self._config = config
        self._workspace = workspace
        self._state = state
        self._outbox = outbox
        self._relay = relay
        self._on_answer = on_answer  # the workspace answered a poll: a list answered from memory is worth reading again
        self._wake = anyio.Event()

    # -- the events -------------------------------------------------------------------------------------------

    async def ready(self) -> None:
        """Returns once Claude Code listens: nothing is read before, so nothing is read and then dropped."""
        await self._outbox.ready()

    async def run(self) -> None:
        """The long poll, until cancelled (the push source runs it while no socket can be had, then tries one again)."""
        await self.ready()
        failures = 0
        while True:
            try:
                await self.read(self._config.poll_wait)
            except (Unreachable, Refused) as error:
                failures += 1
                await self.failed(error, failures)
                continue
            if failures:
                logger.info("workspace reachable again at %s", self._config.url)
                failures = 0

    async def read(self, wait: int) -> bool:
        """One read of what came after the saved cursor, waiting up to `wait` seconds when nothing did; each event
        is pushed once, then the cursor moves. True when the read moved the cursor past new events."""
        backlog = self._state.cursor is None  # the first read takes the last day's events and a cursor at once
        page = await self._workspace.events(self._state.cursor, 0 if backlog else wait)
        await self._on_answer()
        for event in page.events:
            await self._handle(event, backlog)
        if not page.cursor or page.cursor == self._state.cursor:
            return False
        self._state.cursor = page.cursor
        self._save()
        return bool(page.events)

    async def catch_up(self) -> None:
        """Read, without waiting, until nothing is new: after a socket opens, and after each push (a push is a hint,
        and this read, the record, is what moves the cursor: an event whose push was lost is pushed now)."""
        for _ in range(CATCH_UP_PAGES):
            if not await self.read(0):
                return

    async def pushed(self, event: Event) -> None:
        """An event the WebSocket pushed: into the session at once, and never again when a read returns it."""
        await self._handle(event, backlog=False)

    async def failed(self, error: Exception, failures: int) -> None:
        """A read failed, the `failures`-th time in a row: drop a cursor the workspace no longer knows, or wait
        before the next read (long after a refusal, which hammering will not cure)."""
        if isinstance(error, Refused) and error.status == 422 and "cursor" in error.detail and self._state.cursor:
            logger.warning("the workspace refused the saved cursor (%s); starting from the last day's", error.detail)
            self._state.cursor = None
            return
        if isinstance(error, Refused):
            logger.error("the workspace refused the channel (%s): %s", error.status, error.detail)
            await anyio.sleep(REFUSED_SECONDS)
            return
        delay = BACKOFF[min(failures, len(BACKOFF)) - 1]
        if failures == 1:
            logger.warning("workspace unreachable at %s (%s); retrying", self._config.url, error)
        await anyio.sleep(delay)

    async def _handle(self, event: Event, backlog: bool) -> None:
        if self._state.was_pushed(event.id):
            return
        task_id = event.task_id
        skip = bool(backlog and event.kind in STARTS and task_id and not await self._still_to_start(task_id))
        # Pushed and recorded together: a read cancelled in between (the long poll giving way to a socket) would
        # push the event again on the next read.
        with anyio.CancelScope(shield=True):
            if event.kind == "permission":
                await self._relay.verdict(event)
            elif skip:
                logger.info("event %s skipped: task %s was started before this bridge ran", event.id, event.task_id)
            else:
                await self._outbox.channel(event.content, event.meta)
                logger.info("pushed %s event %s (task %s)", event.kind, event.id, event.task_id)
                if event.kind in STARTS and event.task_id and self._config.repush_max > 0:
                    self._state.pending[event.task_id] = Pending(
                        event.task_id,
                        event.content,
                        event.meta,
                        time.time() + self._config.repush_after,
                        self._config.repush_max,
                    )
                    self._wake.set()
            self._state.pushed.append(event.id)
            self._save()

    async def _still_to_start(self, task_id: str) -> bool:
        try:
            return await self._workspace.task_status(task_id) in (None, "notstarted")
        except (Unreachable, Refused):
            return True  # better pushed twice than never

    # -- pushed again -------------------------------------------------------------------------------------------

    def started(self, task_id: str) -> None:
        """The agent took the task (through a tool call this bridge forwarded): no need to push it again."""
        if self._state.pending.pop(task_id, None) is not None:
            self._save()

    async def repush(self) -> None:
        await self._outbox.ready()
        while True:
            due = min((p.due for p in self._state.pending.values()), default=None)
            self._wake = anyio.Event()
            with anyio.move_on_after(60.0 if due is None else max(0.0, due - time.time())):
                await self._wake.wait()
            for pending in [p for p in self._state.pending.values() if p.due <= time.time()]:
                await self._again(pending)

    async def _again(self, pending: Pending) -> None:
        try:
            status = await self._workspace.task_status(pending.task_id)
        except Unreachable:
            pending.due = time.time() + RECHECK_SECONDS
            return
        except Refused:
            status = None  # gone, or not this agent's: nothing to push
        if status != "notstarted":
            self._state.pending.pop(pending.task_id, None)
        else:
            pending.pushes += 1
            pending.left -= 1
            await self._outbox.channel(pending.content, pending.meta | {"repeat": str(pending.pushes - 1)})
            logger.info("pushed task %s again (not started yet)", pending.task_id)
            if pending.left <= 0:
                self._state.pending.pop(pending.task_id, None)
            else:
                pending.due = time.time() + self._config.repush_after
        self._save()

    def _save(self) -> None:
        try:
            self._state.save()
        except OSError as error:
            logger.warning("state not saved to %s: %s", self._state.path, type(error).__name__)
