"""The run summary: counts, cost, and layer means.

Each layer's mean is over the samples where that layer was scored, errored ones included: when
the judge fails on every sample, the fact and behavior layers its checks did score still show
(`composite — (fact 5.00, behavior —, judge —)`). The composite is over the samples that ran
and were graded."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean
from typing import TYPE_CHECKING

from omk.records import SampleResult
from omk.records.document import LayerMeans, Summary
from omk.scoring.capabilities import capability_breakdown
from omk.scoring.categories import category_breakdown
from omk.scoring.digest import Digest, digests
from omk.scoring.intervals import layer_intervals, run_pass_rate
from omk.scoring.layers import round2
from omk.stats.bootstrap import Draws

if TYPE_CHECKING:
    from omk.records.repeats import VarianceSources

LAYERS = ("fact", "behavior", "judge")


def _mean(values: list[float]) -> float | None:
    return round2(fmean(values)) if values else None


def summarize(items: Iterable[SampleResult | Digest], threshold: float, duration_ms: float) -> Summary:
    """The run summary of results (or of their digests, which is all it reads), in plan order."""
    results = digests(items)
    draws = Draws()  # the figures with as many values share the bootstrap's draws
    ok = [r for r in results if r.status == "ok"]
    costs = [r.cost_usd for r in results if r.cost_usd is not None]
    every = [r.scores for r in results]
    scores: dict[str, float | None] = {
        "fact": _mean([v for s in every if (v := s.fact) is not None]),
        "behavior": _mean([v for s in every if (v := s.behavior) is not None]),
        "judge": _mean([v for s in every if (v := s.judge) is not None]),
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
        categories=category_breakdown(results, draws),  # none when no sample has a category
        scores_ci=layer_intervals(results, draws=draws),
        pass_rate_ci=run_pass_rate(results),
        variance=spread_sources(results),
        capabilities=capability_breakdown(results, draws),  # none when no sample names a capability
    )


def spread_sources(results: list[Digest]) -> VarianceSources | None:
    """`summary.variance` from the graded results (omk/scoring/variance.py)."""
    graded = [r for r in results if r.graded]
    judged = [r.judge for r in graded if r.judge is not None]
    calls = max((j.calls for j in judged), default=1)
    if calls <= 1 and len({r.sample_id for r in graded}) == len(graded):  # no repeats of either: nothing to split
        return None
    groups: dict[str, list[float]] = {}
    for r in graded:
        groups.setdefault(r.sample_id, []).append(r.scores.composite)
    noises = [j.noise for j in judged if j.noise is not None]
    from omk.scoring.variance import Design, variance_sources

    asked = sum(j.items * j.calls for j in judged)
    judge_costs = [j.cost_usd for j in judged if j.cost_usd is not None]
    target_costs = [r.cost_usd for r in graded if r.cost_usd is not None and not r.cached]
    design = Design(
        samples=len(groups),
        repeats=len(graded) / len(groups) if groups else 0,
        judge_calls=calls,
        judge_items=sum(j.items for j in judged) / len(graded) if graded else 0,
        target_cost=round(fmean(target_costs), 8) if target_costs else None,
        judge_cost=round(sum(judge_costs) / asked, 8) if judge_costs and asked else None,
    )
    return variance_sources(groups, fmean(noises) if noises else None, design)
