"""The rules of WebSocket push that need no store: tickets, frames, the heartbeat, the push settings."""

import json

import pytest
from pydantic import ValidationError

from agent_workspace.config import Settings
from agent_workspace.domain import push as rules
from agent_workspace.domain.columns import changes_the_inbox


def test_a_ticket_is_random_recognisable_and_kept_as_a_hash():
    first, second = rules.new_ticket(), rules.new_ticket()

    assert first != second and rules.is_ticket(first) and rules.is_ticket(second)
    assert len(first) <= rules.TICKET_MAX
    assert rules.hash_ticket(first) != first and len(rules.hash_ticket(first)) == 64
    for text in (None, 42, "", "aw_human_abc", rules.TICKET_PREFIX + "x" * rules.TICKET_MAX):
        assert not rules.is_ticket(text)


def test_a_message_that_fits_a_frame_is_sent_as_compact_json():
    message = {"type": "changed", "what": "needs", "taskId": "0kGogHmaqvZ", "note": "é"}

    data = rules.frame("console", "0kGoQ1bX2aB", message)

    assert data == '{"type":"changed","what":"needs","taskId":"0kGogHmaqvZ","note":"é"}'.encode()
    assert rules.fits("console", "0kGoQ1bX2aB", message) is message


def test_a_message_past_32_kb_in_utf8_becomes_fetch_keeping_its_cursor():
    # 11,000 characters of 3 UTF-8 bytes: 33 KB, though well under 32,768 characters.
    message = {"type": "event", "cursor": "0kGogHmaqvZ", "event": {"content": "€" * 11_000}}

    data = rules.frame("channel", "0kGoQ1bX2aB", message)

    fetch = {"type": "fetch", "topic": "channel", "scope": "0kGoQ1bX2aB", "cursor": "0kGogHmaqvZ"}
    assert json.loads(data) == fetch
    assert rules.fits("channel", "0kGoQ1bX2aB", message) == fetch


def test_the_frame_limit_is_api_gateways_32_kb_to_the_byte():
    envelope = len(json.dumps({"type": "x", "pad": ""}, separators=(",", ":")))
    at_limit = {"type": "x", "pad": "a" * (rules.FRAME_BYTES_MAX - envelope)}
    over = {"type": "x", "pad": "a" * (rules.FRAME_BYTES_MAX - envelope + 1)}

    assert len(rules.frame("bridge", "s", at_limit)) == rules.FRAME_BYTES_MAX
    assert json.loads(rules.frame("bridge", "s", over))["type"] == "fetch"


@pytest.mark.parametrize("body", ['{"type":"ping"}', b'{"type": "ping"}', '{"type":"ping","sentAt":1}'])
def test_a_ping_is_answered_with_a_pong(body):
    assert rules.answer(body) == {"type": "pong"}


@pytest.mark.parametrize("body", [None, "", "ping", "[]", '{"type":"pong"}', '{"type":"ping"' + " " * 2000 + "}"])
def test_anything_else_on_the_socket_gets_a_small_error_frame(body):
    answer = rules.answer(body)

    assert answer["type"] == "error" and "ping" in answer["error"]
    assert len(json.dumps(answer)) < 200


def test_push_is_off_unless_a_websocket_url_is_set_and_posts_go_to_its_https_twin():
    assert Settings().push_url is None and Settings().push_endpoint is None
    assert Settings(push_url="").push_url is None  # the template's empty value: off

    on = Settings(push_url="wss://abc.execute-api.eu-west-1.amazonaws.com/live/")

    assert on.push_url == "wss://abc.execute-api.eu-west-1.amazonaws.com/live"
    assert on.push_endpoint == "https://abc.execute-api.eu-west-1.amazonaws.com/live"
    explicit = Settings(push_url="wss://push.example.com", push_callback_url="https://abc.execute-api.x/live")
    assert explicit.push_endpoint == "https://abc.execute-api.x/live"
    with pytest.raises(ValidationError, match="WebSocket URL"):
        Settings(push_url="https://abc.execute-api.eu-west-1.amazonaws.com/live")


@pytest.mark.parametrize(
    ("before", "after", "archived", "moved"),
    [
        ("ready", "in_progress", False, False),
        ("in_progress", "blocked", False, True),
        ("blocked", "in_progress", False, True),
        ("triage", "backlog", False, True),
        ("in_progress", "in_review", False, True),
        ("in_review", "done", False, True),
        ("blocked", "blocked", False, False),
        ("triage", "triage", True, True),
        ("ready", "ready", True, False),
    ],
)
def test_the_inbox_changes_when_a_task_enters_or_leaves_a_column_that_waits_on_the_human(
    before, after, archived, moved
):
    assert changes_the_inbox(before, after, archived) is moved
