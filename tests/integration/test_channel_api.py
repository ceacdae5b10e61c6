"""The channel a Claude Code bridge long-polls with its agent token, and the human's permission decisions (issue 19).

The bridge itself (channel/) is tested end to end in test_channel_bridge.py; this is the server's side.
"""

import time

import httpx
import pytest

from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts
from tests.support import assert_problem, bearer


@pytest.fixture
def human(live, seeded):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}"
    with httpx.Client(base_url=base, headers=bearer(seeded.human_token), timeout=30) as client:
        yield client


@pytest.fixture
def bridge(live, seeded):
    with httpx.Client(base_url=f"{live.url}/api/channel", headers=bearer(seeded.agent_token), timeout=30) as client:
        yield client


def test_a_task_a_reply_an_answer_and_a_reopen_arrive_in_order_and_a_cursor_resumes(human, bridge):
    first = bridge.get("/events").json()
    assert first["events"] == []
    task = human.post("/tasks", json={"title": "Ship it", "body": "Release v1."}).json()
    human.post(f"/tasks/{task['id']}/messages", json={"text": "Also the notes, please."})
    human.patch(f"/tasks/{task['id']}", json={"status": "completed"})
    human.patch(f"/tasks/{task['id']}", json={"status": "notstarted"})
    got = bridge.get("/events", params={"cursor": first["cursor"]}).json()
    assert [(e["kind"], e["taskId"], e["meta"]["chat_id"]) for e in got["events"]] == [
        ("task", task["id"], task["id"]),
        ("reply", task["id"], task["id"]),
        ("reopened", task["id"], task["id"]),
    ]
    assert got["events"][0]["content"] == "Ship it\n\nRelease v1." and got["events"][1]["content"].startswith("Also")
    assert bridge.get("/events", params={"cursor": got["cursor"]}).json()["events"] == []
    assert len(bridge.get("/events").json()["events"]) == 3  # no cursor: the last day's


def test_a_long_poll_answers_as_soon_as_something_arrives(human, bridge, live, seeded):
    cursor = bridge.get("/events").json()["cursor"]
    import threading

    def later() -> None:
        time.sleep(1.5)
        with httpx.Client(base_url=f"{live.url}/api/workspaces/{seeded.workspace_id}", headers=bearer(
                seeded.human_token)) as client:  # fmt: skip
            client.post("/tasks", json={"title": "Late", "body": ""})

    threading.Thread(target=later).start()
    started = time.monotonic()
    got = bridge.get("/events", params={"cursor": cursor, "wait": 15}).json()
    assert [e["content"] for e in got["events"]] == ["Late"]
    assert time.monotonic() - started < 10


def test_a_permission_request_is_decided_by_the_human_and_always_allow_answers_at_once(human, bridge):
    cursor = bridge.get("/events").json()["cursor"]
    asked = bridge.post("/permissions", json={"requestId": "abcde", "toolName": "Bash",
                                              "description": "Run tests", "inputPreview": "make test"})  # fmt: skip
    assert asked.status_code == 201 and asked.json()["status"] == "pending"
    pending = human.get("/permissions").json()["permissions"]
    assert [(p["toolName"], p["status"], p["inputPreview"]) for p in pending] == [("Bash", "pending", "make test")]
    assert human.post(f"/permissions/{asked.json()['id']}", json={"decision": "allow"}).json()["status"] == "allowed"
    assert_problem(human.post(f"/permissions/{asked.json()['id']}", json={"decision": "deny"}), 409, "already")
    verdict = bridge.get("/events", params={"cursor": cursor}).json()["events"]
    assert [(e["kind"], e["meta"]) for e in verdict] == [
        ("permission", {"kind": "permission", "request_id": "abcde", "behavior": "allow"})
    ]
    second = bridge.post("/permissions", json={"requestId": "fghij", "toolName": "Bash"}).json()
    human.post(f"/permissions/{second['id']}", json={"decision": "always"})
    at_once = bridge.post("/permissions", json={"requestId": "klmno", "toolName": "Bash"})
    assert at_once.status_code == 200 and at_once.json()["behavior"] == "allow"
    assert [r["tool"] for r in human.get("/permission-rules").json()["rules"]] == ["Bash"]
    assert human.delete("/permission-rules/Bash").json() == {"removed": "Bash"}
    assert bridge.post("/permissions", json={"requestId": "pqrst", "toolName": "Bash"}).status_code == 201


def test_each_side_uses_its_own_token_and_reaches_its_own_workspace(human, bridge, live, runtime, seeded):
    with httpx.Client(base_url=live.url, headers=bearer(seeded.human_token)) as wrong:
        assert wrong.get("/api/channel/events").status_code == 403
    with httpx.Client(base_url=live.url, headers=bearer(seeded.agent_token)) as wrong:
        assert wrong.get(f"/api/workspaces/{seeded.workspace_id}/permissions").status_code == 403
    human.post("/tasks", json={"title": "Mine", "body": ""})
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    with httpx.Client(base_url=f"{live.url}/api/channel", headers=bearer(other.token)) as neighbour:
        assert neighbour.get("/events").json()["events"] == []
    for bad in ({"requestId": "", "toolName": "Bash"}, {"requestId": "a", "toolName": "x" * 201},
                {"requestId": "a", "toolName": "Bash", "inputPreview": "p" * 8_001}):  # fmt: skip
        assert bridge.post("/permissions", json=bad).status_code == 422
    assert_problem(bridge.get("/events", params={"cursor": "../etc"}), 422, "cursor")


# "It must cost little on Lambda: measure reads and Lambda-seconds per idle agent-hour and report them."


def test_an_idle_agent_hour_costs_1440_reads_and_holds_the_function_for_its_polls(runtime, seeded, monkeypatch):
    import types

    import anyio

    from agent_workspace.domain.models import Actor
    from agent_workspace.services import channel, waits

    clock = [0.0]
    reads = []

    async def pause(seconds: float) -> None:
        clock[0] += seconds

    real = runtime.channel.events_after

    def counted(*args):
        reads.append(clock[0])
        return real(*args)

    monkeypatch.setattr(waits, "pause", pause)  # a poll's pauses go through its wait slot
    monkeypatch.setattr(channel, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(channel, "wait_ends_at", lambda cap, deadline, margin: clock[0] + cap)
    monkeypatch.setattr(runtime.channel, "events_after", counted)
    agent = Actor("agent", seeded.account_id, seeded.workspace_id, "bridge-token")
    cursor = anyio.run(channel.events, runtime, agent, None, 0, None)["cursor"]
    reads.clear()
    answer = anyio.run(channel.events, runtime, agent, cursor, 20, None)
    assert answer["events"] == [] and clock[0] == 20
    assert reads == [0, 1, 3, 7, 11, 15, 19, 20]  # 8 reads a 20-second poll: 180 polls, 1,440 reads an idle hour


def test_a_task_the_human_assigns_back_to_the_agent_arrives_as_assigned(human, bridge):
    task = human.post("/board/tasks", json={"title": "Review the docs", "assignee": "human"}).json()
    cursor = bridge.get("/events").json()["cursor"]
    edited = human.patch(f"/board/tasks/{task['id']}", json={"assignee": "agent"})
    assert edited.status_code == 200, edited.text
    got = bridge.get("/events", params={"cursor": cursor}).json()["events"]
    assert [(e["kind"], e["taskId"], e["content"]) for e in got] == [
        ("assigned", task["id"], "Assigned to you: Review the docs")
    ]


def test_a_board_task_the_human_creates_for_the_agent_arrives(human, bridge):
    cursor = bridge.get("/events").json()["cursor"]
    task = human.post("/board/tasks", json={"title": "Fix the flaky test", "description": "It fails 1 in 50."}).json()
    got = bridge.get("/events", params={"cursor": cursor}).json()["events"]
    assert [(e["kind"], e["taskId"], e["content"]) for e in got] == [
        ("task", task["id"], "Fix the flaky test\n\nIt fails 1 in 50.")
    ]


@pytest.fixture
def second_bridge(live, seeded, runtime):
    """Another agent token of the same workspace, polling its own channel (a second Claude Code session, or not)."""
    issued = accounts.issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    with httpx.Client(base_url=f"{live.url}/api/channel", headers=bearer(issued.token), timeout=30) as client:
        yield client


def test_a_verdict_reaches_only_the_bridge_of_the_token_that_asked(human, bridge, second_bridge):
    """Two bridges of a workspace may hold the same Claude Code request id: each hears the verdict on its own."""
    cursors = [b.get("/events").json()["cursor"] for b in (bridge, second_bridge)]
    mine = bridge.post("/permissions", json={"requestId": "abcde", "toolName": "Bash", "inputPreview": "ls"}).json()
    theirs = second_bridge.post("/permissions", json={"requestId": "abcde", "toolName": "Bash",
                                                      "inputPreview": "rm -rf /"}).json()  # fmt: skip
    assert human.post(f"/permissions/{mine['id']}", json={"decision": "allow"}).status_code == 200
    bridges = (bridge, second_bridge)
    heard = [b.get("/events", params={"cursor": c}).json() for b, c in zip(bridges, cursors, strict=True)]
    assert [(e["kind"], e["meta"]["behavior"]) for e in heard[0]["events"]] == [("permission", "allow")]
    assert heard[1]["events"] == []
    assert human.post(f"/permissions/{theirs['id']}", json={"decision": "deny"}).status_code == 200
    assert bridge.get("/events", params={"cursor": heard[0]["cursor"]}).json()["events"] == []
    later = second_bridge.get("/events", params={"cursor": heard[1]["cursor"]}).json()["events"]
    assert [(e["kind"], e["meta"]["request_id"], e["meta"]["behavior"]) for e in later] == [
        ("permission", "abcde", "deny")
    ]


def test_a_request_id_already_pending_for_the_token_is_refused_until_decided_or_closed(human, bridge, clock):
    ask = {"requestId": "abcde", "toolName": "Bash", "inputPreview": "make test"}
    first = bridge.post("/permissions", json=ask)
    assert first.status_code == 201
    assert_problem(bridge.post("/permissions", json=ask | {"inputPreview": "rm -rf /"}), 409, "requestId abcde",
                   "already pending")  # fmt: skip
    assert [p["inputPreview"] for p in human.get("/permissions").json()["permissions"]] == ["make test"]
    human.post(f"/permissions/{first.json()['id']}", json={"decision": "deny"})
    second = bridge.post("/permissions", json=ask)
    assert second.status_code == 201  # decided: the id is free again
    clock.advance(seconds=601)  # unanswered, the question closes (Claude Code moved on)
    assert bridge.post("/permissions", json=ask).status_code == 201
