"""The win rate of pairwise judge verdicts and its confidence interval.

A pairwise judge compares a sample's control and treatment answers and says which is better, or
that they tie. The win rate is the treatment's share of the *decisive* verdicts:
wins / (wins + losses). Ties are counted and reported apart: they say the judge could not tell
the answers apart, not which direction a difference goes (the sign test drops them for the same
reason).

The interval is the Wilson score interval of that binomial proportion (no continuity
correction; `scipy.stats.binomtest(k, n).proportion_ci(method="wilson")` gives the same bounds).
It is closed-form and needs no seed, stays inside [0, 1], and keeps close to its nominal coverage
with a few verdicts and near 0 or 1: where a bootstrap of the per-sample +1/0/−1 scores collapses
to a zero-width interval (10 wins out of 10 resample to exactly 10 out of 10) and the Wald
interval covers far less than it claims. Reference: L. D. Brown, T. T. Cai, A. DasGupta,
"Interval estimation for a binomial proportion", Statistical Science 16(2), 2001.

The win rate itself (`WinRate`, omk/stats/pairwise_rate.py) loads only with pairwise verdicts;
every run's pass rate takes its interval from here. Its `p_value` is the exact two-sided binomial
(sign) test of wins against losses at 1/2. At the margin it can disagree with the interval (one
is a test, the other an inverted score test): neither feeds the experiment's verdict.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from omk.stats.distributions import normal_ppf


class Proportion(msgspec.Struct, frozen=True, gc=False):
    low: float
    high: float
    level: float
    method: str = "wilson"

    def to_dict(self) -> dict[str, Any]:
        return {"low": round(self.low, 4), "high": round(self.high, 4), "level": self.level, "method": self.method}


def wilson_interval(k: int, n: int, level: float = 0.95) -> Proportion:
    """The Wilson score interval of k successes in n trials (n ≥ 1)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"a proportion needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie between 0 and 1, got {level}")
    z = normal_ppf(0.5 + level / 2)
    p = k / n
    denominator = 2 * (n + z * z)
    center = (2 * n * p + z * z) / denominator
    half = z * math.sqrt(z * z + 4 * n * p * (1 - p)) / denominator
    low = 0.0 if k == 0 else center - half  # exactly 0 and 1 at the ends, whatever the rounding
    high = 1.0 if k == n else center + half
    return Proportion(low, high, level)
