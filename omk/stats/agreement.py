"""Agreement between raters, in pure Python: Krippendorff's α (interval or ordinal) with a
seeded bootstrap interval, Cohen's κ and the confusion table of two pass/fail series.

Krippendorff's α takes *units* (here: samples), each with the values its raters gave (any number,
missing ones simply absent). Only units with at least two values are pairable. With `n` the
pairable values, the observed disagreement is the mean squared difference δ² between values of
the same unit (each unit's pairs weighted by 1 / (its values − 1)), the expected disagreement
the same over every pair of pairable values; α = 1 − observed / expected. 1 is perfect
agreement, 0 agreement no better than chance, below 0 systematic disagreement. α is None when
the expected disagreement is 0 (every value equal: nothing to agree or disagree on).

- interval: δ²(c, k) = (c − k)²; computed from sums per unit, so a bootstrap costs little.
- ordinal: δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k) / 2)², n_g the count of value g among the
  pairable values (ranks, not distances, matter).

The interval resamples units with replacement (the seed fixes the draws) and takes the
percentile interval of the resampled α's, cut at the widened level the mean's expanded
percentile interval uses (omk/stats/bootstrap.py) so that a small set is not overconfident.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

import msgspec

from omk.stats.bootstrap import expanded_alpha, quantile

Level = Literal["interval", "ordinal"]
LEVELS: tuple[Level, ...] = ("interval", "ordinal")
Unit = Sequence[float]
_TINY = 1e-12


def _pairable(units: Sequence[Unit]) -> list[list[float]]:
    return [[float(v) for v in u] for u in units if len(u) >= 2]


def _interval_terms(unit: list[float]) -> tuple[float, float, float, int]:
    """(the unit's observed-disagreement term, Σv, Σv², m) for the interval metric."""
    m = len(unit)
    s = sum(unit)
    q = sum(v * v for v in unit)
    ss = q - s * s / m  # Σ (v − unit mean)²
    return 2.0 * m * ss / (m - 1), s, q, m


def _alpha_from_terms(d_sum: float, s: float, q: float, n: int) -> float | None:
    if n < 2:
        return None
    total_ss = q - s * s / n
    expected = 2.0 * total_ss / (n - 1)
    if expected <= _TINY:
        return None
    return 1.0 - (d_sum / n) / expected


def alpha(units: Sequence[Unit], level: Level = "interval") -> float | None:
    """Krippendorff's α of `units` (each the values its raters gave); see the module text."""
    if level not in LEVELS:
        raise ValueError(f"unknown measurement level {level!r}; expected one of {', '.join(LEVELS)}")
    pairable = _pairable(units)
    if level == "ordinal":
        return _ordinal_alpha(pairable)
    terms = [_interval_terms(u) for u in pairable]
    return _alpha_from_terms(sum(t[0] for t in terms), sum(t[1] for t in terms), sum(t[2] for t in terms), sum(t[3] for t in terms))


def _ordinal_alpha(pairable: list[list[float]]) -> float | None:
    values = sorted({v for u in pairable for v in u})
    if len(values) < 2:
        return None
    index = {v: i for i, v in enumerate(values)}
    size = len(values)
    coincidence = [[0.0] * size for _ in range(size)]
    for unit in pairable:
        weight = 1.0 / (len(unit) - 1)
        for i, a in enumerate(unit):
            for j, b in enumerate(unit):
                if i != j:
                    coincidence[index[a]][index[b]] += weight
    counts = [sum(row) for row in coincidence]
    n = sum(counts)
    cumulative = [0.0]
    for c in counts:
        cumulative.append(cumulative[-1] + c)

    def delta2(c: int, k: int) -> float:
        lo, hi = min(c, k), max(c, k)
        return (cumulative[hi + 1] - cumulative[lo] - (counts[c] + counts[k]) / 2.0) ** 2

    observed = sum(coincidence[c][k] * delta2(c, k) for c in range(size) for k in range(size) if c != k)
    expected = sum(counts[c] * counts[k] * delta2(c, k) for c in range(size) for k in range(size) if c != k)
    if expected <= _TINY:
        return None
    return 1.0 - (n - 1) * observed / expected


class AlphaInterval(msgspec.Struct, frozen=True, gc=False):
    """α's bootstrap interval and how it was made."""

    low: float
    high: float
    level: float
    resamples: int
    seed: int | str


def alpha_interval(
    units: Sequence[Unit],
    level: Level = "interval",
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int | str = 0,
) -> AlphaInterval | None:
    """The bootstrap interval of α over units resampled with replacement; None below 3 pairable
    units or when too few resamples give an α (every value equal in most of them)."""
    pairable = _pairable(units)
    n = len(pairable)
    if n < 3:
        return None
    choices, positions = random.Random(seed).choices, range(n)
    found: list[float] = []
    if level == "interval":
        terms = [_interval_terms(u) for u in pairable]
        for _ in range(resamples):
            picked = [terms[i] for i in choices(positions, k=n)]
            a = _alpha_from_terms(sum(t[0] for t in picked), sum(t[1] for t in picked), sum(t[2] for t in picked), sum(t[3] for t in picked))
            if a is not None:
                found.append(a)
    else:
        for _ in range(resamples):
            a = _ordinal_alpha([pairable[i] for i in choices(positions, k=n)])
            if a is not None:
                found.append(a)
    if len(found) < resamples // 2:
        return None
    found.sort()
    cut = expanded_alpha(1.0 - confidence, n)
    return AlphaInterval(quantile(found, cut / 2.0), quantile(found, 1.0 - cut / 2.0), confidence, resamples, seed)


class Confusion(msgspec.Struct, frozen=True, gc=False):
    """Two pass/fail series side by side: `a` the judge, `b` the people."""

    both_pass: int
    a_pass_b_fail: int
    a_fail_b_pass: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_pass + self.a_pass_b_fail + self.a_fail_b_pass + self.both_fail


def confusion(a: Sequence[bool], b: Sequence[bool]) -> Confusion:
    if len(a) != len(b):
        raise ValueError("the two series must have the same length")
    pairs = list(zip(a, b, strict=True))
    return Confusion(
        sum(1 for x, y in pairs if x and y),
        sum(1 for x, y in pairs if x and not y),
        sum(1 for x, y in pairs if not x and y),
        sum(1 for x, y in pairs if not x and not y),
    )


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's κ of two pass/fail series: (observed − chance agreement) / (1 − chance). None for
    no pair, or when chance agreement is 1 (both raters gave one and the same answer throughout)."""
    table = confusion(a, b)
    n = table.n
    if n == 0:
        return None
    observed = (table.both_pass + table.both_fail) / n
    a_pass = (table.both_pass + table.a_pass_b_fail) / n
    b_pass = (table.both_pass + table.a_fail_b_pass) / n
    chance = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    if chance >= 1.0 - _TINY:
        return None
    return (observed - chance) / (1.0 - chance)
