"""Agents incrementing one shared counter in memory, each save conditional on the revision it read:
the classic lost update. The final count must equal the saves answered as made."""

import json
import time

import anyio
import pytest

from tests.load import scale
from tests.support import Agent, mcp_client

pytestmark = pytest.mark.anyio

INCREMENTS_EACH = 3
STALE = "expectedRevision"  # in the refusal of a save whose revision is no longer current
KEPT = 20  # earlier revisions memory keeps


async def test_conditional_saves_from_many_agents_lose_no_update(live, runtime, seeded, crowd, report):
    workspace_id = seeded.workspace_id
    tokens = [issued.token for issued in crowd]
    async with mcp_client(live.url, tokens[0]) as client:
        text, is_error = await Agent(client)("memory", "save", name="counter.md", content="0", expectedRevision=0)
        assert not is_error, text
    refused = 0

    async def increment(token: str) -> None:
        nonlocal refused
        async with mcp_client(live.url, token, timeout=scale.SECONDS) as client:
            agent = Agent(client)
            done = 0
            while done < INCREMENTS_EACH:
                loaded = json.loads((await agent("memory", "load", name="counter.md"))[0])
                text, is_error = await agent(
                    "memory",
                    "save",
                    name="counter.md",
                    content=str(int(loaded["content"]) + 1),
                    expectedRevision=loaded["revision"],
                )
                if is_error:
                    assert STALE in text, text
                    refused += 1
                    continue
                done += 1

    started = time.monotonic()
    with anyio.fail_after(scale.SECONDS):
        async with anyio.create_task_group() as group:
            for token in tokens:
                group.start_soon(increment, token)
    elapsed = time.monotonic() - started

    total = scale.AGENTS * INCREMENTS_EACH
    stored = runtime.memory.get(workspace_id, "counter.md")
    assert (stored.content, stored.revision) == (str(total), total + 1)
    # The kept revisions are consecutive counts: each save built on the one before it.
    for revision in range(max(1, total + 2 - KEPT), total + 2):
        assert runtime.memory.get_revision(workspace_id, "counter.md", revision).content == str(revision - 1)
    assert refused > 0  # the saves really raced
    report(
        f"memory: {scale.AGENTS} agents made {total} conditional increments of one counter in {elapsed:.0f} s; "
        f"{refused} stale saves refused, final count {stored.content}: no update lost"
    )
