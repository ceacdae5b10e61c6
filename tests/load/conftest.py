"""The load suites' figures (how much, how fast, how many retries), printed in pytest's summary."""

import pytest

_FIGURES: list[str] = []


@pytest.fixture
def report():
    """`report("32 agents dequeued ...")`: a line for the summary at the end of the run."""
    return _FIGURES.append


def pytest_terminal_summary(terminalreporter) -> None:
    if _FIGURES:
        terminalreporter.section("load figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
