"""The load suites' crowd of agents, and their figures (how much, how fast, how many retries), printed in
pytest's summary."""

import pytest

from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts
from agent_workspace.services.accounts import IssuedToken
from tests.load import scale

_FIGURES: list[str] = []


@pytest.fixture
def report():
    """`report("32 agents dequeued ...")`: a line for the summary at the end of the run."""
    return _FIGURES.append


@pytest.fixture
def crowd(runtime, seeded) -> list[IssuedToken]:
    """An agent token of the seeded workspace for each concurrent agent (`.token`, and `.record.id` as
    claims and histories name it)."""
    return [
        accounts.issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
        for _ in range(scale.AGENTS)
    ]


def pytest_terminal_summary(terminalreporter) -> None:
    if _FIGURES:
        terminalreporter.section("load figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
