"""How reliably a sample passes when it is run several times (`--repeat N`): pass@k and pass^k.

For a sample run n times with c passing runs:

- **pass@k** is the chance that at least one of k runs passes. Its unbiased estimator, over the
  k-run subsets of the n runs, is 1 − C(n − c, k) / C(n, k): the share of subsets with a pass.
- **pass^k** is the chance that all k runs pass, estimated the same way: C(c, k) / C(n, k), the
  share of subsets in which every run passed.

At k = 1 both are the pass rate c / n. pass@k grows with k (more tries, more chances) and pass^k
shrinks (more tries, more chances to fail once); a sample that always passes or never passes has
the same value for every k, and the gap between the two is how flaky the sample is.

For the run, each k's figure is the mean over the samples run at least k times, with a bootstrap
interval over samples (omk/stats/bootstrap.py, seed 0): if the samples are a fair draw of the
tasks you care about, the interval covers the mean over such tasks. When every sample has the
same value (all pass every run, say) the interval is that value: resampling cannot vary it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean

import msgspec

from omk.stats.bootstrap import Interval, bootstrap_mean_cis, effective_resamples

RESAMPLES = 10_000


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= passes <= runs and 1 <= k <= runs (runs={n}, passes={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of the chance that at least one of k runs passes: 1 − C(n−c, k)/C(n, k)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of the chance that all k runs pass: C(c, k)/C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


class KFigure(msgspec.Struct, frozen=True, gc=False):
    """One k's figure for the run: the mean over the samples run at least k times, its interval."""

    k: int
    samples: int
    mean: float
    ci: Interval | None  # None below two samples


def run_figures(values_by_k: Sequence[Sequence[float]], *, level: float = 0.95, seed: int = 0) -> tuple[KFigure, ...]:
    """For k = 1, 2, …: the mean of the samples' values at k and its bootstrap interval. Columns
    of the same length (every k when every sample ran as often) share one set of draws."""
    by_length: dict[int, list[int]] = {}
    for i, values in enumerate(values_by_k):
        if values:
            by_length.setdefault(len(values), []).append(i)
    intervals: dict[int, Interval | None] = {}
    for length, ks in by_length.items():
        cis = bootstrap_mean_cis(
            [values_by_k[i] for i in ks], level=level, resamples=effective_resamples(RESAMPLES, length), seed=seed
        )
        intervals.update(zip(ks, cis, strict=True))
    return tuple(
        KFigure(i + 1, len(values), fmean(values), intervals[i]) for i, values in enumerate(values_by_k) if values
    )
