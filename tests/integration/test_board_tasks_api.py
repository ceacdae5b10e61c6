"""The human's side of the board over REST: triage, review, cycles, suggestions and the "needs you" list."""

import json

import httpx
import pytest

from tests.support import assert_problem, bearer

pytestmark = pytest.mark.anyio


@pytest.fixture
def api(live, seeded):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}"
    with httpx.Client(base_url=base, headers=bearer(seeded.human_token), timeout=30) as client:
        yield client


async def ok(agent, name: str, **arguments) -> dict:
    text, is_error = await agent.raw(name, arguments)
    assert not is_error, text
    return json.loads(text)


async def test_supervised_triage_accept_and_decline(api, agent):
    api.put("/board/policy", json={"supervised": True})
    kept = await ok(agent, "create_task", title="worth doing", criteria=["it works"])
    dropped = await ok(agent, "create_task", title="not worth it")
    assert [t["id"] for t in api.get("/board/needs-you").json()["triage"]] == [kept["id"], dropped["id"]]
    accepted = api.post(f"/board/tasks/{kept['identifier']}/triage", json={"decision": "backlog"})
    assert accepted.status_code == 200 and accepted.json()["column"] == "backlog"
    declined = api.post(f"/board/tasks/{dropped['id']}/triage", json={"decision": "decline", "comment": "no"})
    assert (declined.json()["status"], declined.json()["column"]) == ("rejected", "rejected")
    assert api.get("/board/needs-you").json()["triage"] == []
    assert_problem(api.post(f"/board/tasks/{kept['id']}/triage", json={"decision": "ready"}), 409, "not in triage")
    assert (await ok(agent, "get_next_task"))["task"]["id"] == kept["id"], "backlog with criteria is workable"


async def test_review_approve_and_send_back(api, agent):
    api.put("/board/policy", json={"signOff": True})
    one = await ok(agent, "create_task", title="one")
    two = await ok(agent, "create_task", title="two")
    for task in (one, two):
        await ok(agent, "claim_task", taskId=task["id"])
        await ok(agent, "complete_task", taskId=task["id"], summary="done")
    assert {t["id"] for t in api.get("/board/needs-you").json()["reviews"]} == {one["id"], two["id"]}
    approved = api.post(f"/board/tasks/{one['id']}/review", json={"decision": "approve"})
    assert approved.json()["column"] == "done"
    assert_problem(api.post(f"/board/tasks/{two['id']}/review", json={"decision": "send_back"}), 422, "comment")
    back = api.post(f"/board/tasks/{two['id']}/review", json={"decision": "send_back", "comment": "tests missing"})
    assert (back.json()["status"], back.json()["column"]) == ("notstarted", "ready")
    shown = api.get(f"/board/tasks/{two['id']}").json()
    assert shown["activity"][0]["what"] == "sent back" and shown["activity"][0]["text"] == "tests missing"


async def test_blockers_and_questions_head_the_needs_you_list(api, agent):
    task = await ok(agent, "create_task", title="stuck")
    await ok(agent, "claim_task", taskId=task["id"])
    await ok(agent, "report_blocker", taskId=task["id"], questions=["Which region?"])
    [blocker] = api.get("/board/needs-you").json()["blockers"]
    assert blocker["id"] == task["id"] and blocker["questions"] == ["Which region?"]
    assert set(api.get("/board/needs-you").json()) == {"questions", "blockers", "siteCalls", "triage", "reviews"}


async def test_cycles_one_active_at_a_time_and_claims_join_it(api, agent):
    first = api.post(
        "/board/cycles", json={"title": "Sprint 1", "goal": "Refunds", "endDate": "2026-12-18", "active": True}
    )
    assert first.status_code == 201 and first.json()["active"] is True
    second = api.post("/board/cycles", json={"title": "Sprint 2", "active": True}).json()
    cycles = api.get("/board/cycles").json()
    assert [(c["title"], c["active"]) for c in cycles] == [("Sprint 1", False), ("Sprint 2", True)]
    context = await ok(agent, "get_workspace_context")
    assert context["activeCycle"]["id"] == second["id"]
    task = await ok(agent, "create_task", title="t")
    assert (await ok(agent, "claim_task", taskId=task["id"]))["cycleId"] == second["id"]
    assert api.put("/board/cycles/active", json={"cycleId": None}).json() == {"activeCycleId": None}
    assert (await ok(agent, "get_workspace_context"))["activeCycle"] is None
    assert_problem(api.post("/board/cycles", json={"title": "x", "endDate": "next week"}), 422, "endDate")


async def test_the_human_creates_edits_comments_and_decides_suggestions(api, agent):
    made = api.post("/board/tasks", json={"title": "From the human", "column": "backlog", "priority": "high"})
    assert made.status_code == 201
    task = made.json()
    assert (task["column"], task["priority"], task["createdBy"]) == ("backlog", "high", "human")
    edited = api.patch(f"/board/tasks/{task['id']}", json={"column": "ready", "priority": None, "labels": ["ops"]})
    assert edited.json()["column"] == "ready" and "priority" not in edited.json()
    assert api.post(f"/board/tasks/{task['id']}/comments", json={"text": "context"}).status_code == 201
    text, is_error = await agent("task", "suggest", taskId=task["id"], criteria=["a"])
    assert not is_error, text
    [suggestion] = api.get(f"/board/tasks/{task['id']}").json()["pendingSuggestions"]
    assert api.delete(f"/board/tasks/{task['id']}/suggestions/{suggestion['id']}").status_code == 204
    shown = api.get(f"/board/tasks/{task['id']}").json()
    assert shown["pendingSuggestions"] == [] and "criteria" not in shown
    assert [c["text"] for c in shown["comments"]] == ["context"] and shown["comments"][0]["by"] == "human"
    assert_problem(api.post("/board/tasks", json={"title": "x", "column": "done"}), 422, "column")
    assert_problem(api.post("/board/tasks", json={"title": "x", "priority": "p0"}), 422, "priority")
    assert_problem(api.get("/board/tasks/WS-99999"), 404, "WS-99999")


async def test_the_board_listing_filters_and_hides_archived(api, agent):
    a = await ok(agent, "create_task", title="alpha", labels=["ops"])
    b = await ok(agent, "create_task", title="beta")
    api.post(f"/board/tasks/{b['id']}/archive", json={"reason": "dup"})
    assert [t["id"] for t in api.get("/board/tasks").json()["tasks"]] == [a["id"]]
    assert [t["id"] for t in api.get("/board/tasks", params={"label": "ops"}).json()["tasks"]] == [a["id"]]
    assert {t["id"] for t in api.get("/board/tasks", params={"includeArchived": "true"}).json()["tasks"]} == {
        a["id"],
        b["id"],
    }
    assert_problem(api.get("/board/tasks", params={"status": "doing"}), 422, "status")


async def test_the_human_unlinks_tasks_and_a_link_closing_a_cycle_is_a_409(api, agent):
    a = await ok(agent, "create_task", title="a")
    b = await ok(agent, "create_task", title="b")
    c = await ok(agent, "create_task", title="c")
    assert api.post(f"/board/tasks/{a['id']}/links", json={"type": "blocks", "otherTaskId": b["id"]}).status_code == 201
    assert api.post(f"/board/tasks/{b['id']}/links", json={"type": "blocks", "otherTaskId": c["id"]}).status_code == 201
    closing = api.post(f"/board/tasks/{c['id']}/links", json={"type": "blocks", "otherTaskId": a["id"]})
    assert_problem(closing, 409, "cycle")
    removed = api.delete(f"/board/tasks/{a['identifier']}/links/blocks/{b['id']}")
    assert removed.status_code == 200 and removed.json()["removed"] is True
    assert api.get(f"/board/tasks/{b['id']}").json().get("waitingOn") is None
    assert api.delete(f"/board/tasks/{a['id']}/links/blocks/{b['id']}").json()["removed"] is False
    assert_problem(api.delete(f"/board/tasks/{a['id']}/links/blocked_by/{b['id']}"), 422, "type")
