"""How hard the load suites push: sized for `make test` by default, raised by `make soak` through the
environment (SOAK_AGENTS, SOAK_TASKS, SOAK_DUPLICATES, SOAK_SECONDS)."""

import os


def _count(name: str, default: int) -> int:
    value = int(os.environ.get(name, default))
    if value < 1:
        raise ValueError(f"{name} must be a positive count, not {value}")
    return value


AGENTS = _count("SOAK_AGENTS", 16)  # concurrent MCP clients, each with its own agent token
TASKS = _count("SOAK_TASKS", 200)  # tasks in the queue they share
DUPLICATES = _count("SOAK_DUPLICATES", 40)  # publications / cron firings delivered several times over
SECONDS = _count("SOAK_SECONDS", 300)  # each load test fails rather than run past this
