"""A task item never passes DynamoDB's 400 KB: a write that would is refused by name before it is sent, not
answered "internal error" (AWS: "Item size has exceeded the maximum allowed size", for the whole item after an
update too)."""

import json

import pytest

from agent_workspace.domain.clock import iso
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import TASK_ITEM_BYTES_MAX, Task
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
