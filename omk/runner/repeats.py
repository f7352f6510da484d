"""Run-level figures the run engine owns: `--repeat` spread per sample, and cost spent this run.

Every run asks for its cost; the spread's records and statistics load only under `--repeat`."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean, stdev
from typing import TYPE_CHECKING

from omk.records import SampleResult
from omk.scoring.digest import Digest, digests
from omk.scoring.layers import round2

if TYPE_CHECKING:
    from omk.records.repeats import KMean, Repeats, RepeatSample


def spent_cost(results: Iterable[SampleResult | Digest]) -> float | None:
    """Money this run spent: cached results cost nothing now (their trace keeps the original cost)."""
    known = [(cost, r.cached) for r in digests(results) if (cost := r.cost_usd) is not None]
    if not known:
        return None  # no result reported a cost: unknown, not zero
    return round(float(sum(cost for cost, cached in known if not cached)), 6)


def repeat_stats(results: Iterable[SampleResult | Digest]) -> list[RepeatSample]:
    """Per sample, in first-seen order: runs, pass rate, composite mean / stddev / min / max, and
    pass@k / pass^k for k = 1 … runs (omk/stats/reliability.py).

    The composite figures use the runs that produced an output (an errored run has no score);
    errored runs still count in `runs` and against the pass rate and pass@k. `stddev` is the
    sample standard deviation, null with fewer than two scored runs.
    """
    from omk.records.repeats import CompositeSpread, RepeatSample
    from omk.stats.reliability import pass_at_k, pass_hat_k

    by_sample: dict[str, list[SampleResult | Digest]] = {}
    for r in results:
        by_sample.setdefault(r.sample_id, []).append(r)
    stats = []
    for sid, runs in by_sample.items():
        composites = [r.scores.composite for r in runs if r.status == "ok"]
        n, passed = len(runs), sum(1 for r in runs if r.passed)
        stats.append(
            RepeatSample(
                sample_id=sid,
                runs=n,
                errored=sum(1 for r in runs if r.status == "error"),
                passed=passed,
                pass_rate=round2(passed / n),
                composite=CompositeSpread(
                    mean=round2(fmean(composites)) if composites else None,
                    stddev=round2(stdev(composites)) if len(composites) >= 2 else None,
                    min=min(composites) if composites else None,
                    max=max(composites) if composites else None,
                ),
                pass_at_k=tuple(round(pass_at_k(n, passed, k), 4) for k in range(1, n + 1)),
                pass_hat_k=tuple(round(pass_hat_k(n, passed, k), 4) for k in range(1, n + 1)),
            )
        )
    return stats


def _k_means(stats: list[RepeatSample], n: int, hat: bool) -> tuple[KMean, ...]:
    """pass@k (or pass^k) for k = 1 … n over the run: the mean of the samples run at least k
    times, with its bootstrap interval over samples (exact values, not the rounded ones)."""
    from omk.records.document import Bounds
    from omk.records.repeats import KMean
    from omk.stats.reliability import pass_at_k, pass_hat_k, run_figures

    estimate = pass_hat_k if hat else pass_at_k
    columns = [[estimate(s.runs, s.passed, k) for s in stats if s.runs >= k] for k in range(1, n + 1)]
    return tuple(
        KMean(f.k, f.samples, round(f.mean, 4), Bounds(**f.ci.to_dict()) if f.ci else None) for f in run_figures(columns)
    )


def repeats_of(stats: list[RepeatSample], n: int) -> Repeats:
    """The `repeats` section: sample-level counts next to the run-level ones (how many samples
    passed every run, some, none), each sample with the flaky ones first, and pass@k / pass^k."""
    from omk.records.repeats import Repeats

    return Repeats(
        n=n,
        samples=len(stats),
        always_passed=sum(1 for s in stats if s.passed == s.runs),
        flaky=sum(1 for s in stats if s.flaky),
        never_passed=sum(1 for s in stats if s.passed == 0),
        per_sample=tuple(sorted(stats, key=lambda s: not s.flaky)),  # stable: first-seen order within
        pass_at_k=_k_means(stats, n, hat=False),
        pass_hat_k=_k_means(stats, n, hat=True),
    )
