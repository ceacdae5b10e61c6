"""A task item never passes DynamoDB's 400 KB: a write that would is refused by name before it is sent, not
answered "internal error" (AWS: "Item size has exceeded the maximum allowed size", for the whole item after an
update too)."""

import json

import pytest

from agent_workspace.domain.clock import iso
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import HISTORY_MAX, TASK_ITEM_BYTES_MAX, Task
from agent_workspace.services import tasks
from agent_workspace.store.tasks import item_size, task_item
from tests.support import call

WIDE = "\U0001f600"  # 4 bytes of UTF-8 each, and its search text copies the body


@pytest.mark.anyio
async def test_a_task_whose_item_would_pass_400_kb_is_refused_naming_the_field(runtime, seeded):
    body = WIDE * 60_000  # under the body's 65,536 characters, but 240 KB, twice (body and search text)
    outcome = await call(
        runtime, seeded.agent_token, "task", {"action": "create", "payload": {"title": "t", "body": body}}
    )
    assert outcome.is_error, outcome.text[:300]
    assert outcome.text.startswith("task create: body: task "), outcome.text[:300]
    assert "bytes as stored" in outcome.text and "internal error" not in outcome.text, outcome.text[:300]
    listed = tasks.list_tasks(runtime, seeded.workspace_id, None, None, 50, None)["tasks"]
    assert [t["title"] for t in listed] == [], "nothing was stored"


def test_a_status_change_that_would_pass_the_budget_is_refused_by_name_and_the_task_stays(runtime, seeded):
    """History grows with every status change: the change that would take the item past its budget is refused,
    naming the task, and the task is left as it was."""
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")
    probe = Task.new(
        id=new_id(),
        workspace_id=seeded.workspace_id,
        by="agent",
        now=iso(runtime.clock()),
        title="t",
        body="",
        assignee="agent",
        number=1,
    )
    room = TASK_ITEM_BYTES_MAX - item_size(task_item(probe))
    body = WIDE * ((room - 40) // 8)  # the body and its search text: just under the budget
    made = tasks.create_task(runtime, actor, tasks.NewTask("t", body))
    outcome = None
    for status in ("ongoing", "notstarted") * 3:
        try:
            tasks.set_status(runtime, actor, made.id, status)
        except Exception as error:  # noqa: BLE001 (the refusal's type and text are what is asserted)
            outcome = error
            break
    assert outcome is not None, "the history grew past the budget unrefused"
    assert type(outcome).__name__ == "PayloadError" and "bytes as stored" in str(outcome), repr(outcome)
    stored = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert stored is not None and json.dumps(stored.history)


def _moved_back_and_forth(runtime, actor, task_id: str, times: int) -> None:
    for n in range(times):
        tasks.set_status(runtime, actor, task_id, "ongoing" if n % 2 == 0 else "notstarted")


def test_a_tasks_history_keeps_its_creation_and_its_latest_changes_however_often_it_moves(runtime, seeded):
    """A task moved back and forth without end keeps a bounded item: its creation and the latest changes, and a
    count of every change (each one is on the activity feed as well)."""
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")
    made = tasks.create_task(runtime, actor, tasks.NewTask("busy", "moves a lot"))
    _moved_back_and_forth(runtime, actor, made.id, HISTORY_MAX + 30)
    stored = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert stored is not None and stored.status_changes == HISTORY_MAX + 30
    assert len(stored.history) == HISTORY_MAX
    assert stored.history[0]["at"] == stored.created_at and stored.history[0]["status"] == "notstarted"
    assert stored.history[-1]["status"] == "notstarted" and stored.status == "notstarted"
    times = [entry["at"] for entry in stored.history]
    assert times == sorted(times)


def test_a_status_change_read_before_two_others_at_the_bound_applies_after_them_not_over_them(runtime, seeded):
    """At its bound the history is written whole and keeps its length, so the write is conditional on the count
    of changes read: a change that read the task before two others (A -> B -> A) re-reads and lands after them."""
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")
    made = tasks.create_task(runtime, actor, tasks.NewTask("raced", ""))
    _moved_back_and_forth(runtime, actor, made.id, HISTORY_MAX)  # at the bound, status notstarted
    raced: list[int] = []

    def two_others_first(read: Task) -> None:
        if not raced:  # between this change's read and its write, two other writers move the task and back
            raced.append(read.status_changes or 0)
            tasks.set_status(runtime, actor, made.id, "ongoing")
            tasks.set_status(runtime, actor, made.id, "notstarted")

    by = {"by": "agent", "tokenId": actor.token_id}
    runtime.tasks.set_status(
        seeded.account_id, seeded.workspace_id, made.id, "blocked", by, iso(runtime.clock()), check=two_others_first
    )
    stored = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert stored is not None and stored.status == "blocked"
    assert stored.status_changes == HISTORY_MAX + 3 == raced[0] + 3
    assert [entry["status"] for entry in stored.history[-3:]] == ["ongoing", "notstarted", "blocked"]
    assert len(stored.history) == HISTORY_MAX


def test_a_task_stored_before_changes_were_counted_is_counted_from_its_history(runtime, seeded):
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")
    made = tasks.create_task(runtime, actor, tasks.NewTask("old", ""))
    tasks.set_status(runtime, actor, made.id, "ongoing")
    runtime.clients.dynamodb.update_item(
        TableName=runtime.settings.table_name,
        Key={"PK": {"S": f"WS#{seeded.workspace_id}"}, "SK": {"S": f"TASK#{made.id}"}},
        UpdateExpression="REMOVE statusChanges",
    )
    old = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert old is not None and old.status_changes is None and len(old.history) == 2
    tasks.set_status(runtime, actor, made.id, "completed")
    stored = runtime.tasks.get(seeded.workspace_id, made.id, consistent=True)
    assert stored is not None and stored.status_changes == 2 and len(stored.history) == 3
