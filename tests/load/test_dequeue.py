"""Many agents, one queue: every task handed out exactly once, none lost, counts and claims in step."""

import json
import time
from collections import Counter

import anyio
import pytest

from agent_workspace.services.tasks import Actor, NewTask, create_task
from tests.load import scale
from tests.support import Agent, mcp_client

pytestmark = pytest.mark.anyio

BUSY = "retry shortly"  # the one error an agent under contention may see, and is told to retry


async def test_concurrent_agents_dequeue_and_complete_every_task_exactly_once(live, runtime, seeded, crowd, report):
    actor = Actor("human", seeded.account_id, seeded.workspace_id, "seed")
    created = {create_task(runtime, actor, NewTask(title=f"task {n}", body="")).id for n in range(scale.TASKS)}
    handed_out: list[list[str]] = [[] for _ in crowd]
    busy = Counter()
    latencies: list[float] = []
    requests = Counter()

    def count(http_response, model, **_) -> None:
        requests[model.name] += 1
        requests["refused"] += http_response.status_code == 400  # a condition that failed: someone was first

    events = runtime.clients.dynamodb.meta.events  # the session's clients: counting stops with the test

    async def timed(agent: Agent, *args, **payload) -> tuple[str, bool]:
        begun = time.monotonic()
        answer = await agent(*args, **payload)
        latencies.append(time.monotonic() - begun)
        return answer

    async def work(index: int, token: str) -> None:
        async with mcp_client(live.url, token, timeout=scale.SECONDS) as client:
            agent = Agent(client)
            while True:
                text, is_error = await timed(agent, "task", "get")
                if is_error and BUSY in text:
                    busy["get"] += 1
                    continue
                assert not is_error, text
                if text == "null":
                    return
                task_id = json.loads(text)["id"]
                handed_out[index].append(task_id)
                text, is_error = await timed(agent, "task", "updateStatus", taskId=task_id, status="completed")
                assert (text, is_error) == (f"task {task_id} status set to completed", False)

    started = time.monotonic()
    events.register("after-call.dynamodb", count)
    try:
        with anyio.fail_after(scale.SECONDS):
            async with anyio.create_task_group() as group:
                for index, issued in enumerate(crowd):
                    group.start_soon(work, index, issued.token)
    finally:
        events.unregister("after-call.dynamodb", count)
    elapsed = time.monotonic() - started

    everything = [task_id for ids in handed_out for task_id in ids]
    assert len(everything) == len(set(everything)), "a task was handed out twice"
    assert set(everything) == created, "a task was lost"
    assert sum(1 for ids in handed_out if ids) >= min(2, scale.AGENTS)  # the work really was shared
    for issued, ids in zip(crowd, handed_out, strict=True):
        for task_id in ids:
            task = runtime.tasks.get(seeded.workspace_id, task_id, consistent=True)
            assert task.claim["tokenId"] == issued.record.id
            assert [entry["status"] for entry in task.history] == ["notstarted", "completed"]
    counts = runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts
    assert counts == {"notstarted": 0, "ongoing": 0, "blocked": 0, "completed": scale.TASKS, "rejected": 0}
    latencies.sort()
    report(
        f"dequeue: {scale.AGENTS} agents got and completed {scale.TASKS} tasks, each exactly once, in {elapsed:.0f} s "
        f"({len(latencies)} calls; median {latencies[len(latencies) // 2]:.2f} s, max {latencies[-1]:.2f} s; "
        f"{busy['get']} busy answers retried; per agent {min(map(len, handed_out))}-{max(map(len, handed_out))} tasks; "
        f"DynamoDB: {requests['Query'] / scale.TASKS:.1f} queries and {requests['UpdateItem'] / scale.TASKS:.1f} "
        f"UpdateItems per task, {requests['refused']} refused conditions)"
    )
