"""Student's t quantile (omk/stats/distributions.py): the bisection skips the steps whose answer
its certified bracket already knows, and returns exactly what the plain bisection returns."""

from __future__ import annotations

import random

import pytest

from omk.stats import distributions
from omk.stats.distributions import normal_ppf, t_cdf, t_ppf


def plain_bisection(p: float, df: float) -> float:
    """The quantile as computed before the bracket: t_cdf at every step."""
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -plain_bisection(1.0 - p, df)
    lo, hi = 0.0, max(1.0, normal_ppf(p))
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def cases() -> list[tuple[float, float]]:
    rng = random.Random(11)
    fixed = [(p, df) for p in (0.975, 0.95, 0.995, 0.6, 0.025, 0.999999) for df in (1, 2, 3, 9, 29, 199, 1999, 2.5, 1e6)]
    return fixed + [(rng.uniform(0.01, 0.999), rng.choice([rng.uniform(1.0, 50.0), rng.randrange(1, 3000)])) for _ in range(600)]


def test_the_quantile_is_the_plain_bisections_to_the_last_bit():
    t_ppf.cache_clear()
    different = [(p, df) for p, df in cases() if t_ppf(p, df) != plain_bisection(p, df)]
    assert different == []


@pytest.mark.parametrize("df", [9, 199, 1999])
def test_a_quantile_costs_a_few_distribution_values_not_forty(df, monkeypatch):
    calls = []

    def counted(t: float, d: float) -> float:
        calls.append(t)
        return t_cdf(t, d)

    monkeypatch.setattr(distributions, "t_cdf", counted)
    t_ppf.cache_clear()
    distributions.t_ppf(0.975, df)
    t_ppf.cache_clear()
    assert len(calls) <= 15
