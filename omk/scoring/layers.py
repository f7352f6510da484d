"""Layer scores and the composite (spec §4): `1 + 4·ratio`, rounded half-up to 2 places."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from omk.model import AssertionResult, Layer, Scores, Status


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
    fact = weighted_score([r for r in results if r.layer is Layer.FACT])
    behavior = weighted_score([r for r in results if r.layer is Layer.BEHAVIOR])
    judge = round2(judge_score) if judge_score is not None else None
    present = [s for s in (fact, behavior, judge) if s is not None]
    composite = round2(sum(present) / len(present)) if present else 0.0
    return Scores(fact=fact, behavior=behavior, judge=judge, composite=composite)


def passes(scores: Scores, threshold: float) -> bool:
    """Every present layer must reach the threshold; a sample with no layer does not pass."""
    present = [s for s in (scores.fact, scores.behavior, scores.judge) if s is not None]
    return bool(present) and all(s >= threshold for s in present)
