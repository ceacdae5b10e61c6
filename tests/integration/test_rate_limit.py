"""Per-token rate limiting: a token over its requests per minute gets 429 with Retry-After, nothing else does."""

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest

from agent_workspace.local.stack import seed
from tests.integration.test_auth_and_api import workspace_get
from tests.support import bearer

LIMIT = 3


@pytest.fixture
def clock(clock, runtime):
    """conftest's clock, 10 s into a minute, and a limit three requests reach."""
    clock.set(datetime(2026, 12, 2, 15, 0, 10, tzinfo=UTC))
    runtime.settings = runtime.settings.model_copy(update={"rate_limit_per_minute": LIMIT})
    return clock


def workspaces(live, token: str) -> httpx.Response:
    return httpx.get(f"{live.url}/api/workspaces", headers=bearer(token), timeout=10)


def test_a_token_over_its_limit_gets_429_with_retry_after_until_the_next_minute(live, seeded, clock):
    assert [workspaces(live, seeded.human_token).status_code for _ in range(LIMIT)] == [200] * LIMIT
    refused = workspaces(live, seeded.human_token)
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.headers["retry-after"] == "51"  # 50 s left in the minute, rounded up
    assert "limit" in refused.json()["detail"]

    clock.advance(seconds=50)  # the next minute
    assert workspaces(live, seeded.human_token).status_code == 200


def test_mcp_requests_count_too_and_are_refused_before_the_server_reads_them(live, seeded, clock):
    assert [workspace_get(live, seeded.agent_token).status_code for _ in range(LIMIT)] == [200] * LIMIT
    refused = workspace_get(live, seeded.agent_token)
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "51"
    assert refused.json()["status"] == 429


def test_one_token_at_its_limit_leaves_every_other_token_alone(live, runtime, seeded, clock):
    for _ in range(LIMIT):
        workspaces(live, seeded.human_token)
    assert workspaces(live, seeded.human_token).status_code == 429
    assert workspace_get(live, seeded.agent_token).status_code == 200  # same account, another token
    stranger = seed(runtime)
    assert workspaces(live, stranger.human_token).status_code == 200


def test_unknown_and_revoked_tokens_are_401_not_429(live, seeded, clock):
    for _ in range(LIMIT + 2):
        assert workspaces(live, "aw_human_not-a-real-token").status_code == 401
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}/tokens"
    minted = httpx.post(base, headers=bearer(seeded.human_token)).json()
    assert httpx.delete(f"{base}/{minted['id']}", headers=bearer(seeded.human_token)).status_code == 204
    assert workspace_get(live, minted["agentToken"]).status_code == 401


def test_concurrent_requests_are_counted_exactly(live, runtime, seeded, clock):
    runtime.settings = runtime.settings.model_copy(update={"rate_limit_per_minute": 5})
    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = sorted(pool.map(lambda _: workspaces(live, seeded.human_token).status_code, range(12)))
    assert statuses == [200] * 5 + [429] * 7


def test_a_clock_behind_the_stored_minute_counts_into_it_instead_of_failing(live, seeded, clock):
    """Lambda instances' clocks differ by a little: one still in the last minute must not be refused or stall."""
    clock.advance(minutes=1)
    assert workspaces(live, seeded.human_token).status_code == 200  # opens the newer minute
    clock.advance(minutes=-1)
    assert [workspaces(live, seeded.human_token).status_code for _ in range(LIMIT)] == [200] * (LIMIT - 1) + [429]
