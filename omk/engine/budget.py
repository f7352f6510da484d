"""A spending limit on one invocation of a run (`--budget-usd`, `budget_usd:`, `budget_per_sample_usd:`).

The spend is the target's cost of every result this invocation produced (a cached answer costs
nothing) plus every judge's calls so far (the judges keep their own tally). A run job checks the
budget before it starts: once the spend has reached the limit, no new job starts, and each job
left is recorded as not run. A job already under way finishes, its judge calls included, so the
spend can pass the limit by at most what the jobs in flight cost (one per concurrent slot).

A call whose cost is unknown (a model with no price) counts as nothing: `omk eval --dry-run`
names such models before the spend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from omk.records import SampleResult

if TYPE_CHECKING:
    from omk.judge import Judge
    from omk.records.budget import BudgetBlock
    from omk.settings.config import Settings


class Budget:
    """The limit, the judges whose calls count, and what the target has cost so far. A plain
    class: every run imports this module to ask whether it has a budget."""

    __slots__ = ("judges", "limit_usd", "target_usd")

    def __init__(self, limit_usd: float, judges: list[Judge] | None = None, target_usd: float = 0.0):
        self.limit_usd = limit_usd
        self.judges: list[Judge] = judges if judges is not None else []
        self.target_usd = target_usd

    @property
    def spent_usd(self) -> float:
        judged = sum(j.spent_usd() or 0.0 for j in self.judges)
        return round(self.target_usd + judged, 6)

    @property
    def reached(self) -> bool:
        return self.spent_usd >= self.limit_usd

    def add(self, result: SampleResult) -> None:
        if not result.cached and result.trace.cost_usd is not None:
            self.target_usd += result.trace.cost_usd

    def block(self, not_run: list[tuple[str, int]]) -> BudgetBlock:
        from omk.records.budget import BudgetBlock, NotRun  # loaded only by a run with a budget

        return BudgetBlock(self.limit_usd, self.spent_usd, tuple(NotRun(s, r) for s, r in not_run))


class Budgeted(Protocol):
    """What a budget needs of an evaluation (omk.engine.state.EvaluationState): its settings and
    judge, and where it keeps the budget and the jobs left out."""

    settings: Settings
    judge: Judge | None
    budget: Budget | None
    not_run: list[tuple[str, int]]


def budget_for(evaluations: Sequence[Budgeted], jobs: int) -> Budget | None:
    """The budget of a run of `jobs` (sample, repeat) runs over these evaluations (an experiment's
    variants share one), from the first one's settings; None when no budget was given. Both given:
    the smaller. Each evaluation is given it, so that its runtime checks it before every job."""
    settings = evaluations[0].settings
    limits = [settings.budget_usd, settings.budget_per_sample_usd * jobs if settings.budget_per_sample_usd else None]
    given = [float(x) for x in limits if x is not None]
    if not given:
        return None
    judges = {id(e.judge): e.judge for e in evaluations if e.judge is not None}
    budget = Budget(min(given), list(judges.values()))
    for evaluation in evaluations:
        evaluation.budget = budget
        evaluation.not_run = []
    return budget
