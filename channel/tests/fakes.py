"""What the channel's tests share: a fake workspace (its REST as the poller and the push source call it), a recording
outbox, and the poller built on them."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from agent_workspace_channel.config import Config, read
from agent_workspace_channel.poller import Poller
from agent_workspace_channel.relay import Relay
from agent_workspace_channel.state import State
from agent_workspace_channel.upstream import Event, Page


class FakeWorkspace:
    """Pages of events handed out in order (then nothing, after the poll's wait), task statuses, permission answers."""

    def __init__(self, pages: list[list[Event] | Exception] | None = None) -> None:
        self.pages = list(pages or [])
        self.statuses: dict[str, str] = {}
        self.cursors: list[str | None] = []
        self.asked: list[dict[str, Any]] = []
        self.answer: dict[str, Any] | Exception = {"id": "q1", "status": "pending"}

    async def events(self, cursor: str | None, wait: int) -> Page:
        self.cursors.append(cursor)
        if not self.pages:
            await anyio.sleep(0.05)
            return Page([], cursor or "")
        page = self.pages.pop(0)
        if isinstance(page, Exception):
            raise page
        return Page(page, page[-1].id if page else cursor or "")

    async def task_status(self, task_id: str) -> str | None:
        return self.statuses.get(task_id)

    async def ask_permission(self, request_id: str, tool: str, description: str, preview: str, task_id: str | None):
        self.asked.append({"requestId": request_id, "toolName": tool, "taskId": task_id})
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Recorder:
    """The outbox, as the tests see it: what would have gone to Claude Code."""

    def __init__(self) -> None:
        self.pushes: list[tuple[str, dict[str, str]]] = []
        self.verdicts: list[tuple[str, str]] = []
        self.changed = 0

    async def ready(self) -> None:
        pass

    async def channel(self, content: str, meta: dict[str, str]) -> None:
        self.pushes.append((content, meta))

    async def verdict(self, request_id: str, behavior: str) -> None:
        self.verdicts.append((request_id, behavior))

    async def lists_changed(self) -> None:
        self.changed += 1


def event(ident: str, kind: str = "task", task: str | None = "t1", **meta: str) -> Event:
    return Event(ident, kind, task, f"content of {ident}", {"chat_id": task or "", "kind": kind, **meta})


def config(tmp_path: Path, *argv: str) -> Config:
    return read(
        ["--url", "http://127.0.0.1:1/mcp", "--state", str(tmp_path / "s.json"), *argv], {"AGENT_WORKSPACE_TOKEN": "t"}
    )


async def until(check: Callable[[], bool], seconds: float = 5) -> None:
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.01)


async def running(poller: Poller, check: Callable[[], bool], seconds: float = 5) -> None:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(poller.run)
        tasks.start_soon(poller.repush)
        await until(check, seconds)
        tasks.cancel_scope.cancel()


def built(tmp_path: Path, workspace: Any, *argv: str, state: State | None = None):
    """A poller on `workspace` (a fake), and what it pushed, relayed and reported."""
    outbox = Recorder()
    relay = Relay(workspace, outbox, lambda: "t9")  # type: ignore[arg-type]
    state = state or State(tmp_path / "s.json")
    answered: list[int] = []

    async def on_answer() -> None:
        answered.append(1)

    poller = Poller(config(tmp_path, *argv), workspace, state, outbox, relay, on_answer)  # type: ignore[arg-type]
    return poller, outbox, relay, state, answered
