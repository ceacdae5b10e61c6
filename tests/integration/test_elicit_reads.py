"""How often a waiting `task elicit` reads the store: at most once a second (60 DynamoDB reads a minute), and often
enough that an answer is noticed within 3 s of being given.

The real wait loop runs on the test's `Clock`: the loop's sleeps (`blocking.pause`) move it instead of passing, and
both what the loop reads the time from (the runtime's clock for the question's age, `time.monotonic` for the end
of one call's wait) read it. So ten minutes of waiting, over the calls an agent makes as each returns `pending`
after `agent_wait_seconds`, pass in the moment its reads take.
"""

import json
from collections import Counter
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from agent_workspace import blocking
from agent_workspace.domain.tokens import hash_token
from agent_workspace.mcp_server.dispatch import dispatch
from agent_workspace.services import elicitations
from agent_workspace.services.tasks import Actor, NewTask, create_task
from agent_workspace.tool_registry import Call
from agent_workspace.tools import REGISTRY

pytestmark = pytest.mark.anyio

READS_PER_MINUTE = 60  # the goal: one read a second at most
NOTICED_WITHIN = 3.0  # seconds from an answer to the read that finds it, at most
QUESTION_SECONDS = 600


@pytest.fixture
def reads(runtime, clock, monkeypatch) -> list[float]:
    """The seconds on `clock` at which the store was read, while the wait loop's time is the clock's."""
    clock.set(datetime(2026, 12, 2, 9, 0, tzinfo=UTC))
    monkeypatch.setattr(elicitations, "pause", clock.sleep)
    monkeypatch.setattr(elicitations, "time", SimpleNamespace(monotonic=clock.monotonic))
    monkeypatch.setattr(blocking, "time", SimpleNamespace(monotonic=clock.monotonic))  # wait_ends_at's
    started = clock.monotonic()
    at: list[float] = []

    def read(**_) -> None:
        at.append(clock.monotonic() - started)

    events = runtime.clients.dynamodb.meta.events  # the session's shared client: the hook is removed after
    for operation in ("GetItem", "Query"):
        events.register(f"before-call.dynamodb.{operation}", read)
    yield at
    for operation in ("GetItem", "Query"):
        events.unregister(f"before-call.dynamodb.{operation}", read)


async def test_an_unanswered_question_is_read_at_most_once_a_second_and_never_3_s_apart(runtime, seeded, reads):
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    task = create_task(runtime, Actor.of(principal), NewTask(title="Release", body=""))
    reads.clear()  # the reads from here on: the question's
    ask = {"taskId": task.id, "message": "Ship?", "url": "https://example.com/ok", "timeoutSeconds": QUESTION_SECONDS}
    outcome = await dispatch(REGISTRY, Call(principal, runtime, "ask"), "task", {"action": "elicit", "payload": ask})
    calls = 1
    while (answer := json.loads(outcome.text))["action"] == "pending":  # the agent resumes, as `next` tells it
        resume = {"taskId": task.id, "elicitationId": answer["elicitationId"]}
        outcome = await dispatch(
            REGISTRY, Call(principal, runtime, f"resume {calls}"), "task", {"action": "elicit", "payload": resume}
        )
        calls += 1

    assert answer == {"action": "cancel"}
    wait_cap = runtime.settings.agent_wait_seconds
    assert calls >= QUESTION_SECONDS // wait_cap, "the question outlived a call's wait: each ended pending"
    per_minute = Counter(int(at // 60) for at in reads)
    assert max(per_minute.values()) <= READS_PER_MINUTE, sorted(per_minute.items())
    assert reads[-1] >= QUESTION_SECONDS - NOTICED_WITHIN, "the reads went on until the question expired"
    # Times on the test clock are the machine's monotonic origin plus what the loop slept: a difference of two keeps
    # the origin's rounding (3.0000000000004547 for a 3 s sleep), which a microsecond absorbs.
    gaps = [round(later - earlier, 6) for earlier, later in zip(reads, reads[1:], strict=False)]
    assert max(gaps) <= NOTICED_WITHIN, max(gaps)
