"""The human's side of the board over REST: triage, review, cycles, suggestions and the "needs you" list."""

from collections import Counter
from dataclasses import replace

import httpx
import pytest

from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Entry
from agent_workspace.services import task_board
from tests.support import assert_problem, bearer, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def api(live, seeded):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}"
    with httpx.Client(base_url=base, headers=bearer(seeded.human_token), timeout=30) as client:
        yield client


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


# -- a blocker answered and ended in one step (issue 35) ---------------------------------------------------------


async def blocked_task(agent, title: str = "stuck", questions: tuple[str, ...] = ("Which region?", "Which currency?")):
    """A task the agent claimed and then reported blocked with `questions`; as claim_task answered it."""
    task = await ok(agent, "create_task", title=title)
    claimed = await ok(agent, "claim_task", taskId=task["id"])
    await ok(agent, "report_blocker", taskId=task["id"], questions=list(questions))
    return claimed


async def test_an_unblock_answers_each_question_and_the_same_agent_carries_on_with_its_claim(api, agent, live, seeded):
    claimed = await blocked_task(agent)
    cursor = httpx.get(f"{live.url}/api/channel/events", headers=bearer(seeded.agent_token)).json()["cursor"]
    answered = api.post(
        f"/board/tasks/{claimed['identifier']}/unblock",
        json={"answers": ["eu-west-1", "EUR"], "comment": "Ship it by Friday."},
    )
    assert answered.status_code == 200, answered.text
    task = answered.json()
    assert (task["status"], task["column"], task["commentCount"]) == ("ongoing", "in_progress", 1)
    assert "questions" not in task and task["claim"]["tokenId"] == claimed["claim"]["tokenId"]
    assert task["claim"]["claimedAt"] == claimed["claim"]["claimedAt"]
    assert task["comment"]["by"] == "human" and task["comment"]["what"] == "comment"
    assert task["comment"]["text"] == (
        "Answers to the blocker's questions:\n\n"
        "Q: Which region?\nA: eu-west-1\n\n"
        "Q: Which currency?\nA: EUR\n\n"
        "Ship it by Friday."
    )
    assert api.get("/board/needs-you").json()["blockers"] == []

    # The agent reads the answers where it reads comments, and works on under the claim it had.
    shown = await ok(agent, "get_task", taskId=claimed["id"])
    assert (shown["status"], shown["column"], shown["commentCount"]) == ("ongoing", "in_progress", 1)
    assert shown["claim"]["tokenId"] == claimed["claim"]["tokenId"]
    assert [c["text"] for c in shown["comments"]] == [task["comment"]["text"]]
    assert (shown["activity"][0]["what"], shown["activity"][0]["column"]) == ("unblocked", "in_progress")
    assert (await ok(agent, "update_progress", taskId=claimed["id"], message="region set"))["recorded"] is True
    # ... and its bridge hears them as it hears a human's message.
    events = httpx.get(
        f"{live.url}/api/channel/events", params={"cursor": cursor}, headers=bearer(seeded.agent_token)
    ).json()["events"]
    assert [(e["kind"], e["taskId"]) for e in events] == [("reply", claimed["id"])]
    assert "Q: Which region?\nA: eu-west-1" in events[0]["content"]

    again = api.post(f"/board/tasks/{claimed['id']}/unblock", json={"answers": ["eu-west-1"]})
    assert_problem(again, 409, "in_progress", "not blocked")


async def test_an_unblock_with_some_answers_or_a_comment_alone_leaves_the_rest_marked_unanswered(api, agent):
    claimed = await blocked_task(agent)
    task = api.post(f"/board/tasks/{claimed['id']}/unblock", json={"answers": ["", "GBP"]}).json()
    assert task["comment"]["text"].endswith("Q: Which region?\nA: (no answer)\n\nQ: Which currency?\nA: GBP")
    other = await blocked_task(agent, "stuck too", ("Go ahead?",))
    only_comment = api.post(f"/board/tasks/{other['id']}/unblock", json={"comment": "Yes, go ahead."}).json()
    expected = "Answers to the blocker's questions:\n\nQ: Go ahead?\nA: (no answer)\n\nYes, go ahead."
    assert only_comment["comment"]["text"] == expected
    assert only_comment["column"] == "in_progress"


async def test_an_unblock_is_refused_by_name_and_changes_nothing(api, agent, live, seeded):
    claimed = await blocked_task(agent)
    unblock = f"/board/tasks/{claimed['id']}/unblock"
    assert_problem(api.post(unblock, json={"answers": ["a"] * 11}), 422, "answers", "at most 10")
    assert_problem(api.post(unblock, json={"answers": ["a", "b", "c"]}), 422, "answers", "2 question(s)")
    assert_problem(api.post(unblock, json={"answers": ["ok", "x" * 65_537]}), 422, "answers[1]", "at most 65536")
    assert_problem(api.post(unblock, json={"answers": ["x" * 40_000, "y" * 40_000]}), 422, "answers", "together")
    assert_problem(api.post(unblock, json={"answers": ["", " "]}), 422, "answers")
    assert_problem(api.post(unblock, json={"answers": "eu-west-1"}), 422, "answers")
    assert_problem(api.post(unblock, json={"answers": ["a"], "extra": 1}), 422, "extra")
    by_agent = httpx.post(
        f"{live.url}/api/workspaces/{seeded.workspace_id}{unblock}", json={"answers": ["a"]},
        headers=bearer(seeded.agent_token),
    )  # fmt: skip
    assert_problem(by_agent, 403, "human token")
    assert_problem(api.post("/board/tasks/WS-99999/unblock", json={"answers": ["a"]}), 404, "WS-99999")
    [still] = api.get("/board/needs-you").json()["blockers"]
    assert (still["id"], still["questions"], still.get("commentCount")) == (
        claimed["id"],
        ["Which region?", "Which currency?"],
        None,
    )
    ready = api.post("/board/tasks", json={"title": "not blocked"}).json()
    assert_problem(api.post(f"/board/tasks/{ready['id']}/unblock", json={"answers": ["a"]}), 409, "ready")


async def test_an_unblock_costs_one_read_of_the_task_and_one_transaction(api, agent, runtime, monkeypatch):
    """Past the bearer token's own requests (test_request_budget.py counts those): the workspace's ownership (one
    GetItem, as every human call), the task's consistent read, the one transaction (comment, activity entry, status
    and count) and the bridge's event, as a human's message pushes it."""
    claimed = await blocked_task(agent)
    sent: Counter[str] = Counter()
    in_admit = False
    admit = runtime.accounts.admit

    def admit_apart(*args):
        nonlocal in_admit
        in_admit = True
        try:
            return admit(*args)
        finally:
            in_admit = False

    def note(model, **_) -> None:
        if not in_admit:
            sent[model.name] += 1

    monkeypatch.setattr(runtime.accounts, "admit", admit_apart)
    events = runtime.clients.dynamodb.meta.events
    events.register("before-call.dynamodb", note)
    try:
        answered = api.post(f"/board/tasks/{claimed['id']}/unblock", json={"answers": ["eu-west-1", "EUR"]})
    finally:
        events.unregister("before-call.dynamodb", note)
    assert answered.status_code == 200, answered.text
    assert sent == Counter({"GetItem": 2, "TransactWriteItems": 1, "PutItem": 1})


# -- comment counts on the cards --------------------------------------------------------------------------------


async def test_the_listing_counts_comments_from_the_human_and_the_agent_and_a_refused_one_counts_nothing(api, agent):
    task = await ok(agent, "create_task", title="talked about")
    quiet = await ok(agent, "create_task", title="not talked about")
    assert "commentCount" not in task
    assert api.post(f"/board/tasks/{task['id']}/comments", json={"text": "From the human"}).status_code == 201
    await ok(agent, "add_comment", taskId=task["id"], text="From the agent")
    too_long = api.post(f"/board/tasks/{task['id']}/comments", json={"text": "x" * 65_537})
    assert_problem(too_long, 422, "text")
    text, is_error = await agent.raw("add_comment", {"taskId": task["id"], "text": ""})
    assert is_error, text
    listed = {t["id"]: t for t in api.get("/board/tasks").json()["tasks"]}
    assert listed[task["id"]]["commentCount"] == 2 and "commentCount" not in listed[quiet["id"]]
    # Edits write the task whole: the count they carry is the one read, never one a comment moved meanwhile.
    edited = api.patch(f"/board/tasks/{task['id']}", json={"priority": "high"}).json()
    assert edited["commentCount"] == 2
    assert (await ok(agent, "list_tasks", query="talked about"))["tasks"][0]["commentCount"] == 2
    assert len(api.get(f"/board/tasks/{task['id']}").json()["comments"]) == 2


def test_a_whole_task_written_over_a_comment_made_in_the_same_instant_is_refused_not_counting_it_away(runtime, seeded):
    """A board edit puts the task whole, conditional on `updatedAt` as read; a comment stamped with that very
    `updatedAt` would pass that, so the count read is part of the condition too."""
    human = Actor(kind="human", account_id=seeded.account_id, workspace_id=seeded.workspace_id, token_id=None)
    made = task_board.create(runtime, human, "counted", "", task_board.Fields())
    before = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert before is not None and before.comment_count == 0
    runtime.tasks.add_comment(seeded.workspace_id, made.id, Entry(new_id(), before.updated_at, "human", "comment"))
    with pytest.raises(Conflict):
        runtime.tasks.save(seeded.account_id, before, replace(before, priority="high"))
    after = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert after is not None and (after.comment_count, after.priority) == (1, None)
