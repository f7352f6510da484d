"""Run-level figures the run engine owns: `--repeat` spread per sample, and cost spent this run."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean, stdev
from typing import Any

from omk.records import SampleResult
from omk.scoring.digest import Digest, digests
from omk.scoring.layers import round2


def spent_cost(results: Iterable[SampleResult | Digest]) -> float | None:
    """Money this run spent: cached results cost nothing now (their trace keeps the original cost)."""
    known = [(cost, r.cached) for r in digests(results) if (cost := r.cost_usd) is not None]
    if not known:
        return None  # no result reported a cost: unknown, not zero
    return round(float(sum(cost for cost, cached in known if not cached)), 6)


def repeat_stats(results: Iterable[SampleResult | Digest]) -> list[dict[str, Any]]:
    """Per sample, in first-seen order: runs, pass rate, and composite mean / stddev / min / max.

    The composite figures use the runs that produced an output (an errored run has no score);
    errored runs still count in `runs` and against the pass rate. `stddev` is the sample standard
    deviation, null with fewer than two scored runs.
    """
    by_sample: dict[str, list[SampleResult | Digest]] = {}
    for r in results:
        by_sample.setdefault(r.sample_id, []).append(r)
    stats = []
    for sid, runs in by_sample.items():
        composites = [r.scores.composite for r in runs if r.status == "ok"]
        passed = sum(1 for r in runs if r.passed)
        stats.append(
            {
                "sample_id": sid,
                "runs": len(runs),
                "errored": sum(1 for r in runs if r.status == "error"),
                "passed": passed,
                "pass_rate": round2(passed / len(runs)),
                "composite": {
                    "mean": round2(fmean(composites)) if composites else None,
                    "stddev": round2(stdev(composites)) if len(composites) >= 2 else None,
                    "min": min(composites) if composites else None,
                    "max": max(composites) if composites else None,
                },
            }
        )
    return stats


def repeat_summary(stats: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """Sample-level counts next to the run-level ones: how many samples passed every run, some, none."""
    return {
        "n": n,
        "samples": len(stats),
        "always_passed": sum(1 for s in stats if s["passed"] == s["runs"]),
        "flaky": sum(1 for s in stats if 0 < s["passed"] < s["runs"]),
        "never_passed": sum(1 for s in stats if s["passed"] == 0),
    }
