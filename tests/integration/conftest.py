"""Fixtures of the integration tests: the seeded workspace's agent, connected to the live server over MCP."""

import pytest

from tests.support import Agent, connected


@pytest.fixture
def agent_type() -> type[Agent]:
    """What `agent` is: a module whose tests speak to one tool overrides this with its `Agent` bound to that tool."""
    return Agent


@pytest.fixture
async def agent(live, seeded, agent_type: type[Agent]):
    async with connected(live.url, seeded.agent_token, agent_type) as agent:
        yield agent
