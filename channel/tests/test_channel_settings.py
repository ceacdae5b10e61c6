"""The bridge's settings: the token from the environment only, and never in a path, a log line or a repr."""

import hashlib
import stat
from pathlib import Path

import httpx2
import pytest

from agent_workspace_channel.config import ConfigError, read
from agent_workspace_channel.outbox import attributes
from agent_workspace_channel.state import PUSHED_KEPT, Pending, State
from agent_workspace_channel.upstream import Refused, Unreachable, classify

TOKEN = "aw_agent_s3cret-token-value"


def settings(*argv: str, **environ: str):
    return read(["--url", "https://ws.example.com/mcp", *argv], {"AGENT_WORKSPACE_TOKEN": TOKEN, **environ})


def test_the_token_comes_from_the_environment_and_never_shows_in_the_state_path_or_the_repr(tmp_path: Path):
    config = settings(XDG_STATE_HOME=str(tmp_path))
    assert config.token == TOKEN
    assert config.state.parent == tmp_path / "agent-workspace-channel"
    token_hash = hashlib.sha256(TOKEN.encode()).hexdigest()
    assert TOKEN not in str(config.state) and token_hash[:16] not in str(config.state)
    assert TOKEN not in repr(config)
    assert config.api == "https://ws.example.com"


def test_another_token_on_the_same_url_keeps_its_own_cursor(tmp_path: Path):
    one = settings(XDG_STATE_HOME=str(tmp_path)).state
    other = read(["--url", "https://ws.example.com/mcp"], {"AGENT_WORKSPACE_TOKEN": "other", "XDG_STATE_HOME": "/x"})
    assert one.name != other.state.name


def test_the_bridge_does_not_start_without_a_token_or_with_credentials_in_the_url():
    with pytest.raises(ConfigError, match="AGENT_WORKSPACE_TOKEN"):
        read(["--url", "https://ws.example.com/mcp"], {})
    with pytest.raises(ConfigError, match="credentials"):
        settings("--url", "https://me:pw@ws.example.com/mcp")
    with pytest.raises(ConfigError, match="credentials"):
        settings("--url", "https://ws.example.com/mcp?token=x")
    with pytest.raises(ConfigError, match="http"):
        settings("--url", "ws.example.com/mcp")
    with pytest.raises(ConfigError, match="poll-wait"):
        settings("--poll-wait", "60")


def test_defaults_push_a_task_again_twice_two_minutes_apart():
    config = settings()
    assert (config.repush_after, config.repush_max, config.poll_wait) == (120.0, 2, 20)


def test_only_identifier_meta_keys_reach_claude_code_and_every_value_is_a_string():
    assert attributes({"chat_id": "abc", "kind": "task", "bad-key": "x", "1st": "y", "n": 3}) == {  # type: ignore[dict-item]
        "chat_id": "abc",
        "kind": "task",
        "n": "3",
    }


def test_transport_failures_inside_exception_groups_read_as_unreachable():
    group = ExceptionGroup("transport", [ExceptionGroup("inner", [httpx2.ConnectError("refused")])])
    assert isinstance(classify(group), Unreachable)
    refused = Refused(401, "bad token")
    assert classify(ExceptionGroup("x", [RuntimeError("closed"), refused])) is refused
    assert classify(RuntimeError("a bug")) is None


def test_the_state_file_round_trips_is_private_and_remembers_a_bounded_number_of_pushes(tmp_path: Path):
    path = tmp_path / "deep" / "state.json"
    state = State(path, cursor="c1")
    state.pushed.extend(str(i) for i in range(PUSHED_KEPT + 5))
    state.pending["t1"] = Pending("t1", "Title", {"chat_id": "t1"}, due=1.0, left=2)
    state.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = State.load(path)
    assert again.cursor == "c1" and len(again.pushed) == PUSHED_KEPT and again.was_pushed(str(PUSHED_KEPT + 4))
    assert not again.was_pushed("0")
    assert again.pending["t1"] == state.pending["t1"]


def test_an_unreadable_state_file_starts_over_instead_of_failing(tmp_path: Path):
    path = tmp_path / "state.json"
    path.write_text("{not json")
    assert State.load(path).cursor is None
