"""Layer scores and the composite: `1 + 4·ratio`, rounded half-up to 2 places (docs/scoring.md)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from omk.records import AssertionResult, Scores
from omk.samples.model import Layer, Status

# The members as plain module names: reading a member from its enum class is slow (Python 3.11
# looks it up through the class's machinery each time), and these are read for every check.
_FACT, _PASSED, _SKIPPED = Layer.FACT, Status.PASSED, Status.SKIPPED


@lru_cache(maxsize=4096)  # scores repeat (a few assertions per sample give a few ratios)
def round2(x: float) -> float:
    """JS `Number(x.toFixed(2))`: half-up on the float's exact binary value."""
    return float(Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def ratio_to_score(ratio: float) -> float:
    return round2(1 + 4 * ratio)


def weighted_score(results: list[AssertionResult]) -> float | None:
    """Score of graded (non-skipped) results by weight; None when nothing was graded."""
    graded = [r for r in results if r.status is not Status.SKIPPED]
    total = sum(r.weight for r in graded)
    if not graded or total <= 0:
        return None
    passed = sum(r.weight for r in graded if r.status is Status.PASSED)
    return ratio_to_score(passed / total)


def score_sample(results: list[AssertionResult], judge_score: float | None) -> Scores:
    # one pass over the checks, weights summed per layer (as weighted_score does for one layer):
    # total and passed weight, and how many were graded, of the facts and of the behaviors
    fact_total = fact_passed = behavior_total = behavior_passed = 0.0
    facts = behaviors = 0
    for r in results:
        status = r.status
        if status is _SKIPPED:
            continue
        weight = r.weight
        if r.layer is _FACT:
            fact_total += weight
            facts += 1
            if status is _PASSED:
                fact_passed += weight
        else:
            behavior_total += weight
            behaviors += 1
            if status is _PASSED:
                behavior_passed += weight
    fact = round2(1 + 4 * (fact_passed / fact_total)) if facts and fact_total > 0 else None
    behavior = round2(1 + 4 * (behavior_passed / behavior_total)) if behaviors and behavior_total > 0 else None
    judge = round2(judge_score) if judge_score is not None else None
    if judge is None and fact is not None and behavior is not None:  # most samples: both layers of checks
        return Scores(fact, behavior, None, round2((fact + behavior) / 2))
    present = [s for s in (fact, behavior, judge) if s is not None]
    composite = round2(sum(present) / len(present)) if present else 0.0
    return Scores(fact, behavior, judge, composite)


def passes(scores: Scores, threshold: float) -> bool:
    """Every present layer must reach the threshold; a sample with no layer does not pass."""
    fact, behavior, judge = scores.fact, scores.behavior, scores.judge
    if fact is None and behavior is None and judge is None:
        return False
    return (fact is None or fact >= threshold) and (behavior is None or behavior >= threshold) and (judge is None or judge >= threshold)


def is_graded(scores: Scores) -> bool:
    """Whether anything was scored: some layer is present."""
    return any(s is not None for s in (scores.fact, scores.behavior, scores.judge))


def score_turns(turns: list[Scores]) -> Scores:
    """A conversation's scores (docs/scoring.md): each layer is the mean of that layer over the
    turns that have it, and the composite is the mean of the graded turns' composites. Turns
    with nothing graded count in neither; with no graded turn every layer is absent, composite 0."""

    def mean(values: list[float]) -> float | None:
        return round2(sum(values) / len(values)) if values else None

    graded = [t for t in turns if is_graded(t)]
    return Scores(
        fact=mean([t.fact for t in graded if t.fact is not None]),
        behavior=mean([t.behavior for t in graded if t.behavior is not None]),
        judge=mean([t.judge for t in graded if t.judge is not None]),
        composite=mean([t.composite for t in graded]) or 0.0,
    )
