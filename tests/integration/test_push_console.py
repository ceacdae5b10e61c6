"""The console's push (issue 36): every change to a task its board shows is one `changed` message for the task's
workspace, published in the request that made it; a change to many tasks is one message; nothing while push is off.

The messages are read off the events queue (moto's SQS), where `services.push.publish` leaves them for the events
function to post to the sockets (tests/integration/test_push.py covers the sockets and the sender).
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from agent_workspace.domain.models import Actor
from agent_workspace.domain.tokens import hash_token
from agent_workspace.runtime import Runtime
from agent_workspace.services import board, push, schedules, task_board, tasks
from agent_workspace.services.task_board import Fields
from tests.support import PUSH_URL, bearer, receive_all


@pytest.fixture
def push_on(runtime: Runtime) -> Runtime:
    """The runtime as the template configures it: a WebSocket API, so changes are published."""
    runtime.settings = runtime.settings.model_copy(update={"push_url": PUSH_URL})
    return runtime


@dataclass(frozen=True)
class People:
    agent: Actor
    human: Actor


def people(rt: Runtime, seeded) -> People:
    token_id = rt.accounts.resolve_token(hash_token(seeded.agent_token)).token_id
    return People(
        Actor("agent", seeded.account_id, seeded.workspace_id, token_id),
        Actor("human", seeded.account_id, seeded.workspace_id, None),
    )


def console_messages(rt: Runtime) -> list[tuple[str, dict[str, Any]]]:
    """(workspace, message) of each console push on the events queue now; the channel's and the bridge's apart."""
    bodies = [json.loads(m["Body"]) for m in receive_all(rt)]
    return [(b["scope"], b["message"]) for b in bodies if b.get("type") == "push" and b["topic"] == "console"]


def all_pushes(rt: Runtime) -> list[dict[str, Any]]:
    bodies = [json.loads(m["Body"]) for m in receive_all(rt)]
    return [b for b in bodies if b.get("type") == "push"]


def changed(task_id: str | None = None, what: str = "task") -> dict[str, Any]:
    return {"type": "changed", "what": what} | ({"taskId": task_id} if task_id else {})


# Each kind of change the board shows: given a task on the board (ready, made by the human) and the people, make the
# change and return the id of the task it changed.
Change = Callable[[Runtime, People, str], str]


def _created_on_the_board(rt: Runtime, who: People, _: str) -> str:
    return task_board.create(rt, who.human, "Another", "", Fields()).id


def _created_by_an_agent(rt: Runtime, who: People, _: str) -> str:
    return tasks.create_task(rt, who.agent, tasks.NewTask("Mine", "")).id


def _edited(rt: Runtime, who: People, task_id: str) -> str:
    return task_board.update(rt, who.human, task_id, "Renamed", None, Fields(), None).id


def _moved(rt: Runtime, who: People, task_id: str) -> str:
    return task_board.update(rt, who.human, task_id, None, None, Fields(), "backlog").id


def _status_set(rt: Runtime, who: People, task_id: str) -> str:
    return tasks.set_status(rt, who.human, task_id, "ongoing").id


def _claimed(rt: Runtime, who: People, task_id: str) -> str:
    return task_board.claim(rt, who.agent, task_id)["id"]


def _released(rt: Runtime, who: People, task_id: str) -> str:
    task_board.claim(rt, who.agent, task_id)
    console_messages(rt)  # the claim's
    return task_board.release(rt, who.agent, task_id).id


def _dequeued(rt: Runtime, who: People, task_id: str) -> str:
    taken = tasks.dequeue(rt, who.agent)
    assert taken is not None and taken.id == task_id
    return taken.id


def _commented(rt: Runtime, who: People, task_id: str) -> str:
    return task_board.comment(rt, who.agent, task_id, "Halfway there")["taskId"]


def _message_posted(rt: Runtime, who: People, task_id: str) -> str:
    tasks.post_message(rt, who.human, task_id, "How is it going?", [])
    return task_id


def _linked(rt: Runtime, who: People, task_id: str) -> str:
    other = task_board.create(rt, who.human, "Related", "", Fields()).id
    console_messages(rt)
    return task_board.link(rt, who.human, task_id, "relates_to", other)["taskId"]


def _archived(rt: Runtime, who: People, task_id: str) -> str:
    return task_board.archive(rt, who.human, task_id, "a duplicate").id


def _completed(rt: Runtime, who: People, task_id: str) -> str:
    task_board.claim(rt, who.agent, task_id)
    console_messages(rt)
    return task_board.complete(rt, who.agent, task_id, "Done", [])["id"]


def _template_deleted(rt: Runtime, who: People, _: str) -> str:
    template = tasks.create_task(rt, who.human, tasks.NewTask("Hourly", "", cron_schedule="30 * * * *"))
    console_messages(rt)
    return schedules.delete_template(rt, who.human.account_id, who.human.workspace_id, template.id).id


CHANGES: dict[str, Change] = {
    "created on the board": _created_on_the_board,
    "created by an agent": _created_by_an_agent,
    "edited": _edited,
    "moved to another column": _moved,
    "its status set": _status_set,
    "claimed": _claimed,
    "released": _released,
    "dequeued": _dequeued,
    "commented": _commented,
    "a message posted": _message_posted,
    "linked": _linked,
    "archived": _archived,
    "completed": _completed,
    "a cron template deleted": _template_deleted,
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_each_change_to_a_task_publishes_one_console_message_for_its_workspace(push_on, seeded, name):
    who = people(push_on, seeded)
    task = task_board.create(push_on, who.human, "Work", "", Fields())
    assert console_messages(push_on) == [(seeded.workspace_id, changed(task.id))]

    changed_id = CHANGES[name](push_on, who, task.id)

    assert console_messages(push_on) == [(seeded.workspace_id, changed(changed_id))]


@pytest.mark.parametrize("name", list(CHANGES))
def test_nothing_is_published_for_a_change_while_push_is_off(runtime, seeded, name):
    who = people(runtime, seeded)
    task = task_board.create(runtime, who.human, "Work", "", Fields())

    CHANGES[name](runtime, who, task.id)

    assert all_pushes(runtime) == []


def test_a_change_that_moves_a_task_into_the_inbox_says_so_in_its_one_message(push_on, seeded):
    who = people(push_on, seeded)
    task = task_board.create(push_on, who.human, "Work", "", Fields())
    task_board.claim(push_on, who.agent, task.id)
    console_messages(push_on)

    task_board.report_blocker(push_on, who.agent, task.id, None, ["Which database?"])

    assert console_messages(push_on) == [(seeded.workspace_id, changed(task.id, "needs"))]


def test_one_request_of_the_human_is_one_console_message(push_on, live, seeded):
    who = people(push_on, seeded)
    task = task_board.create(push_on, who.human, "Work", "", Fields())
    console_messages(push_on)

    with httpx.Client(base_url=live.url, timeout=30) as api:
        response = api.patch(
            f"/api/workspaces/{seeded.workspace_id}/tasks/{task.id}",
            json={"status": "ongoing"},
            headers=bearer(seeded.human_token),
        )

    assert response.status_code == 200, response.text
    assert console_messages(push_on) == [(seeded.workspace_id, changed(task.id))]


def test_activating_a_cycle_that_moves_many_tasks_is_one_message_naming_none(push_on, seeded):
    who = people(push_on, seeded)
    cycle = board.create_cycle(push_on, who.human, "Sprint", "", None, active=False)
    for n in range(3):
        task_board.create(
            push_on, who.human, f"Work {n}", "", Fields(cycle_id=cycle["id"], given=frozenset({"cycle_id"}))
        )
    console_messages(push_on)

    board.activate_cycle(push_on, who.human, cycle["id"])

    assert console_messages(push_on) == [(seeded.workspace_id, changed())]


def test_coalescing_joins_each_workspaces_changes_into_one_message(push_on, seeded):
    with push.coalescing(push_on):
        push.task_changed(push_on, "ws-one", "task-a")
        push.console_changed(push_on, "ws-one", "task-a")  # the same task's question: the inbox too
        push.task_changed(push_on, "ws-two", "task-b")
        push.task_changed(push_on, "ws-two", "task-c")
        with push.coalescing(push_on):  # an inner block leaves the publishing to the outer one
            push.task_changed(push_on, "ws-three", "task-d")
        assert console_messages(push_on) == [], "published only when the block ends"

    assert sorted(console_messages(push_on), key=lambda m: m[0]) == [
        ("ws-one", changed("task-a", "needs")),
        ("ws-three", changed("task-d")),
        ("ws-two", changed()),  # two tasks: the console reads its board again
    ]


def test_what_was_changed_before_an_error_is_still_published(push_on, seeded):
    with pytest.raises(RuntimeError), push.coalescing(push_on):
        push.task_changed(push_on, seeded.workspace_id, "task-a")
        raise RuntimeError("the next write failed")

    assert console_messages(push_on) == [(seeded.workspace_id, changed("task-a"))]
