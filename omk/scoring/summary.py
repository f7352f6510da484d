"""The run summary: counts, cost, and layer means.

Each layer's mean is over the samples where that layer was scored, errored ones included: when
the judge fails on every sample, the fact and behavior layers its checks did score still show
(`composite — (fact 5.00, behavior —, judge —)`). The composite is over the samples that ran
and were graded."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean

from omk.records import SampleResult
from omk.records.document import LayerMeans, Summary
from omk.scoring.categories import category_breakdown
from omk.scoring.digest import Digest, digests
from omk.scoring.layers import round2

LAYERS = ("fact", "behavior", "judge")


def _mean(values: list[float]) -> float | None:
    return round2(fmean(values)) if values else None


def summarize(items: Iterable[SampleResult | Digest], threshold: float, duration_ms: float) -> Summary:
    """The run summary of results (or of their digests, which is all it reads), in plan order."""
    results = digests(items)
    ok = [r for r in results if r.status == "ok"]
    costs = [r.cost_usd for r in results if r.cost_usd is not None]
    scores: dict[str, float | None] = {
        layer: _mean([v for r in results if (v := getattr(r.scores, layer)) is not None]) for layer in LAYERS
    }
    scores["composite"] = _mean([r.scores.composite for r in ok if r.graded])
    layer_means = [v for k, v in scores.items() if k in LAYERS and v is not None]
    passed = sum(1 for r in results if r.passed)
    judge_skipped = sum(r.skipped_judge_items for r in results)
    return Summary(
        total=len(results),
        ok=len(ok),
        errored=len(results) - len(ok),
        passed=passed,
        failed=len(results) - passed,
        cost_usd=round(sum(costs), 6) if costs else None,
        duration_ms=round(duration_ms, 1),
        scores=LayerMeans(**scores),
        threshold=threshold,
        gate_passed=bool(results) and passed == len(results) and bool(layer_means) and all(v >= threshold for v in layer_means),
        skipped_judge_items=judge_skipped,
        categories=category_breakdown(results),  # none when no sample has a category
    )
