"""Per-variant summaries and paired comparisons of a treatment against the control.

Every comparison is paired: it looks only at samples both variants ran, and at the
per-sample difference treatment − control. A sample that is hard for one arm is usually hard
for the other, so differences vary much less than scores do, and a paired analysis sees an
effect with far fewer samples than comparing two means would.

Which samples enter what:

- score differences (composite, each layer): samples both arms scored. An errored sample (every
  repeat errored) has no score; a layer absent on either side leaves that sample out of that
  layer's pairs only. `missing` counts the samples both arms ran that a measure leaves out;
- pass rates and McNemar's test: every sample both arms ran, an errored one counting as failed;
- cost and latency: samples where both arms report them.

Effect size is Cohen's d_z (mean difference / sd of the differences, n − 1 denominator) with
Hedges' small-sample correction g_z = d_z · (1 − 3 / (4·(n − 1) − 1)). The minimum detectable
effect is the smallest true mean difference a two-sided paired t-test at level α would find
with the given power, from the observed sd of differences:
MDE = (t_{1−α/2, n−1} + t_{power, n−1}) · sd / √n (the usual approximation to the noncentral-t
power; within a fraction of a percent of the exact power from n = 10 on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean, stdev
from typing import Any

import msgspec

from omk.stats.bootstrap import Interval, bootstrap_paired_change, effective_resamples
from omk.stats.data import AnalysisSettings, SampleOutcome
from omk.stats.distributions import binomial_two_sided_p, normal_ppf, t_ppf, t_two_sided_p

EPS = 1e-9  # scores are rounded to 0.01; this only absorbs float error at thresholds


def _r(x: float | None, places: int = 4) -> float | None:
    return None if x is None else round(x, places)


NO_SPREAD = "every sample scored the same on both arms: no spread to measure; the interval is exact"


def no_spread(sd: float | None) -> bool:
    """Whether the differences do not vary at all: then a detectable size or a sample count
    means nothing (any difference is exact), and every report says `NO_SPREAD` instead."""
    return sd is not None and abs(sd) <= EPS


def min_detectable_effect(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The MDE of a paired comparison of n samples with this sd of differences (see the module);
    None when fewer than 2 samples or when nothing varies (`no_spread`)."""
    if n < 2 or no_spread(sd):
        return None
    df = n - 1
    return (t_ppf(1.0 - alpha / 2.0, df) + t_ppf(power, df)) * sd / math.sqrt(n)


def samples_needed(sd: float, effect: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """The smallest n whose MDE is at most `effect` for this sd; None when effect is 0 or
    nothing varies (`no_spread`).

    The normal-quantile formula gives a lower bound (t quantiles exceed normal ones); the
    t-based n is then found by doubling and bisection.
    """
    if effect <= 0.0 or no_spread(sd):
        return None

    def enough(n: int) -> bool:
        mde = min_detectable_effect(sd, n, alpha, power)
        return mde is not None and mde <= effect

    z = normal_ppf(1.0 - alpha / 2.0) + normal_ppf(power)
    lo = max(2, math.floor((z * sd / effect) ** 2))
    if enough(lo):
        return lo
    hi = lo * 2
    while not enough(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # not enough(lo), enough(hi)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


class DeltaStats(msgspec.Struct, frozen=True, gc=False):
    """Paired differences (treatment − control) of one measure over the samples both arms have."""

    n: int
    missing: int  # samples both arms ran that this measure leaves out
    mean: float | None
    sd: float | None
    ci: Interval | None
    wins: int
    ties: int
    losses: int
    sign_p: float  # exact two-sided sign test of wins against losses (ties dropped)
    t_p: float | None  # paired t-test, two-sided; None when undefined (n < 2 or sd 0)
    d_z: float | None
    g_z: float | None
    mde: float | None

    @property
    def significant(self) -> bool:
        return self.ci is not None and self.ci.excludes_zero

def delta_stats(deltas: Sequence[float], missing: int, settings: AnalysisSettings, ci: Interval | None) -> DeltaStats:
    """The statistics of one measure's differences; `ci` is their bootstrap interval, computed
    by the caller so that several measures can share their draws (see `compare`)."""
    n = len(deltas)
    mean = fmean(deltas) if deltas else None
    sd = stdev(deltas) if n >= 2 else None
    wins = sum(1 for d in deltas if d > settings.tie + EPS)
    losses = sum(1 for d in deltas if d < -settings.tie - EPS)
    d_z = g_z = t_p = None
    if mean is not None and sd:
        d_z = mean / sd
        g_z = d_z * (1.0 - 3.0 / (4.0 * (n - 1) - 1.0)) if n > 2 else None
        t_p = t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1)
    return DeltaStats(
        n=n,
        missing=missing,
        mean=mean,
        sd=sd,
        ci=ci,
        wins=wins,
        ties=n - wins - losses,
        losses=losses,
        sign_p=binomial_two_sided_p(wins, wins + losses),
        t_p=t_p,
        d_z=d_z,
        g_z=g_z,
        mde=min_detectable_effect(sd, n, settings.alpha, settings.power) if sd is not None else None,
    )


class PassRateChange(msgspec.Struct, frozen=True, gc=False):
    """Pass rates on the samples both arms ran, and McNemar's exact test on the discordant ones."""

    n: int
    control_passed: int
    treatment_passed: int
    lost: int  # passed on control, failed on treatment (McNemar's b)
    gained: int  # failed on control, passed on treatment (McNemar's c)
    p_value: float  # exact two-sided binomial test of b against b + c

    @property
    def control_rate(self) -> float | None:
        return self.control_passed / self.n if self.n else None

    @property
    def treatment_rate(self) -> float | None:
        return self.treatment_passed / self.n if self.n else None

    @property
    def change(self) -> float | None:
        return (self.treatment_passed - self.control_passed) / self.n if self.n else None

def pass_rate_change(pairs: Sequence[tuple[SampleOutcome, SampleOutcome]]) -> PassRateChange:
    lost = sum(1 for c, t in pairs if c.passed and not t.passed)
    gained = sum(1 for c, t in pairs if t.passed and not c.passed)
    return PassRateChange(
        n=len(pairs),
        control_passed=sum(1 for c, _ in pairs if c.passed),
        treatment_passed=sum(1 for _, t in pairs if t.passed),
        lost=lost,
        gained=gained,
        p_value=binomial_two_sided_p(lost, lost + gained),
    )


class MeasureDelta(msgspec.Struct, frozen=True, gc=False):
    """A resource (cost, latency, tokens) on both arms, over the samples where both report it: the
    means, their difference and relative change, each with its paired bootstrap interval."""

    n: int
    control_mean: float | None
    treatment_mean: float | None
    ci: Interval | None = None  # of the mean difference per sample
    relative_ci: Interval | None = None  # of treatment / control − 1

    @property
    def delta(self) -> float | None:
        if self.control_mean is None or self.treatment_mean is None:
            return None
        return self.treatment_mean - self.control_mean

    @property
    def relative(self) -> float | None:
        """treatment / control − 1; None when the control's mean is 0 or unknown."""
        if self.delta is None or not self.control_mean:
            return None
        return self.delta / self.control_mean

def measure_delta(pairs: Sequence[tuple[float | None, float | None]], settings: AnalysisSettings | None = None) -> MeasureDelta:
    """The resource's change over the pairs where both arms report it; with `settings`, its
    intervals (bootstrap.bootstrap_paired_change, the settings' seed and level)."""
    both = [(c, t) for c, t in pairs if c is not None and t is not None]
    if not both:
        return MeasureDelta(0, None, None)
    control, treatment = [c for c, _ in both], [t for _, t in both]
    ci = relative_ci = None
    if settings is not None:
        ci, relative_ci = bootstrap_paired_change(
            control, treatment, level=1.0 - settings.alpha, resamples=effective_resamples(settings.resamples, len(both)),
            seed=settings.seed, method=settings.method,
        )  # fmt: skip
    return MeasureDelta(len(both), fmean(control), fmean(treatment), ci, relative_ci)


class SampleDelta(msgspec.Struct, frozen=True, gc=False):
    """One sample on both arms: what the per-sample table and the delta chart show."""

    sample_id: str
    control: float | None  # composite; None when errored or not graded
    treatment: float | None
    control_passed: bool
    treatment_passed: bool
    control_errored: bool
    treatment_errored: bool

    @property
    def delta(self) -> float | None:
        if self.control is None or self.treatment is None:
            return None
        return self.treatment - self.control

    def regression_reasons(self, trivial: float) -> list[str]:
        """Why this sample counts as regressed: a score drop of at least `trivial`, a lost pass,
        or an error the control did not have."""
        reasons = []
        if self.delta is not None and self.delta <= -trivial + EPS:
            reasons.append("score")
        if self.control_passed and not self.treatment_passed:
            reasons.append("pass_to_fail")
        if self.treatment_errored and not self.control_errored:
            reasons.append("error")
        return reasons

class Regression(msgspec.Struct, frozen=True, gc=False):
    sample_id: str
    delta: float | None
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "delta": _r(self.delta), "reasons": list(self.reasons)}


class Spread(msgspec.Struct, frozen=True, gc=False):
    """Run-to-run spread with repeats: each arm's pooled within-sample sd of the composite."""

    control: float | None
    treatment: float | None
    exceeded: bool | None  # |mean difference| > the larger spread; None without repeats

