"""The board's columns and queue ranks (domain/columns.py): the order the queue index sorts tasks in."""

import itertools

import pytest

from agent_workspace.domain.columns import COLUMNS, DEFAULT_COLUMN, PRIORITIES, column_of, queue_rank
from agent_workspace.store.keys import queue_rank_of, queue_sk

EARLY, LATE = "2026-01-01T00:00:00.000Z", "2999-12-31T23:59:59.999Z"


def key(available: str = EARLY, **rank) -> str:
    defaults = {"column": "ready", "named": False, "in_active_cycle": False, "priority": None}
    return queue_sk(available, "0kGogHmaqvZ", queue_rank(**(defaults | rank)))


def test_a_plain_agentrq_task_keeps_the_key_it_had_before_the_board():
    assert key() == f"{EARLY}#0kGogHmaqvZ" and key(priority="none") == key()


def test_pools_sort_assigned_then_ready_then_backlog_whatever_the_times():
    assigned = key(LATE, named=True, priority="none")
    ready_ranked = [key(LATE, priority=p) for p in PRIORITIES[:-1]]
    plain_ready = key(LATE)
    backlog = key(EARLY, column="backlog", in_active_cycle=True, priority="urgent")
    assert sorted([backlog, plain_ready, *ready_ranked, assigned]) == [assigned, *ready_ranked, plain_ready, backlog]


@pytest.mark.parametrize("column", ["ready", "backlog"])
def test_within_a_pool_the_active_cycle_first_then_priority_then_age(column):
    ordered = [
        key(available, column=column, in_active_cycle=cycle, priority=priority)
        for cycle, priority, available in itertools.product((True, False), PRIORITIES, (EARLY, LATE))
    ]
    assert sorted(ordered) == ordered


def test_the_rank_is_read_back_from_a_key():
    ranked = key(priority="high")
    assert queue_rank_of(ranked) == ranked.split("#")[0] + "#" and queue_rank_of(key()) == ""


def test_a_stored_column_counts_only_while_it_belongs_to_the_status():
    assert column_of("notstarted", "triage") == "triage"
    assert column_of("ongoing", "triage") == "in_progress", "a status change made elsewhere wins"
    assert column_of("completed", None) == "done"
    assert {DEFAULT_COLUMN[status] for _, status, _ in COLUMNS} <= {name for name, _, _ in COLUMNS}
