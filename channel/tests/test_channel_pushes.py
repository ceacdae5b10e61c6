"""The poller and the permission relay against a fake workspace and a recording outbox: what is pushed, how often,
and which verdicts reach Claude Code."""

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from fakes import FakeWorkspace, built, event, running, until

from agent_workspace_channel.relay import PermissionRequest
from agent_workspace_channel.state import State
from agent_workspace_channel.upstream import Refused, Unreachable

pytestmark = pytest.mark.anyio


async def test_each_event_is_pushed_once_with_its_meta_even_when_a_page_repeats(tmp_path: Path):
    workspace = FakeWorkspace([[event("e1"), event("e2", "reply")], [event("e2", "reply"), event("e3", "answer")]])
    poller, outbox, _, state, _ = built(tmp_path, workspace)
    await running(poller, lambda: len(outbox.pushes) >= 3 and not workspace.pages)
    assert [meta["kind"] for _, meta in outbox.pushes] == ["task", "reply", "answer"]
    assert outbox.pushes[0] == ("content of e1", {"chat_id": "t1", "kind": "task"})
    assert State.load(tmp_path / "s.json").cursor == "e3" == state.cursor


async def test_a_restart_passes_the_saved_cursor_and_skips_what_was_pushed(tmp_path: Path):
    first = FakeWorkspace([[event("e1")]])
    poller, outbox, *_ = built(tmp_path, first)
    await running(poller, lambda: len(outbox.pushes) == 1)
    again = FakeWorkspace([[event("e1"), event("e2", "reply")]])  # the server replays e1 (a lost cursor save)
    poller, outbox, *_ = built(tmp_path, again, state=State.load(tmp_path / "s.json"))
    await running(poller, lambda: len(outbox.pushes) == 1 and not again.pages)
    assert again.cursors[0] == "e1"
    assert [meta["kind"] for _, meta in outbox.pushes] == ["reply"]


async def test_a_task_not_started_is_pushed_again_at_most_repush_max_times(tmp_path: Path):
    workspace = FakeWorkspace([[event("e1")]])
    workspace.statuses["t1"] = "notstarted"
    poller, outbox, *_ = built(tmp_path, workspace, "--repush-after", "0.05", "--repush-max", "2")
    await running(poller, lambda: len(outbox.pushes) == 3)
    await anyio.sleep(0.3)
    assert [meta.get("repeat") for _, meta in outbox.pushes] == [None, "1", "2"]


async def test_a_task_the_agent_started_is_not_pushed_again(tmp_path: Path):
    workspace = FakeWorkspace([[event("e1"), event("e2", task="t2")]])
    workspace.statuses |= {"t1": "notstarted", "t2": "notstarted"}
    poller, outbox, _, state, _ = built(tmp_path, workspace, "--repush-after", "0.2")
    poller.started("t2")  # nothing to drop yet: harmless
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(poller.run)
        tasks.start_soon(poller.repush)
        await until(lambda: len(outbox.pushes) == 2)
        poller.started("t2")  # the agent set it ongoing through the bridge
        workspace.statuses["t1"] = "ongoing"  # and t1 elsewhere
        await anyio.sleep(0.5)
        tasks.cancel_scope.cancel()
    assert len(outbox.pushes) == 2 and state.pending == {}


async def test_an_unreachable_workspace_is_polled_again_soon_and_each_answer_reported(tmp_path: Path):
    workspace = FakeWorkspace([Unreachable("ConnectError"), [event("e1")]])
    poller, outbox, _, _, answered = built(tmp_path, workspace)
    started = time.monotonic()
    await running(poller, lambda: len(outbox.pushes) == 1)
    assert answered and time.monotonic() - started < 3


async def test_a_cursor_the_workspace_no_longer_knows_is_dropped_for_the_last_days_events(tmp_path: Path):
    workspace = FakeWorkspace([Refused(422, "cursor is not one this endpoint returned"), [event("e1")]])
    state = State(tmp_path / "s.json", cursor="from-another-deployment")
    poller, outbox, *_ = built(tmp_path, workspace, state=state)
    await running(poller, lambda: len(outbox.pushes) == 1)
    assert workspace.cursors[:2] == ["from-another-deployment", None]


async def test_a_verdict_reaches_claude_code_only_for_a_request_of_this_session(tmp_path: Path):
    workspace = FakeWorkspace()
    poller, outbox, relay, *_ = built(tmp_path, workspace)
    await relay.ask(PermissionRequest(request_id="abcde", tool_name="Bash", description="ls", input_preview="ls"))
    assert workspace.asked == [{"requestId": "abcde", "toolName": "Bash", "taskId": "t9"}] and outbox.verdicts == []
    workspace.pages = [
        [
            event("p0", "permission", None, request_id="zzzzz", behavior="allow"),  # another session's
            event("p1", "permission", None, request_id="abcde", behavior="deny"),
            event("p2", "permission", None, request_id="abcde", behavior="allow"),  # answered already
        ]
    ]
    await running(poller, lambda: not workspace.pages and bool(outbox.verdicts))
    assert outbox.verdicts == [("abcde", "deny")] and outbox.pushes == []


async def test_a_retried_question_the_workspace_already_holds_still_gets_its_verdict(tmp_path: Path, monkeypatch):
    """The workspace refuses a request id already pending for the token (409): after a try whose answer was lost,
    that means the question stands, and its verdict is still awaited."""
    answers: list[Any] = [Unreachable("ReadTimeout"), Refused(409, "requestId abcde is already pending")]
    workspace = FakeWorkspace()

    async def ask_permission(*args: Any) -> dict[str, Any]:
        raise answers.pop(0)

    async def no_sleep(seconds: float) -> None:
        pass

    monkeypatch.setattr(workspace, "ask_permission", ask_permission)
    monkeypatch.setattr("agent_workspace_channel.relay.anyio.sleep", no_sleep)
    poller, outbox, relay, *_ = built(tmp_path, workspace)
    await relay.ask(PermissionRequest(request_id="abcde", tool_name="Bash"))
    monkeypatch.undo()
    workspace.pages = [[event("p1", "permission", None, request_id="abcde", behavior="allow")]]
    await running(poller, lambda: bool(outbox.verdicts))
    assert outbox.verdicts == [("abcde", "allow")]


async def test_a_standing_always_allow_is_answered_at_once(tmp_path: Path):
    workspace = FakeWorkspace()
    workspace.answer = {"id": "q2", "status": "allowed", "behavior": "allow", "rule": "always"}
    _, outbox, relay, *_ = built(tmp_path, workspace)
    await relay.ask(PermissionRequest(request_id="fghij", tool_name="Write"))
    assert outbox.verdicts == [("fghij", "allow")]
