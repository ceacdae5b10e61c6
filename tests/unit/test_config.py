"""The wait caps: read from WORKSPACE_* at start-up, refused when they could not keep a request bounded."""

import pytest
from pydantic import ValidationError

from agent_workspace.config import BRIDGE_POLL_MAX_SECONDS, Settings


def test_the_default_caps_keep_every_wait_under_a_60_second_client_timeout():
    settings = Settings()
    assert settings.agent_wait_seconds == 45 and settings.bridge_poll_seconds == BRIDGE_POLL_MAX_SECONDS == 25


def test_an_operator_raises_the_elicit_cap_for_clients_with_longer_timeouts(monkeypatch):
    monkeypatch.setenv("WORKSPACE_AGENT_WAIT_SECONDS", "240")
    monkeypatch.setenv("WORKSPACE_BRIDGE_POLL_SECONDS", "10")
    settings = Settings()
    assert (settings.agent_wait_seconds, settings.bridge_poll_seconds) == (240, 10)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WORKSPACE_AGENT_WAIT_SECONDS", "0"),
        ("WORKSPACE_AGENT_WAIT_SECONDS", "-5"),
        ("WORKSPACE_AGENT_WAIT_SECONDS", "901"),  # longer than any Lambda invocation
        ("WORKSPACE_BRIDGE_POLL_SECONDS", "0"),
        ("WORKSPACE_BRIDGE_POLL_SECONDS", "26"),  # longer than the bridge protocol's longest wait
    ],
)
def test_a_cap_that_is_not_positive_or_is_too_long_is_refused_at_start_up(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match=name.removeprefix("WORKSPACE_").lower()):
        Settings()


def test_one_accounts_waits_stay_below_the_apis_reserved_concurrency(monkeypatch):
    """The template passes ApiReservedConcurrency as it is: empty means no cap, a number holds the account cap to half
    of it, so one account's waits always leave half the invocations to everyone else."""
    monkeypatch.setenv("WORKSPACE_API_CONCURRENCY", "")
    assert Settings().account_waits_cap == 12
    monkeypatch.setenv("WORKSPACE_API_CONCURRENCY", "25")
    assert Settings().account_waits_cap == 12
    monkeypatch.setenv("WORKSPACE_API_CONCURRENCY", "6")
    assert Settings().account_waits_cap == 3
    monkeypatch.setenv("WORKSPACE_WAITS_PER_ACCOUNT", "100")
    monkeypatch.setenv("WORKSPACE_API_CONCURRENCY", "1000")
    assert Settings().account_waits_cap == 100
