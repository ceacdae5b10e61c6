"""Agents and a human changing the same tasks' statuses at once: every history is a true account of what
was answered, the counts and the queue agree with the tasks, and a completion publishes its event once."""

import json
import random
from collections import Counter

import anyio
import httpx
import pytest

from agent_workspace.domain.tasks import STATUSES
from agent_workspace.domain.tokens import hash_token
from agent_workspace.local.drivers import queue_arn, sqs_record
from agent_workspace.services import accounts, events
from agent_workspace.services.tasks import Actor, NewTask, create_task
from agent_workspace.workers import fan_out
from tests.load import scale
from tests.support import Agent, mcp_client, receive_all

pytestmark = pytest.mark.anyio

TASKS = 6  # few, so that the changes collide
BUSY = "retry shortly"


async def test_concurrent_status_changes_leave_histories_counts_and_queue_consistent(
    live, runtime, seeded, crowd, report
):
    account_id, workspace_id = seeded.account_id, seeded.workspace_id
    event = events.define_event(runtime, account_id, "release_done", "")
    subscriber, _ = accounts.create_workspace(runtime.accounts, account_id, "QA", "")
    events.subscribe(runtime, account_id, subscriber.id, event.id, "Check the release", "Smoke-test it.")
    seeder = Actor("human", account_id, workspace_id, "seed")
    task_ids = [create_task(runtime, seeder, NewTask(title=f"t{n}", body="")).id for n in range(TASKS - 1)]
    announcing = create_task(runtime, seeder, NewTask(title="release", body="", event_id=event.id)).id
    task_ids.append(announcing)

    token_ids = {issued.record.id for issued in crowd}
    human_token_id = runtime.accounts.resolve_token(hash_token(seeded.human_token)).token_id
    answered: Counter = Counter()  # (tokenId, taskId, status) answered as set
    busy = Counter()
    changes_each = max(1, scale.TASKS // scale.AGENTS)

    async def agent_changes(issued) -> None:
        token_id = issued.record.id
        rng = random.Random(token_id)
        async with mcp_client(live.url, issued.token, timeout=scale.SECONDS) as client:
            agent = Agent(client)
            for _ in range(changes_each):
                task_id, status = rng.choice(task_ids), rng.choice(STATUSES)
                text, is_error = await agent("task", "updateStatus", taskId=task_id, status=status)
                if is_error and BUSY in text:
                    busy["agent"] += 1
                    continue
                assert (text, is_error) == (f"task {task_id} status set to {status}", False)
                answered[token_id, task_id, status] += 1

    async def human_changes() -> None:
        rng = random.Random(0)
        headers = {"authorization": f"Bearer {seeded.human_token}"}
        async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=scale.SECONDS) as http:
            for _ in range(changes_each):
                task_id, status = rng.choice(task_ids), rng.choice(STATUSES)
                response = await http.patch(f"/api/workspaces/{workspace_id}/tasks/{task_id}", json={"status": status})
                if response.status_code == 503:
                    busy["human"] += 1
                    assert response.headers["retry-after"]
                    continue
                assert response.status_code == 200, response.text
                assert response.json()["status"] == status
                answered[human_token_id, task_id, status] += 1

    with anyio.fail_after(scale.SECONDS):
        async with anyio.create_task_group() as group:
            for issued in crowd:
                group.start_soon(agent_changes, issued)
            group.start_soon(human_changes)

    stored = {task_id: runtime.tasks.get(workspace_id, task_id, consistent=True) for task_id in task_ids}
    recorded: Counter = Counter()
    for task_id, task in stored.items():
        history = task.history
        assert history[0]["status"] == "notstarted" and history[0]["by"] == "human"
        assert history[-1]["status"] == task.status
        for before, after in zip(history, history[1:], strict=False):
            assert before["status"] != after["status"], f"{task_id}: a change recorded from a status to itself"
            assert before["at"] <= after["at"]
        for entry in history[1:]:
            assert entry["tokenId"] == human_token_id or entry["tokenId"] in token_ids
            recorded[entry["tokenId"], task_id, entry["status"]] += 1
    # Every recorded change was answered as made (a busy answer changed nothing); an answered change that
    # is not recorded was a no-op: the task already had that status.
    assert not recorded - answered
    changed = sum(recorded.values())
    assert changed > TASKS  # the races really happened

    counts = runtime.accounts.get_workspace(account_id, workspace_id).task_counts
    assert counts == {status: sum(t.status == status for t in stored.values()) for status in STATUSES}

    # The queue holds exactly the tasks left notstarted, each once.
    async with mcp_client(live.url, crowd[0].token) as client:
        agent, dequeued = Agent(client), []
        while (task := await agent.get()) is not None:
            dequeued.append(task["id"])
    assert sorted(dequeued) == sorted(t for t, task in stored.items() if task.status == "notstarted")

    # The release task published its event once, however many times it was completed, and the messages
    # (one per completion while undelivered), delivered in any number, make one trigger task.
    completed = any(entry["status"] == "completed" for entry in stored[announcing].history)
    publications, _ = runtime.events.list_publications(account_id, 50, None, 0)
    assert len(publications) == (1 if completed else 0)
    if completed:
        # The agents' blockers also queued the human's notifications (decision 0010): only publications here.
        messages = [m for m in receive_all(runtime) if json.loads(m["Body"]).get("type") != "notify"]
        assert {json.loads(m["Body"])["publicationId"] for m in messages} == {publications[0].id}
        records = [sqs_record(m, queue_arn(runtime), runtime.settings.aws_region) for m in messages]
        assert fan_out.handle({"Records": records + records}, None, runtime) == {"batchItemFailures": []}
        triggered, _ = runtime.tasks.list_page(subscriber.id, None, None, 50, None)
        assert [t.created_by for t in triggered] == ["event"]

    report(
        f"status races: {scale.AGENTS} agents and a human made {changes_each * (scale.AGENTS + 1)} status changes "
        f"on {TASKS} tasks: {changed} recorded, each in a history consistent with counts and queue; "
        f"{sum(busy.values())} busy answers, none of which changed anything; the event task published "
        f"{len(publications)} time(s)"
    )
