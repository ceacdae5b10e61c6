"""`make bench`'s verdicts (scripts/bench_goals.py): a goal passed by less than the machine's noise is a wobble, by
more a regression that makes the run exit 1."""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("bench_goals", Path(__file__).parents[2] / "scripts" / "bench_goals.py")
assert _spec is not None and _spec.loader is not None
goals = importlib.util.module_from_spec(_spec)
sys.modules["bench_goals"] = goals
_spec.loader.exec_module(goals)


def test_a_figure_at_or_under_its_goal_is_met():
    assert goals.Goal("cold import", 1.15, 1.15, kind="import").met


def test_a_figure_over_its_goal_by_less_than_the_repeated_run_noise_is_not_a_regression():
    wobble = goals.Goal("cold import", 1.17, 1.15, noise=0.01, kind="import")

    assert not wobble.met and not wobble.missed and wobble.margin == goals.REPEATED["import"]


def test_a_runs_own_spread_widens_the_margin_when_it_is_larger():
    noisy = goals.Goal("warm", 1.40, 1.30, noise=0.12, kind="latency")

    assert noisy.margin == 0.12 and not noisy.missed


def test_past_the_goal_by_more_than_the_noise_is_missed():
    assert goals.Goal("cold import", 1.39, 1.15, noise=0.03, kind="import").missed
    assert goals.Goal("events lost", 1.0, 0.0, kind="exact").missed


def test_the_summary_exits_1_only_when_a_goal_is_missed(capsys):
    within = [goals.Goal("a", 1.0, 1.15, kind="import"), goals.Goal("b", 1.16, 1.15, kind="import")]
    assert goals.summary(within) == 0
    assert goals.summary([*within, goals.Goal("c", 2.0, 1.15, kind="import")]) == 1
    assert "MISSED" in capsys.readouterr().out


def test_the_spread_is_half_the_range_of_the_samples():
    assert abs(goals.spread([1.30, 1.36, 1.34]) - 0.03) < 1e-9
    assert goals.spread([1.0]) == 0.0
    assert [len(part) for part in goals.chunks(list(range(12)))] == [3, 3, 2, 2, 2]
