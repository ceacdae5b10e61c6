"""The board's task-level tools through the SDK's MCP client, by Masaro's names and by our `task` actions.

Each test cites the paragraph of ../shared/reference/masaro-mcp-tools.txt it demonstrates.
"""

import json

import pytest

from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import board, task_board, tasks
from agent_workspace.services.accounts import issue_token
from tests.support import connected, ok, refused

pytestmark = pytest.mark.anyio


@pytest.fixture
def second_token(runtime, seeded) -> tuple[str, str]:
    """Another agent token of the seeded workspace: (secret, token id)."""
    issued = issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    return issued.token, issued.record.id


def policy(runtime, seeded, supervised: bool = False, sign_off: bool = False) -> None:
    board.set_policy(runtime, seeded.workspace_id, supervised, sign_off)


# create_task: "title, summary, description, criteria, complexity, priority, labels, due date, epic, cycleId,
# assignee ..., and parentId to nest a subtask. Top-level tasks land in Triage ...; subtasks land in the backlog.
# A project is optional."


@pytest.mark.parametrize("call", [("create_task", None), ("task", "propose")], ids=["masaro", "ours"])
async def test_create_task_takes_every_board_field_and_gives_a_short_identifier(agent, call):
    project = await ok(agent, "create_project", title="Billing")
    epic = await ok(agent, "create_epic", title="Refunds")
    made = await ok(
        agent,
        *call,
        title="Add refund endpoint",
        summary="Refunds over the API.",
        description="POST /refunds",
        criteria=["returns 201", "writes a ledger entry"],
        complexity="medium",
        priority="high",
        labels=["billing", "api"],
        dueDate="2026-12-31",
        epicId=epic["id"],
        projectId=project["id"],
    )
    assert made["identifier"].startswith("WS-") and made["column"] == "ready" and made["status"] == "notstarted"
    assert made["criteria"] == [{"index": 0, "text": "returns 201"}, {"index": 1, "text": "writes a ledger entry"}]
    assert (made["complexity"], made["priority"], made["labels"], made["dueDate"]) == (
        "medium",
        "high",
        ["billing", "api"],
        "2026-12-31",
    )
    assert (made["epicId"], made["projectId"]) == (epic["id"], project["id"])
    shown = await ok(agent, "get_task", taskId=made["identifier"])
    assert shown["id"] == made["id"] and shown["description"] == "POST /refunds"
    assert [e["what"] for e in shown["activity"]] == ["created"]
    context = await ok(agent, "get_workspace_context")
    assert context["labels"] == ["api", "billing"]


# create_task: "assignee by name or email". The account knows one person, the human, by the e-mail address of their
# notification settings (it holds no person's name).


@pytest.mark.parametrize("call", [("create_task", None), ("task", "propose")], ids=["masaro", "ours"])
async def test_the_humans_e_mail_in_any_case_assigns_a_task_to_the_human_and_any_other_is_refused(
    agent, runtime, seeded, call
):
    tool, action = call

    async def refused_assignee(assignee: str) -> str:
        arguments = {"title": "t", "assignee": assignee}
        return await refused(agent, tool, {"action": action, "payload": arguments} if action else arguments)

    text = await refused_assignee("ada@example.com")
    assert "the human's e-mail address as set in their notification settings, not 'ada@example.com'" in text
    runtime.notifications.save_settings(seeded.account_id, {"email": "Ada.Lovelace@Example.com"}, 0)
    made = await ok(agent, *call, title="Sign the contract", assignee="ada.lovelace@example.COM")
    assert (made["assignee"], made.get("assignedTo")) == ("human", None)
    assert (await ok(agent, "get_next_task"))["task"] is None, "the human's task is not an agent's work"
    moved = await ok(agent, "create_task", title="Review the draft")
    edited = await ok(agent, "update_task", taskId=moved["id"], assignee=" Ada.Lovelace@example.com")
    assert edited["assignee"] == "human"
    for other in ("bob@example.com", "Ada Lovelace", "ada.lovelace@example.co"):
        text = await refused_assignee(other)
        assert text.endswith(f"not {other!r}") and "Lovelace@Example" not in text, text
    assert {t["title"] for t in (await ok(agent, "list_tasks", assignee="human"))["tasks"]} == {
        "Sign the contract",
        "Review the draft",
    }


async def test_identifiers_count_up_and_are_accepted_by_agentrq_actions_too(agent):
    first = await ok(agent, "create_task", title="one")
    second = await ok(agent, "create_task", title="two")
    assert int(second["identifier"][3:]) == int(first["identifier"][3:]) + 1
    got = await ok(agent, "task", "get", taskId=second["identifier"].lower())
    assert got["id"] == second["id"]
    text = await refused(agent, "get_task", {"taskId": "WS-999999"})
    assert text == "get_task: no task 'WS-999999' in this workspace"


async def test_supervised_policy_puts_agent_tasks_in_triage_and_subtasks_in_backlog(agent, runtime, seeded):
    policy(runtime, seeded, supervised=True)
    parent = await ok(agent, "create_task", title="Epic-sized work")
    child = await ok(agent, "create_task", title="A piece", parentId=parent["id"])
    assert (parent["column"], child["column"], child["parentId"]) == ("triage", "backlog", parent["id"])
    assert (await ok(agent, "get_next_task"))["task"] is None, "triage is not workable; backlog needs criteria"
    text = await refused(agent, "claim_task", {"taskId": parent["id"]})
    assert "in triage" in text
    text = await refused(agent, "update_task", {"taskId": parent["id"], "status": "ready"})
    assert "the human accepts it" in text


async def test_default_policy_keeps_agentrq_behaviour(agent):
    made = await ok(agent, "create_task", title="plain")
    assert made["column"] == "ready"
    dequeued = await agent.get()
    assert dequeued["id"] == made["id"], "a board task is in AgentRQ's queue like any other"


# get_next_task: "unclaimed, unblocked, highest priority first ... Ready tasks win; if Ready is empty, Backlog tasks
# that already have acceptance criteria are eligible. A task a human explicitly assigned to the calling agent beats
# both pools, and within every pool tasks in the active cycle sort first."


async def test_next_task_order_assigned_then_ready_by_cycle_priority_age_then_backlog_with_criteria(
    agent, live, runtime, seeded, second_token
):
    board.create_cycle(runtime, human(seeded), "Sprint 1", "Ship refunds", "2026-12-31", active=True)
    backlog = await ok(agent, "create_task", title="backlog with criteria", criteria=["x"])
    await ok(agent, "update_task", taskId=backlog["id"], status="backlog")
    bare = await ok(agent, "create_task", title="backlog without criteria")
    await ok(agent, "update_task", taskId=bare["id"], status="backlog")
    old_plain = await ok(agent, "create_task", title="old plain")
    low = await ok(agent, "create_task", title="low", priority="low")
    urgent = await ok(agent, "create_task", title="urgent", priority="urgent")
    in_cycle = await ok(agent, "create_task", title="in cycle, no priority", cycleId="active")
    assigned = await ok(agent, "create_task", title="assigned to the second agent", assignee=second_token[1])
    assert assigned["assignedTo"] == second_token[1]

    async with connected(live.url, second_token[0]) as second:
        assert (await ok(second, "get_next_task"))["task"]["id"] == assigned["id"], "assigned beats both pools"
    order = []
    for _ in range(5):
        found = (await ok(agent, "task", "next"))["task"]
        order.append(found["title"])
        await ok(agent, "claim_task", taskId=found["id"])
    assert order == [t["title"] for t in (in_cycle, urgent, low, old_plain, backlog)]
    nothing = await ok(agent, "get_next_task")
    assert nothing == {"task": None, "workspacePolicy": {"supervised": False, "signOff": False}}


# get_next_task: "Selects across the whole workspace by default — project-less tasks included" (list_tasks: "or one
# project when narrowed").


@pytest.mark.parametrize("call", [("get_next_task", None), ("task", "next")], ids=["masaro", "ours"])
async def test_next_task_narrows_to_one_project_when_asked_and_refuses_an_unknown_one(agent, call):
    billing = await ok(agent, "create_project", title="Billing")
    search = await ok(agent, "create_project", title="Search")
    loose = await ok(agent, "create_task", title="no project, urgent", priority="urgent")
    in_billing = await ok(agent, "create_task", title="billing, low", projectId=billing["id"], priority="low")
    assert (await ok(agent, *call))["task"]["id"] == loose["id"], "the whole workspace by default"
    narrowed = await ok(agent, *call, projectId=billing["id"])
    assert narrowed["task"]["id"] == in_billing["id"] and narrowed["task"]["projectId"] == billing["id"]
    assert narrowed["workspacePolicy"] == {"supervised": False, "signOff": False}
    assert await ok(agent, *call, projectId=search["id"]) == {
        "task": None,
        "workspacePolicy": {"supervised": False, "signOff": False},
    }
    await ok(agent, "claim_task", taskId=in_billing["id"])
    assert (await ok(agent, *call, projectId=billing["id"]))["task"] is None, "claimed: not workable"
    tool, action = call
    for unknown in ("0kGpezGeuxt", "Billing"):
        arguments = {"projectId": unknown}
        text = await refused(agent, tool, {"action": action, "payload": arguments} if action else arguments)
        assert f"projectId {unknown!r} is not a project of this workspace" in text, text


def human(seeded) -> Actor:
    return Actor("human", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")


# claim_task: "Moves it to In Progress under the agent's identity; prevents duplicate pickup; adds it to the active
# cycle if one is running. If the task had neither a summary nor criteria the reply says prepQueued."


@pytest.mark.parametrize("call", [("claim_task", None), ("task", "claim")], ids=["masaro", "ours"])
async def test_claim_moves_to_in_progress_joins_the_active_cycle_and_says_prep_queued(agent, runtime, seeded, call):
    cycle = board.create_cycle(runtime, human(seeded), "Sprint", "", None, active=True)
    bare = await ok(agent, "create_task", title="bare")
    claimed = await ok(agent, *call, taskId=bare["identifier"])
    assert (claimed["status"], claimed["column"], claimed["cycleId"]) == ("ongoing", "in_progress", cycle["id"])
    assert claimed["claim"]["tokenId"] and claimed["prepQueued"] is True and "suggest" in claimed["next"]
    assert claimed["workspacePolicy"] == {"supervised": False, "signOff": False}
    specified = await ok(agent, "create_task", title="specified", criteria=["tests pass"])
    assert (await ok(agent, *call, taskId=specified["id"]))["prepQueued"] is False
    text = await refused(agent, "claim_task", {"taskId": bare["id"]})
    assert text == f"claim_task: task {bare['id']} is claimed by you already"


async def test_many_agents_claiming_one_task_exactly_one_wins(agent, live, runtime, seeded):
    import anyio

    made = await ok(agent, "create_task", title="contested")
    tokens = [issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id) for _ in range(6)]
    outcomes: list[tuple[str, bool]] = []

    async def try_claim(secret: str) -> None:
        async with connected(live.url, secret) as other:
            outcomes.append(await other.raw("claim_task", {"taskId": made["id"]}))

    async with anyio.create_task_group() as group:
        for issued in tokens:
            group.start_soon(try_claim, issued.token)
    winners = [text for text, is_error in outcomes if not is_error]
    assert len(winners) == 1, outcomes
    assert all("claimed by another agent" in text for text, is_error in outcomes if is_error), outcomes
    shown = await ok(agent, "get_task", taskId=made["id"])
    assert [e["what"] for e in shown["activity"]].count("claimed") == 1
    assert json.loads(winners[0])["claim"]["tokenId"] == shown["claim"]["tokenId"]


# update_progress: "Lands on the activity feed; doubles as the liveness heartbeat."


async def test_progress_lands_on_the_feed_and_renews_the_lease(agent, clock):
    made = await ok(agent, "create_task", title="work")
    claimed = await ok(agent, "claim_task", taskId=made["id"])
    clock.advance(minutes=10)
    beat = await ok(agent, "update_progress", taskId=made["id"], message="tests written")
    assert beat["leaseExpiresAt"] > claimed["claim"]["leaseExpiresAt"]
    shown = await ok(agent, "get_task", taskId=made["id"])
    assert shown["activity"][0]["what"] == "progress" and shown["activity"][0]["text"] == "tests written"


async def test_only_the_claimant_reports_progress_completes_or_releases(agent, live, second_token):
    made = await ok(agent, "create_task", title="mine", criteria=["done"])
    await ok(agent, "claim_task", taskId=made["id"])
    async with connected(live.url, second_token[0]) as other:
        for name, arguments in (
            ("update_progress", {"message": "me too"}),
            ("complete_task", {"summary": "done"}),
            ("release_task", {}),
            ("report_blocker", {"questions": ["?"]}),
        ):
            text = await refused(other, name, {"taskId": made["id"], **arguments})
            assert "claimed by another agent" in text, text
    assert (await ok(agent, "get_task", taskId=made["id"]))["column"] == "in_progress"


# complete_task: "a summary plus an optional met/not-met mapping per acceptance criterion. Moves the task to In
# Review; returns any tasks that became unblocked."


async def test_complete_maps_criteria_lands_done_by_default_and_returns_what_it_unblocked(agent):
    first = await ok(agent, "create_task", title="schema", criteria=["migrates", "rolls back"])
    second = await ok(agent, "create_task", title="endpoint")
    third = await ok(agent, "create_task", title="docs")
    await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=second["id"])
    await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=third["id"])
    await ok(agent, "link_tasks", taskId=second["id"], type="blocks", otherTaskId=third["id"])
    waiting = await ok(agent, "get_task", taskId=second["id"])
    assert waiting["waitingOn"] == [first["id"]] and {"type": "blocked_by", "taskId": first["id"]} in waiting["links"]
    assert (await ok(agent, "get_next_task"))["task"]["id"] == first["id"], "blocked tasks are not workable"
    text = await refused(agent, "claim_task", {"taskId": second["id"]})
    assert f"waits on {first['id']}" in text

    await ok(agent, "claim_task", taskId=first["id"])
    text = await refused(
        agent, "complete_task", {"taskId": first["id"], "summary": "s", "criteria": [{"index": 2, "met": True}]}
    )
    assert text.startswith("complete_task: criteria[0].index 2 is not a criterion of task") and "0-1" in text
    assert (await ok(agent, "get_task", taskId=first["id"]))["column"] == "in_progress", "nothing changed"
    done = await ok(
        agent,
        "complete_task",
        taskId=first["id"],
        summary="Migration shipped.",
        criteria=[{"index": 0, "met": True}, {"index": 1, "met": False, "note": "no down migration"}],
    )
    assert (done["status"], done["column"]) == ("completed", "done")
    assert done["criteria"] == [
        {"index": 0, "text": "migrates", "met": True},
        {"index": 1, "text": "rolls back", "met": False, "note": "no down migration"},
    ]
    assert done["delivery"]["summary"] == "Migration shipped."
    assert [t["id"] for t in done["unblocked"]] == [second["id"]], "the third still waits on the second"
    assert (await ok(agent, "get_task", taskId=third["id"]))["waitingOn"] == [second["id"]]
    assert (await ok(agent, "get_next_task"))["task"]["id"] == second["id"]


async def test_sign_off_policy_sends_a_delivery_to_review_and_unblocks_only_on_approval(agent, runtime, seeded):
    policy(runtime, seeded, sign_off=True)
    first = await ok(agent, "create_task", title="first")
    second = await ok(agent, "create_task", title="second")
    await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=second["id"])
    await ok(agent, "claim_task", taskId=first["id"])
    delivered = await ok(agent, "complete_task", taskId=first["id"], summary="done")
    assert (delivered["status"], delivered["column"], delivered["unblocked"]) == ("completed", "in_review", [])
    assert delivered["workspacePolicy"]["signOff"] is True
    assert (await ok(agent, "get_next_task"))["task"] is None
    from agent_workspace.services import task_board

    approved = task_board.review(runtime, human(seeded), first["id"], "approve", None)
    assert approved["column"] == "done" and [t["id"] for t in approved["unblocked"]] == [second["id"]]
    assert (await ok(agent, "get_next_task"))["task"]["id"] == second["id"]


async def test_agentrq_update_status_completed_also_respects_sign_off_and_unblocks(agent, runtime, seeded):
    first = await ok(agent, "create_task", title="first")
    second = await ok(agent, "create_task", title="second")
    await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=second["id"])
    await agent("task", "updateStatus", taskId=first["id"], status="completed")
    assert (await ok(agent, "get_task", taskId=first["id"]))["column"] == "done"
    assert (await ok(agent, "get_task", taskId=second["id"])).get("waitingOn") is None
    policy(runtime, seeded, sign_off=True)
    await agent("task", "updateStatus", taskId=second["id"], status="completed")
    assert (await ok(agent, "get_task", taskId=second["id"]))["column"] == "in_review"


# report_blocker: "Stuck on something needing human input. Notifies you immediately with specific unblocking
# questions."


async def test_report_blocker_blocks_with_the_questions_and_they_clear_when_work_resumes(agent):
    made = await ok(agent, "create_task", title="needs a decision")
    await ok(agent, "claim_task", taskId=made["id"])
    blocked = await ok(
        agent, "report_blocker", taskId=made["id"], message="Two currencies", questions=["EUR or USD?", "Rounding?"]
    )
    assert (blocked["status"], blocked["column"], blocked["questions"]) == (
        "blocked",
        "blocked",
        ["EUR or USD?", "Rounding?"],
    )
    shown = await ok(agent, "get_task", taskId=made["id"])
    assert shown["activity"][0]["what"] == "blocker" and shown["activity"][0]["questions"] == [
        "EUR or USD?",
        "Rounding?",
    ]
    await agent("task", "updateStatus", taskId=made["id"], status="ongoing")
    assert "questions" not in await ok(agent, "get_task", taskId=made["id"])
    text = await refused(agent, "report_blocker", {"taskId": made["id"], "questions": []})
    assert text.startswith("report_blocker: questions")


# release_task: "Put a claimed task back to Ready without completing it: clean hand-back, no zombie claim."


async def test_release_hands_back_to_ready_with_no_claim_left(agent):
    made = await ok(agent, "create_task", title="hand back")
    await ok(agent, "claim_task", taskId=made["id"])
    released = await ok(agent, "release_task", taskId=made["id"])
    assert (released["status"], released["column"]) == ("notstarted", "ready") and "claim" not in released
    assert (await ok(agent, "get_next_task"))["task"]["id"] == made["id"]
    text = await refused(agent, "release_task", {"taskId": made["id"]})
    assert "only a claimed task is released" in text


# update_task: "Edit an existing task's fields, including moving it between projects (or out of one — pass
# projectId: null) and in or out of a cycle (cycleId: null takes it out). Status moves are limited to triage,
# backlog, and ready."


async def test_update_task_edits_fields_and_null_clears_project_and_cycle(agent, runtime, seeded):
    cycle = board.create_cycle(runtime, human(seeded), "Sprint", "", None, active=True)
    project = await ok(agent, "create_project", title="Billing")
    made = await ok(agent, "create_task", title="t", projectId=project["id"], cycleId=cycle["id"])
    edited = await ok(agent, "update_task", taskId=made["id"], title="renamed", priority="urgent", labels=["x"])
    assert (edited["title"], edited["priority"], edited["projectId"]) == ("renamed", "urgent", project["id"])
    cleared = await ok(agent, "update_task", taskId=made["id"], projectId=None, cycleId=None)
    assert "projectId" not in cleared and "cycleId" not in cleared
    await ok(agent, "claim_task", taskId=made["id"])
    text = await refused(agent, "update_task", {"taskId": made["id"], "status": "backlog"})
    assert "claim, complete and release move work in flight" in text
    text = await refused(agent, "update_task", {"taskId": made["id"], "status": "done"})
    assert text.startswith("update_task: ") and "status" in text


# archive_task: "Soft-delete a task by archiving it. Requires a reason."


async def test_archive_needs_a_reason_hides_the_task_and_deletes_nothing(agent):
    made = await ok(agent, "create_task", title="obsolete")
    text = await refused(agent, "archive_task", {"taskId": made["id"]})
    assert text.startswith("archive_task: ") and "reason" in text
    archived = await ok(agent, "archive_task", taskId=made["id"], reason="superseded by WS-9")
    assert archived["archived"]["reason"] == "superseded by WS-9"
    assert made["id"] not in [t["id"] for t in (await ok(agent, "list_tasks"))["tasks"]]
    listed = await ok(agent, "list_tasks", includeArchived=True)
    assert made["id"] in [t["id"] for t in listed["tasks"]]
    assert (await ok(agent, "get_next_task"))["task"] is None
    assert (await ok(agent, "get_task", taskId=made["id"]))["title"] == "obsolete"


# link_tasks / add_comment


async def test_links_are_visible_from_both_sides_and_comments_are_apart_from_the_conversation(agent):
    a = await ok(agent, "create_task", title="a")
    b = await ok(agent, "create_task", title="b")
    await ok(agent, "link_tasks", taskId=a["id"], type="duplicate_of", otherTaskId=b["identifier"])
    again = await ok(agent, "link_tasks", taskId=a["id"], type="duplicate_of", otherTaskId=b["id"])
    assert again["created"] is False
    assert (await ok(agent, "get_task", taskId=b["id"]))["links"] == [{"type": "duplicated_by", "taskId": a["id"]}]
    text = await refused(agent, "link_tasks", {"taskId": a["id"], "type": "blocks", "otherTaskId": a["id"]})
    assert "otherTaskId" in text
    text = await refused(agent, "link_tasks", {"taskId": a["id"], "type": "parent_of", "otherTaskId": b["id"]})
    assert text.startswith("link_tasks: ") and "type" in text
    await ok(agent, "link_tasks", taskId=a["id"], type="blocks", otherTaskId=b["id"])
    text = await refused(agent, "link_tasks", {"taskId": b["id"], "type": "blocks", "otherTaskId": a["id"]})
    assert "wait on each other" in text

    comment = await ok(agent, "add_comment", taskId=a["id"], text="Found the root cause.")
    assert comment["text"] == "Found the root cause." and comment["by"] == "agent"
    shown = await ok(agent, "get_task", taskId=a["id"])
    assert [c["text"] for c in shown["comments"]] == ["Found the root cause."]
    assert (await ok(agent, "task", "get", taskId=a["id"], includeConversation=True))["conversation"]["messages"] == []
    assert "comments" not in await ok(agent, "get_task", taskId=a["id"], includeComments=False)


# list_tasks: "Filter or search tasks by query, status, epic, label, assignee, or what's assigned to you. cycleId
# narrows to one time-box, and the literal "active" ... Paginated with a string cursor."


async def test_list_tasks_filters_and_pages(agent, runtime, seeded):
    cycle = board.create_cycle(runtime, human(seeded), "Sprint", "", None, active=True)
    epic = await ok(agent, "create_epic", title="E")
    project = await ok(agent, "create_project", title="P")
    a = await ok(agent, "create_task", title="Refund endpoint", labels=["billing"], epicId=epic["id"])
    b = await ok(agent, "create_task", title="Invoice PDF", cycleId="active", projectId=project["id"])
    c = await ok(agent, "create_task", title="Other", description="mentions REFUNDS deep inside")
    await ok(agent, "claim_task", taskId=c["id"])

    def ids(listing: dict) -> set[str]:
        return {t["id"] for t in listing["tasks"]}

    assert ids(await ok(agent, "list_tasks", query="refund")) == {a["id"], c["id"]}
    assert ids(await ok(agent, "list_tasks", label="billing")) == {a["id"]}
    assert ids(await ok(agent, "list_tasks", epicId=epic["id"])) == {a["id"]}
    assert ids(await ok(agent, "list_tasks", projectId=project["id"])) == {b["id"]}
    in_cycle = {b["id"], c["id"]}  # c joined the active cycle when claimed
    assert (
        ids(await ok(agent, "list_tasks", cycleId="active"))
        == in_cycle
        == ids(await ok(agent, "list_tasks", cycleId=cycle["id"]))
    )
    assert ids(await ok(agent, "list_tasks", status="in_progress")) == {c["id"]}
    assert ids(await ok(agent, "list_tasks", status="ongoing")) == {c["id"]}
    assert ids(await ok(agent, "list_tasks", mine=True)) == {c["id"]}
    assert ids(await ok(agent, "list_tasks", assignee="human")) == set()
    text = await refused(agent, "list_tasks", {"status": "doing"})
    assert text.startswith("list_tasks: status must be one of")

    seen, cursor = [], None
    while True:
        page = await ok(agent, "list_tasks", limit=1, **({"cursor": cursor} if cursor else {}))
        seen += [t["id"] for t in page["tasks"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted([a["id"], b["id"], c["id"]]) and len(seen) == 3


# search / fetch: "OpenAI-shaped search over workspace tasks. Returns id, title, and a citation URL." and "fetch
# of one task by UUID or identifier. Body is description plus criteria, not activity."


async def test_search_and_fetch_have_the_openai_shapes_and_link_into_the_console(agent, live, seeded):
    made = await ok(
        agent, "create_task", title="Refund endpoint", summary="Refunds", description="POST /refunds", criteria=["201"]
    )
    await ok(agent, "add_comment", taskId=made["id"], text="a comment is not in the text")
    found = await ok(agent, "search", query="REFUND")
    url = f"{live.url.rsplit('/mcp', 1)[0]}/#/workspaces/{seeded.workspace_id}/tasks/{made['id']}"
    assert found == {"results": [{"id": made["id"], "title": "Refund endpoint", "url": url}]}
    fetched = await ok(agent, "fetch", id=made["identifier"])
    assert set(fetched) == {"id", "title", "text", "url", "metadata"} and fetched["url"] == url
    assert fetched["text"] == "POST /refunds\n\nAcceptance criteria:\n0. 201", fetched["text"]
    assert fetched["metadata"]["summary"] == "Refunds"
    assert fetched["metadata"]["identifier"] == made["identifier"] and fetched["metadata"]["column"] == "ready"
    assert (await ok(agent, "task", "search", query="nothing-like-this")) == {"results": []}


# get_task: "Plus pendingSuggestions — AI proposals nobody has accepted yet, where the criteria drafted at claim time
# sit — and the workspacePolicy the calling agent works under."


async def test_suggestions_wait_for_the_human_who_accepts_or_discards_them(agent, runtime, seeded):
    from agent_workspace.services import task_board

    made = await ok(agent, "create_task", title="vague")
    await ok(agent, "claim_task", taskId=made["id"])
    await ok(agent, "task", "suggest", taskId=made["id"], summary="Make it precise", criteria=["a", "b"])
    shown = await ok(agent, "get_task", taskId=made["id"])
    [pending] = shown["pendingSuggestions"]
    assert (pending["summary"], pending["criteria"]) == ("Make it precise", ["a", "b"])
    assert shown["workspacePolicy"] == {"supervised": False, "signOff": False} and "criteria" not in shown
    task = task_board.decide_suggestion(runtime, human(seeded), made["id"], pending["id"], accept=True)
    assert [c.text for c in task.criteria] == ["a", "b"] and task.pending_suggestions == ()


async def test_a_claim_whose_lease_ran_out_is_claimed_over_and_the_old_claimant_is_refused(
    agent, live, clock, second_token
):
    made = await ok(agent, "create_task", title="abandoned")
    await ok(agent, "claim_task", taskId=made["id"])
    async with connected(live.url, second_token[0]) as other:
        assert "claimed by another agent" in await refused(other, "claim_task", {"taskId": made["id"]})
        clock.advance(hours=2)  # past the lease with no heartbeat
        taken = await ok(other, "claim_task", taskId=made["id"])
        assert taken["claim"]["tokenId"] == second_token[1] and taken["column"] == "in_progress"
    text = await refused(agent, "update_progress", {"taskId": made["id"], "message": "still here"})
    assert "claimed by another agent" in text


async def test_releasing_a_task_dequeued_by_agentrq_get_puts_it_back_at_its_place(agent):
    made = await ok(agent, "create_task", title="dequeued")
    assert (await agent.get())["id"] == made["id"]
    assert (await ok(agent, "get_next_task"))["task"] is None, "held under the dequeue's lease"
    released = await ok(agent, "release_task", taskId=made["id"])
    assert (released["status"], released["column"]) == ("notstarted", "ready") and "claim" not in released
    assert (await ok(agent, "get_next_task"))["task"]["id"] == made["id"]


async def test_another_workspace_s_identifier_names_its_own_tasks_only(agent, live, runtime, seeded):
    from agent_workspace.services import accounts

    mine = await ok(agent, "create_task", title="mine")
    _, token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "Another team.")
    async with connected(live.url, token.token) as other:
        assert "no task" in await refused(other, "get_task", {"taskId": mine["identifier"]})
        theirs = await ok(other, "create_task", title="theirs")
        assert theirs["identifier"] == "WS-1"
        assert (await ok(other, "fetch", id="WS-1"))["title"] == "theirs"


async def test_agentrq_elicit_and_reply_take_the_short_identifier_too(agent):
    made = await ok(agent, "create_task", title="ask about it")
    text, is_error = await agent("task", "reply", taskId=made["identifier"], text="on it")
    assert not is_error, text
    asked = {"message": "OK?", "url": "https://example.com/ok", "timeoutSeconds": 1}
    assert (await ok(agent, "task", "elicit", taskId=made["identifier"], **asked))["action"] == "cancel"
    got = await ok(agent, "task", "get", taskId=made["id"], includeConversation=True)
    assert [m["kind"] for m in got["conversation"]["messages"]] == ["message", "question"]


async def test_a_completion_that_read_its_task_before_a_new_link_retries_and_unblocks_it(agent, runtime, seeded):
    first = await ok(agent, "create_task", title="first")
    second = await ok(agent, "create_task", title="second")
    stale = runtime.tasks.get(seeded.workspace_id, first["id"], consistent=True)
    await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=second["id"])
    reads = []
    real_get = runtime.tasks.get

    def first_read_stale(workspace_id, task_id, consistent=False):
        reads.append(task_id)
        return stale if len(reads) == 1 else real_get(workspace_id, task_id, consistent)

    runtime.tasks.get = first_read_stale  # the completion's first read predates the link
    try:
        await agent("task", "updateStatus", taskId=first["id"], status="completed")
    finally:
        del runtime.tasks.get
    assert len(reads) >= 2, "the stale write was refused and the change read the task again"
    assert (await ok(agent, "get_task", taskId=second["id"])).get("waitingOn") is None


async def test_each_masaro_task_tool_and_its_action_give_the_same_kind_of_answer(agent):
    """Every Masaro task-level name, then our action, on tasks made for the purpose: both answer, alike."""
    from agent_workspace.mcp_server.legacy import MASARO_NAMES

    async def fresh(claimed: bool = False) -> str:
        task = await ok(agent, "create_task", title="fresh", criteria=["c"])
        if claimed:
            await ok(agent, "claim_task", taskId=task["id"])
        return task["id"]

    arguments = {
        "list_tasks": lambda: {"status": "ready"},
        "get_task": lambda: {"taskId": made},
        "get_next_task": lambda: {},
        "claim_task": None,  # a fresh task each time, below
        "update_progress": None,
        "complete_task": None,
        "report_blocker": None,
        "release_task": None,
        "create_task": lambda: {"title": "t"},
        "update_task": lambda: {"taskId": made, "priority": "low"},
        "archive_task": None,
        "link_tasks": None,
        "add_comment": lambda: {"taskId": made, "text": "c"},
        "search": lambda: {"query": "fresh"},
        "fetch": lambda: {"id": made},
    }
    made = await fresh()
    for name, (tool, action) in MASARO_NAMES.items():
        if tool != "task":
            continue
        answers = []
        for by_name in (True, False):
            if name in ("claim_task", "archive_task"):
                args = {"taskId": await fresh()} | ({"reason": "r"} if name == "archive_task" else {})
            elif name in ("update_progress", "complete_task", "report_blocker", "release_task"):
                args = {"taskId": await fresh(claimed=True)}
                args |= {"update_progress": {"message": "m"}, "complete_task": {"summary": "s"}}.get(name, {})
                args |= {"questions": ["q?"]} if name == "report_blocker" else {}
            elif name == "link_tasks":
                args = {"taskId": await fresh(), "type": "relates_to", "otherTaskId": await fresh()}
            else:
                args = arguments[name]()
            answers.append(await (ok(agent, name, **args) if by_name else ok(agent, tool, action, **args)))
        assert set(answers[0]) == set(answers[1]), (name, answers)


# AgentRQ's updateStatus obeys the board: the claim, triage under supervision, the human's decline, archiving.


async def test_update_status_by_a_non_claimant_is_refused_and_the_claim_stands(agent, live, second_token):
    held = await ok(agent, "create_task", title="held", criteria=["c"])
    await ok(agent, "claim_task", taskId=held["id"])
    dequeued_id = await agent.create(title="dequeued by AgentRQ get", body="b")
    assert (await agent.get())["id"] == dequeued_id
    async with connected(live.url, second_token[0]) as other:
        for task_id in (held["id"], dequeued_id):
            for status in ("completed", "notstarted", "ongoing", "blocked", "rejected"):
                text, is_error = await other("task", "updateStatus", taskId=task_id, status=status)
                assert is_error, text
                assert text.startswith("task updateStatus: ") and "claimed by another agent" in text, text
        for name, arguments in (("update_task", {"title": "mine now"}), ("archive_task", {"reason": "mine now"})):
            text = await refused(other, name, {"taskId": held["id"], **arguments})
            assert "claimed by another agent" in text, text
    shown = await ok(agent, "get_task", taskId=held["id"])
    assert (shown["column"], shown["title"], shown.get("archived")) == ("in_progress", "held", None)
    assert (await ok(agent, "get_task", taskId=dequeued_id))["claim"] is not None
    text, is_error = await agent("task", "updateStatus", taskId=held["id"], status="completed")
    assert (text, is_error) == (f"task {held['id']} status set to completed", False), "the claimant still may"


async def test_update_status_after_the_lease_ran_out_is_anybody_s(agent, live, clock, second_token):
    made = await ok(agent, "create_task", title="abandoned")
    await ok(agent, "claim_task", taskId=made["id"])
    clock.advance(hours=2)
    async with connected(live.url, second_token[0]) as other:
        text, is_error = await other("task", "updateStatus", taskId=made["id"], status="completed")
    assert (text, is_error) == (f"task {made['id']} status set to completed", False)


async def test_update_status_cannot_take_a_task_out_of_triage_under_a_supervised_policy(agent, runtime, seeded):
    policy(runtime, seeded, supervised=True)
    proposed = await ok(agent, "create_task", title="proposal")
    for status in ("ongoing", "completed", "notstarted"):
        text, is_error = await agent("task", "updateStatus", taskId=proposed["id"], status=status)
        assert is_error and "in triage" in text and "the human accepts it" in text, text
    assert (await ok(agent, "get_task", taskId=proposed["id"]))["column"] == "triage"


async def test_update_status_cannot_undo_the_human_s_decline(agent, runtime, seeded):
    policy(runtime, seeded, supervised=True)
    proposed = await ok(agent, "create_task", title="declined proposal")
    task_board.triage(runtime, human(seeded), proposed["id"], "decline", "not now")
    for status in ("notstarted", "ongoing", "completed"):
        text, is_error = await agent("task", "updateStatus", taskId=proposed["id"], status=status)
        assert is_error and "declined by the human" in text, text
    assert (await ok(agent, "get_task", taskId=proposed["id"]))["column"] == "rejected"
    own = await ok(agent, "create_task", title="rejected through AgentRQ")
    task_board.triage(runtime, human(seeded), own["id"], "ready")
    tasks.set_status(runtime, human(seeded), own["id"], "rejected")  # AgentRQ's PATCH status: not a decline
    text, is_error = await agent("task", "updateStatus", taskId=own["id"], status="notstarted")
    assert (text, is_error) == (f"task {own['id']} status set to notstarted", False), "AgentRQ's reopening stays"


async def test_update_status_refuses_an_archived_task(agent, runtime, seeded):
    made = await ok(agent, "create_task", title="archived")
    await ok(agent, "archive_task", taskId=made["id"], reason="obsolete")
    text, is_error = await agent("task", "updateStatus", taskId=made["id"], status="ongoing")
    assert is_error and "archived" in text and "obsolete" in text, text
    with pytest.raises(Conflict):
        tasks.set_status(runtime, human(seeded), made["id"], "completed")
    assert (await ok(agent, "get_task", taskId=made["id"]))["status"] == "notstarted"


async def test_update_status_keeps_agentrq_s_texts_on_the_agent_s_own_work(agent):
    made = await agent.create(title="plain AgentRQ work", body="b")
    for status in ("ongoing", "ongoing", "blocked", "completed", "notstarted"):
        text, is_error = await agent("task", "updateStatus", taskId=made, status=status)
        assert (text, is_error) == (f"task {made} status set to {status}", False)


# link_tasks: a link that would close a cycle is refused (a blocks cycle waits forever); unlink undoes a link.


async def test_a_blocks_link_closing_a_cycle_of_any_length_is_refused_and_nothing_is_linked(agent):
    a, b, c, d = [await ok(agent, "create_task", title=name) for name in "abcd"]
    for first, second in ((a, b), (b, c), (c, d)):
        await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=second["id"])
    for closing in (c, d):
        text = await refused(agent, "link_tasks", {"taskId": closing["id"], "type": "blocks", "otherTaskId": a["id"]})
        assert text.startswith("link_tasks: ") and "cycle" in text and a["id"] in text, text
    assert (await ok(agent, "get_task", taskId=a["id"]))["links"] == [{"type": "blocks", "taskId": b["id"]}]
    assert (await ok(agent, "link_tasks", taskId=d["id"], type="relates_to", otherTaskId=a["id"]))["created"]
    await ok(agent, "link_tasks", taskId=a["id"], type="blocks", otherTaskId=d["id"])  # a shortcut: no cycle


async def test_a_parent_that_would_make_a_task_its_own_ancestor_is_refused(agent):
    top = await ok(agent, "create_task", title="top")
    middle = await ok(agent, "create_task", title="middle", parentId=top["id"])
    bottom = await ok(agent, "create_task", title="bottom", parentId=middle["identifier"])
    for below in (middle, bottom):
        text = await refused(agent, "update_task", {"taskId": top["id"], "parentId": below["id"]})
        assert text.startswith("update_task: ") and "parentId" in text and "cycle" in text, text
    assert (await ok(agent, "get_task", taskId=top["id"])).get("parentId") is None
    await ok(agent, "update_task", taskId=bottom["id"], parentId=top["id"])  # moving up the tree is fine


async def test_a_walk_past_its_bound_is_refused_saying_the_bound(agent, monkeypatch):
    monkeypatch.setattr("agent_workspace.services.task_board.BLOCKS_WALK_MAX", 2)
    monkeypatch.setattr("agent_workspace.services.task_board.PARENT_WALK_MAX", 2)
    chain = [await ok(agent, "create_task", title=f"step {n}") for n in range(4)]
    for first, second in zip(chain, chain[1:], strict=False):
        await ok(agent, "link_tasks", taskId=first["id"], type="blocks", otherTaskId=second["id"])
    new = await ok(agent, "create_task", title="new")
    text = await refused(agent, "link_tasks", {"taskId": new["id"], "type": "blocks", "otherTaskId": chain[0]["id"]})
    assert "more than 2" in text and "cycle" in text, text
    nested = [await ok(agent, "create_task", title="root")]
    for n in range(3):
        nested.append(await ok(agent, "create_task", title=f"level {n}", parentId=nested[-1]["id"]))
    text = await refused(agent, "update_task", {"taskId": new["id"], "parentId": nested[-1]["id"]})
    assert "parentId" in text and "more than 2" in text, text


@pytest.mark.parametrize("call", [("task", "unlink")], ids=["ours"])
async def test_unlink_removes_the_link_from_both_sides_and_the_blocked_task_stops_waiting(agent, call):
    a = await ok(agent, "create_task", title="a")
    b = await ok(agent, "create_task", title="b")
    await ok(agent, "link_tasks", taskId=a["id"], type="blocks", otherTaskId=b["id"])
    assert (await ok(agent, "get_task", taskId=b["id"]))["waitingOn"] == [a["id"]]
    removed = await ok(agent, *call, taskId=a["identifier"], type="blocks", otherTaskId=b["id"])
    assert removed == {"taskId": a["id"], "type": "blocks", "otherTaskId": b["id"], "removed": True}
    shown = await ok(agent, "get_task", taskId=b["id"])
    assert (shown["links"], shown.get("waitingOn")) == ([], None)
    assert (await ok(agent, "get_task", taskId=a["id"]))["links"] == []
    assert [e["what"] for e in shown["activity"]][:1] == ["unlinked"]
    again = await ok(agent, *call, taskId=a["id"], type="blocks", otherTaskId=b["id"])
    assert again["removed"] is False
    assert (await ok(agent, "claim_task", taskId=b["id"]))["column"] == "in_progress", "b waits on nothing now"
    text = await refused(agent, "task", {"action": "unlink", "payload": {"taskId": a["id"], "type": "blocked_by"}})
    assert text.startswith("task unlink: ") and "type" in text, text
