"""Named-task queues: a task the human named for one agent token sits in that token's own queue, so another
token's `next` and dequeue never read it, and no token ever takes a task named for another (docs/data-model.md,
"The queue")."""

import pytest

from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Unavailable
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Criterion, Task
from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.services import task_board, tasks
from agent_workspace.services.accounts import issue_token
from agent_workspace.store import keys
from agent_workspace.store import tasks as task_store
from agent_workspace.store.dynamo import key, to_item


def agent_of(seeded, runtime) -> tuple[Actor, Actor]:
    """The seeded workspace's agent and a second agent token of it."""
    other = issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    assert principal is not None
    first = Actor("agent", seeded.account_id, seeded.workspace_id, principal.token_id)
    return first, Actor("agent", seeded.account_id, seeded.workspace_id, other.record.id)


def named_task(runtime, seeded, token_id: str | None, title: str, **fields) -> str:
    """A ready task for the agent, named for `token_id` (None: for any agent), created as the store creates tasks."""
    fields = {"column": "ready"} | fields
    task = Task.new(
        id=new_id(),
        workspace_id=seeded.workspace_id,
        by="human",
        now=iso(runtime.clock()),
        title=title,
        body="",
        assignee="agent",
        assigned_token=token_id,
        **fields,
    )
    runtime.tasks.create(seeded.account_id, task)
    return task.id


def queue_of(runtime, seeded, task_id: str) -> str | None:
    item = runtime.clients.dynamodb.get_item(
        TableName=runtime.settings.table_name,
        Key=key(keys.workspace_pk(seeded.workspace_id), keys.task_sk(task_id)),
        ConsistentRead=True,
    )["Item"]
    return item.get(keys.GSI1_PK, {}).get("S")


def test_a_task_named_for_a_token_is_in_its_own_queue_and_only_it_takes_it(runtime, seeded):
    first, second = agent_of(seeded, runtime)
    named = named_task(runtime, seeded, first.token_id, "for the first")
    assert queue_of(runtime, seeded, named) == keys.queue_pk(seeded.workspace_id, first.token_id)

    assert task_board.next_task(runtime, second)["task"] is None
    assert tasks.dequeue(runtime, second) is None
    taken = tasks.dequeue(runtime, first)
    assert taken is not None and taken.id == named


def test_a_named_task_queued_before_named_queues_is_still_found_by_its_token_only_and_moves_on_its_claim(
    runtime, seeded
):
    """Existing data: a named task written with the open queue's key (as every task was before) is still its token's
    to take, never another's; the claim rewrites its queue key to its token's queue."""
    first, second = agent_of(seeded, runtime)
    legacy = named_task(runtime, seeded, first.token_id, "named before named queues")
    runtime.clients.dynamodb.update_item(
        TableName=runtime.settings.table_name,
        Key=key(keys.workspace_pk(seeded.workspace_id), keys.task_sk(legacy)),
        UpdateExpression="SET GSI1PK = :open",
        ExpressionAttributeValues=to_item({":open": f"QUEUE#{seeded.workspace_id}"}),
    )

    assert task_board.next_task(runtime, second)["task"] is None
    assert tasks.dequeue(runtime, second) is None
    assert task_board.next_task(runtime, first)["task"]["id"] == legacy
    taken = tasks.dequeue(runtime, first)
    assert taken is not None and taken.id == legacy
    assert queue_of(runtime, seeded, legacy) == keys.queue_pk(seeded.workspace_id, first.token_id)


def test_named_tasks_come_before_the_open_queue(runtime, seeded):
    first, _ = agent_of(seeded, runtime)
    open_task = named_task(runtime, seeded, None, "open, older")
    named = named_task(runtime, seeded, first.token_id, "named, newer")
    assert [tasks.dequeue(runtime, first).id for _ in range(2)] == [named, open_task]  # type: ignore[union-attr]


def test_a_queue_whose_first_pages_are_all_held_is_read_at_most_four_pages_then_refused_as_busy(
    runtime, seeded, monkeypatch
):
    """The hard cap per call: held tasks (claimed, lease live) are read past, but never without bound."""
    first, second = agent_of(seeded, runtime)
    monkeypatch.setattr(task_store, "_QUEUE_PAGE", 2)
    monkeypatch.setattr(task_store, "_QUEUE_PAGE_MAX", 2)
    for n in range(12):
        named_task(runtime, seeded, None, f"held {n}")
    for _ in range(12):
        assert tasks.dequeue(runtime, first) is not None  # claimed, never started: held under a live lease
    # A backlog task with criteria ranks after every ready one, held or not.
    named_task(runtime, seeded, None, "behind the held ones", column="backlog", criteria=(Criterion(0, "c"),))
    queries: list[str] = []
    events = runtime.clients.dynamodb.meta.events
    events.register("before-call.dynamodb.Query", lambda **_: queries.append("Query"), unique_id="count-queries")
    try:
        with pytest.raises(Unavailable, match="held"):
            task_board.next_task(runtime, second)
    finally:
        events.unregister("before-call.dynamodb.Query", unique_id="count-queries")
    assert len(queries) == 1 + 4, queries  # its own (empty) queue, then 4 pages of the open one
