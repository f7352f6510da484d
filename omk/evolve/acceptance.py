"""Whether a candidate beats the current best on the selection split.

Every candidate the run may try is one test, so the run tests up to R · K times (rounds times
candidates a round). Trying many candidates and keeping any that looks better accepts noise
unless each test is made stricter: each comparison is made at level α / (R · K) (Bonferroni over
the whole run, not per round). Holding every test to the planned maximum keeps the chance that
any null candidate is accepted at or below α however many are actually tried, and whatever the
loop learned from the earlier ones.

A candidate is accepted only when its paired interval, at confidence 1 − α / (R · K), lies wholly
above the trivial difference:

- scores (the composite, `--focus body` and `both`): the paired differences candidate − best
  over the selection samples both scored; the t interval of their mean (omk.stats.paired's
  statistics: mean, sd, the paired t-test). When every difference is the same the t interval is
  undefined; the exact sign test decides then and the interval is that one value.
- triggering (`--focus description`): each probe is right or wrong on each side (fired when it
  should, stayed quiet on a near-miss); McNemar's exact test on the probes that changed, and the
  interval of the change in the share right: (gained + lost) / n · (2θ − 1), θ the Wilson
  interval of gained / (gained + lost) at the same level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from omk.stats.data import AnalysisSettings
from omk.stats.distributions import binomial_two_sided_p, t_ppf
from omk.stats.paired import delta_stats
from omk.stats.winrate import wilson_interval

TRIVIAL_COMPOSITE = 0.1  # the default trivial difference of the mean composite
DEFAULT_TRIVIAL = {"composite": TRIVIAL_COMPOSITE, "triggering": 0.05}


class Decision(msgspec.Struct, frozen=True, gc=False):
    """One candidate against the current best on the selection split, with its figures."""

    measure: str  # "composite" or "triggering"
    n: int  # pairs compared
    change: float | None  # mean difference candidate − best (composite), or change in the share right
    low: float | None
    high: float | None
    level: float  # the corrected confidence level, 1 − α / tests
    p_value: float | None
    tests: int  # candidates the run may try: the correction's divisor
    trivial: float
    accepted: bool
    reason: str


def corrected_level(alpha: float, tests: int) -> float:
    if not 0.0 < alpha < 1.0 or tests < 1:
        raise ValueError(f"a corrected level needs 0 < alpha < 1 and at least one test, got {alpha}, {tests}")
    return 1.0 - alpha / tests


def compare_scores(best: Sequence[float | None], candidate: Sequence[float | None], *, alpha: float, tests: int, trivial: float) -> Decision:
    """The composite: candidate − best per selection sample (pairs with a missing side left out)."""
    level = corrected_level(alpha, tests)
    deltas = [c - b for b, c in zip(best, candidate, strict=True) if b is not None and c is not None]
    stats = delta_stats(deltas, len(best) - len(deltas), AnalysisSettings(alpha=alpha), None)
    low = high = p = None
    if stats.mean is not None and stats.sd:
        half = t_ppf(1.0 - (1.0 - level) / 2.0, stats.n - 1) * stats.sd / math.sqrt(stats.n)
        low, high, p = stats.mean - half, stats.mean + half, stats.t_p
    elif stats.mean is not None:  # every difference equal: the interval is that value, the sign test decides
        low = high = stats.mean
        p = stats.sign_p
    return _decide("composite", stats.n, stats.mean, low, high, level, p, tests, trivial)


def compare_rates(pairs: Sequence[tuple[bool, bool]], *, alpha: float, tests: int, trivial: float) -> Decision:
    """Triggering: (best right, candidate right) per selection probe."""
    level = corrected_level(alpha, tests)
    n = len(pairs)
    lost = sum(1 for b, c in pairs if b and not c)
    gained = sum(1 for b, c in pairs if c and not b)
    changed = lost + gained
    if not n:
        return _decide("triggering", 0, None, None, None, level, None, tests, trivial)
    p = binomial_two_sided_p(gained, changed)
    low = high = 0.0
    if changed:
        theta = wilson_interval(gained, changed, level)
        low, high = changed / n * (2.0 * theta.low - 1.0), changed / n * (2.0 * theta.high - 1.0)
    return _decide("triggering", n, (gained - lost) / n, low, high, level, p, tests, trivial)


def _decide(
    measure: str, n: int, change: float | None, low: float | None, high: float | None, level: float, p: float | None, tests: int, trivial: float
) -> Decision:
    alpha = 1.0 - level
    if change is None or low is None or p is None:
        accepted, reason = False, "no pairs to compare on the selection split"
    elif p >= alpha:
        accepted, reason = False, f"not significant: p = {p:.3g}, needs below {alpha:.3g} (α over {tests} candidates)"
    elif low <= trivial:
        accepted, reason = False, f"the interval's lower bound {low:+.3f} is not above the trivial difference {trivial:g}"
    else:
        accepted, reason = True, f"better: {change:+.3f} [{low:+.3f}, {high:+.3f}] at {level:.2%}, p = {p:.3g}"
    return Decision(measure, n, change, low, high, level, p, tests, trivial, accepted, reason)
