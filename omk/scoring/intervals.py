"""The 95% interval of every figure in the run summary (docs/scoring.md, "Intervals").

- A mean score (the composite and each layer, over the run and per category): the seeded
  bootstrap of the mean (omk/stats/bootstrap.py, the expanded percentile interval) over the
  *samples*: under `--repeat N` a sample's runs are averaged first, so the resampling unit is the
  sample and runs of one sample never pose as independent evidence. Past 200 samples the t
  interval is used instead (omk.stats.bootstrap.score_interval).
- The pass rate: the Wilson score interval (omk/stats/winrate.py). Under `--repeat N` the runs of
  a sample are not independent, so the interval takes the observed rate over as many trials as
  there are samples, which is the cautious choice.

A figure over fewer than 2 samples has no interval (None); the formats say so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import TYPE_CHECKING

from omk.records.document import Bounds, LayerBounds
from omk.stats.bootstrap import SCORE_RESAMPLES, Draws, score_interval
from omk.stats.winrate import wilson_interval

if TYPE_CHECKING:
    from omk.scoring.digest import Digest

LEVEL = 0.95
RESAMPLES = SCORE_RESAMPLES
LAYERS = ("fact", "behavior", "judge")


def mean_interval(
    values: Sequence[float], resamples: int = RESAMPLES, level: float = LEVEL, draws: Draws | None = None
) -> Bounds | None:
    """The interval of the mean of per-sample values; None below 2 values. `draws` shares the
    bootstrap's draws between the figures of one summary (omk.stats.bootstrap.Draws)."""
    ci = score_interval(values, level=level, resamples=resamples, draws=draws)
    if ci is None:
        return None
    bootstrapped = ci.method != "t"
    return Bounds(round(ci.low, 4), round(ci.high, 4), level, ci.method, ci.resamples if bootstrapped else None, ci.seed if bootstrapped else None)


def pass_rate_interval(passed: int, total: int, samples: int, level: float = LEVEL) -> Bounds | None:
    """Wilson's interval of `passed` out of `total` runs of `samples` samples; None below 2 samples."""
    if samples < 2 or total < 1:
        return None
    n = min(samples, total)
    p = wilson_interval(passed, total, level) if n == total else _wilson_scaled(passed / total, n, level)
    return Bounds(round(p.low, 4), round(p.high, 4), level, "wilson")


def _wilson_scaled(rate: float, n: int, level: float) -> Bounds:
    """Wilson's interval of an observed rate taken over n trials (k need not be whole)."""
    k = rate * n
    ci = wilson_interval(0, n, level) if k == 0 else wilson_interval(n, n, level) if k == n else None
    if ci is not None:
        return Bounds(ci.low, ci.high, level, "wilson")
    from omk.stats.distributions import normal_ppf

    z = normal_ppf(0.5 + level / 2)
    denominator = 2 * (n + z * z)
    center = (2 * k + z * z) / denominator
    half = z * math.sqrt(z * z + 4 * k * (1 - rate)) / denominator
    return Bounds(center - half, center + half, level, "wilson")


def per_sample(results: Sequence[Digest], value: Callable[[Digest], float | None], once: bool = False) -> list[float]:
    """The mean of `value` over each sample's runs (those that have one), in first-seen order.
    `once`: each result is its sample's only run (no `--repeat`), so its value is its mean."""
    if once:
        return [v + 0.0 for r in results if (v := value(r)) is not None]  # as `_means` gives one run's
    groups: dict[str, list[float]] = {}
    for r in results:
        v = value(r)
        if v is not None:
            groups.setdefault(r.sample_id, []).append(v)
    return _means(groups)


def _means(groups: dict[str, list[float]]) -> list[float]:
    # one run (no --repeat): its value as fmean gives it (a float, -0.0 made 0.0), without the call
    return [vs[0] + 0.0 if len(vs) == 1 else fmean(vs) for vs in groups.values()]


def layer_intervals(results: Sequence[Digest], resamples: int = RESAMPLES, draws: Draws | None = None) -> LayerBounds:
    """The composite's and each layer's interval over the results that ran."""
    # the composite first, then the layers: the fact layer, scored on most samples, often has the
    # composite's sample count, so the two follow each other and share the kept draws
    ran = [r for r in results if r.status == "ok"]
    if len({r.sample_id for r in ran}) == len(ran):  # one run per sample: its values as they are
        columns = _single_runs(ran)
    else:
        columns = {name: _means(groups) for name, groups in _per_sample_runs(ran).items()}
    found = {name: mean_interval(values, resamples, draws=draws) for name, values in columns.items()}
    return LayerBounds(**found)


def _single_runs(ran: list[Digest]) -> dict[str, list[float]]:
    """Per column, the values of results that are each a sample's only run (as `_means` gives a
    single run's: `+ 0.0`), without a list per sample: a large run's summary holds no more."""
    scores = [r.scores for r in ran]
    return {
        "composite": [s.composite + 0.0 for s in scores if s.fact is not None or s.behavior is not None or s.judge is not None],
        "fact": [s.fact + 0.0 for s in scores if s.fact is not None],
        "behavior": [s.behavior + 0.0 for s in scores if s.behavior is not None],
        "judge": [s.judge + 0.0 for s in scores if s.judge is not None],
    }


def _per_sample_runs(ran: list[Digest]) -> dict[str, dict[str, list[float]]]:
    """Per column, each sample's values over its runs (under `--repeat`), in first-seen order."""
    columns: dict[str, dict[str, list[float]]] = {name: {} for name in ("composite", *LAYERS)}
    composite, fact, behavior, judge = columns.values()
    for r in ran:
        s = r.scores
        if s.fact is not None:
            fact.setdefault(r.sample_id, []).append(s.fact)
        if s.behavior is not None:
            behavior.setdefault(r.sample_id, []).append(s.behavior)
        if s.judge is not None:
            judge.setdefault(r.sample_id, []).append(s.judge)
        if s.fact is not None or s.behavior is not None or s.judge is not None:  # graded
            composite.setdefault(r.sample_id, []).append(s.composite)
    return columns


def run_pass_rate(results: Sequence[Digest]) -> Bounds | None:
    passed = sum(1 for r in results if r.passed)
    return pass_rate_interval(passed, len(results), len({r.sample_id for r in results}))
