"""The few distribution functions the experiment statistics need, in pure Python.

Normal quantiles come from the standard library (`statistics.NormalDist`). Student's t is
computed from the regularized incomplete beta function (Lentz's continued fraction, accurate to
about 1e-14), and its quantiles by bisection on that distribution function. The exact binomial
test uses integer arithmetic, so it is exact for any count. The test suite checks every function
here against `scipy.stats`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

_NORMAL = NormalDist()
_TINY = 1e-300


def normal_cdf(x: float) -> float:
    return _NORMAL.cdf(x)


def normal_ppf(p: float) -> float:
    return _NORMAL.inv_cdf(p)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t: float, df: float) -> float:
    tail = t_two_sided_p(t, df) / 2.0
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=256)
def t_ppf(p: float, df: float) -> float:
    """The p-quantile of Student's t, by bisection on `t_cdf` (to about 1e-12). Remembered for the
    last 256 arguments: a run summary asks for the same few quantiles figure after figure."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_ppf needs 0 < p < 1, got {p}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    below, above = _known_side(p, df)

    def under(t: float) -> bool:  # t_cdf(t, df) < p, computed only where it is not known already
        return t < below or (t <= above and t_cdf(t, df) < p)

    lo, hi = 0.0, max(1.0, normal_ppf(p))
    while under(hi):
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if under(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


_CDF_MARGIN = 1e-13  # a hundred times what `t_cdf` can be off by


def _known_side(p: float, df: float) -> tuple[float, float]:
    """Two points around the p-quantile, `below` with t_cdf < p and `above` with t_cdf >= p, each
    by more than `t_cdf` can be off, so the bisection knows its answer at every point outside
    them without computing it, and takes the same steps (the same quantile, to the last bit).
    From a few Newton steps; (-inf, inf) (nothing known) when they do not certify."""
    t = normal_ppf(p)
    t += (t**3 + t) / (4.0 * df)  # Cornish-Fisher's first term
    scale = math.exp(math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0)) / math.sqrt(df * math.pi)
    for _ in range(4):
        density = scale * (1.0 + t * t / df) ** (-(df + 1.0) / 2.0)
        if not density > 0.0 or not math.isfinite(t):
            return -math.inf, math.inf
        t -= (t_cdf(t, df) - p) / density
    below, above = t * (1.0 - 1e-11), t * (1.0 + 1e-11)
    if t > 0.0 and t_cdf(below, df) < p - _CDF_MARGIN and t_cdf(above, df) >= p + _CDF_MARGIN:
        return below, above
    return -math.inf, math.inf


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided binomial test of k successes in n trials against p = 1/2.

    With p = 1/2 the distribution is symmetric, so the p-value is twice the smaller tail, capped
    at 1: the same value as `scipy.stats.binomtest(k, n, 0.5).pvalue`. Computed with integers,
    so it is exact for any n (n = 0 gives 1: no evidence either way).
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"binomial test needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1))
    return min(1.0, (2 * tail) / (1 << n))
