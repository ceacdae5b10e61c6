"""`make bench`'s verdicts: each goal met or not, and the exit status that lets CI stop a regression.

A measurement on a shared machine moves from run to run, so a goal counts as missed only when the figure passes it
by more than the machine's noise: the larger of that run's own spread (half the range of the figure over the run's
independent samples: each fresh-interpreter pair for an import, each fifth of the interleaved calls for latency) and
the spread seen across repeated runs (`REPEATED`). Five `make bench-ci` runs back to back on the 2-CPU development
machine (December 2026) gave cold import 1.34-1.39x, warm tools/call 1.46-1.53x, the events function 23-24 % and
the schedule function 25-26 %: half ranges of 0.025, 0.035 and one point, taken up to 0.03, 0.05 and two points.
The idle cost is arithmetic: no noise.
"""

from __future__ import annotations

from dataclasses import dataclass

NOISE_FLOOR = 0.02  # of the goal, for a figure without a repeated-run margin of its own
# Half the range each figure moved over repeated runs, with headroom (see above).
REPEATED = {"import": 0.03, "latency": 0.05, "share": 0.02, "exact": 0.0}


@dataclass(frozen=True)
class Goal:
    name: str
    measured: float
    goal: float
    noise: float = 0.0  # the run's own spread, in the figure's unit
    unit: str = "x"
    kind: str = ""  # a key of REPEATED: the spread seen across runs of this kind of figure

    @property
    def margin(self) -> float:
        if self.kind in REPEATED:
            return max(self.noise, REPEATED[self.kind])
        return max(self.noise, NOISE_FLOOR * self.goal)

    @property
    def met(self) -> bool:
        return self.measured <= self.goal

    @property
    def missed(self) -> bool:
        """Past the goal by more than the machine's noise: a regression, not a wobble."""
        return self.measured > self.goal + self.margin

    def line(self) -> str:
        state = "met" if self.met else "within noise" if not self.missed else "MISSED"
        return (
            f"    {state:<13}{self.name:<58}{_shown(self.measured, self.unit):>10} "
            f"(goal <= {_shown(self.goal, self.unit)}, noise {_shown(self.margin, self.unit)})"
        )


def spread(samples: list[float]) -> float:
    """Half the range of independent samples of one figure: how far a run may wander from its own median."""
    return (max(samples) - min(samples)) / 2 if len(samples) > 1 else 0.0


def chunks(values: list[float], parts: int = 5) -> list[list[float]]:
    return [values[i::parts] for i in range(parts) if values[i::parts]]


def summary(goals: list[Goal]) -> int:
    """Print every goal's verdict; 1 when any was missed by more than its noise, else 0."""
    print("\nGoals")
    for goal in goals:
        print(goal.line())
    missed = [goal.name for goal in goals if goal.missed]
    print(
        f"    {len(goals) - len(missed)} of {len(goals)} within their goals"
        + (f"; missed: {', '.join(missed)}" if missed else "")
    )
    return 1 if missed else 0


def _shown(value: float, unit: str) -> str:
    if unit == "$":
        return f"${value:.4f}"
    if unit == "%":
        return f"{value:.0%}"
    if unit == "s":
        return f"{value * 1e3:.0f} ms"
    if unit == "n":
        return f"{value:.0f}"
    return f"{value:.2f}x"
