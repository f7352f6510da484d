"""The experiment statistics against scipy.stats, and the per-sample bookkeeping behind them."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from experiment_support import error, paired, record, synthetic, variant
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from omk.stats import (
    AnalysisSettings,
    Record,
    VariantRun,
    analyze,
    bootstrap_mean_ci,
    compare,
    fold,
    fold_variant,
    min_detectable_effect,
    samples_needed,
)
from omk.stats.bootstrap import bootstrap_mean_cis, expanded_alpha, quantile
from omk.stats.distributions import binomial_two_sided_p, t_cdf, t_ppf, t_two_sided_p
from omk.stats.paired import delta_stats, pass_rate_change

# ---------------------------------------------------------------- distributions vs scipy


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 9, 29, 100, 1000])
def test_t_distribution_matches_scipy(df):
    for t in [-12.0, -3.1, -1.0, -0.2, 0.0, 0.7, 2.045, 5.5, 40.0]:
        assert t_two_sided_p(t, df) == pytest.approx(2 * sps.t.sf(abs(t), df), rel=1e-9, abs=1e-15)
        assert t_cdf(t, df) == pytest.approx(sps.t.cdf(t, df), rel=1e-9, abs=1e-15)
    for p in [0.6, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995, 0.025]:
        assert t_ppf(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-8)


def test_binomial_test_matches_scipy_binomtest_exactly():
    for n in range(0, 41):
        for k in range(0, n + 1):
            expected = sps.binomtest(k, n, 0.5).pvalue if n else 1.0
            assert binomial_two_sided_p(k, n) == pytest.approx(expected, rel=1e-12, abs=0)
    for k, n in [(230, 500), (970, 2000), (0, 3000), (1500, 3000)]:
        assert binomial_two_sided_p(k, n) == pytest.approx(sps.binomtest(k, n, 0.5).pvalue, rel=1e-9)


def test_binomial_test_rejects_impossible_counts():
    with pytest.raises(ValueError):
        binomial_two_sided_p(5, 3)


# ---------------------------------------------------------------- McNemar


@pytest.mark.parametrize("lost,gained,same_pass,same_fail", [(0, 0, 5, 5), (1, 8, 10, 3), (7, 2, 0, 0), (12, 30, 40, 18), (3, 3, 1, 1)])
def test_mcnemar_is_the_exact_binomial_test_on_discordant_pairs(lost, gained, same_pass, same_fail):
    ok_pass, ok_fail = fold("x", [record(4.0)]), fold("x", [record(2.0)])
    pairs = (
        [(ok_pass, ok_fail)] * lost
        + [(ok_fail, ok_pass)] * gained
        + [(ok_pass, ok_pass)] * same_pass
        + [(ok_fail, ok_fail)] * same_fail
    )
    change = pass_rate_change(pairs)
    assert (change.lost, change.gained, change.n) == (lost, gained, len(pairs))
    expected = sps.binomtest(lost, lost + gained, 0.5).pvalue if lost + gained else 1.0
    assert change.p_value == pytest.approx(expected, rel=1e-12)
    assert change.change == pytest.approx((gained - lost) / len(pairs))


def test_an_errored_sample_counts_as_failed_in_pass_rates():
    control = VariantRun("c", {"a": [record(4.0)], "b": [record(4.0)]}, "control")
    treatment = VariantRun("t", {"a": [error()], "b": [record(4.0)]})
    comp = analyze([control, treatment]).comparisons[0]
    assert (comp.pass_rate.lost, comp.pass_rate.gained) == (1, 0)
    assert comp.composite.n == 1
    assert comp.composite.missing == 1
    assert (comp.errored_control, comp.errored_treatment, comp.errored_either) == (0, 1, 1)
    assert [r.reasons for r in comp.regressions] == [("pass_to_fail", "error")]


# ---------------------------------------------------------------- bootstrap vs scipy


def _scipy_paired_ci(control, treatment, level, resamples, seed):
    def diff(t, c, axis):
        return np.mean(t, axis=axis) - np.mean(c, axis=axis)

    res = sps.bootstrap(
        (np.array(treatment), np.array(control)),
        diff,
        paired=True,
        vectorized=True,
        method="percentile",
        confidence_level=level,
        n_resamples=resamples,
        rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high, res.standard_error


@pytest.mark.parametrize("n,seed", [(12, 1), (40, 2), (200, 3)])
def test_percentile_interval_matches_scipy_paired_bootstrap(n, seed):
    rng = random.Random(seed)
    control, treatment = synthetic(rng, n, 0.3)
    deltas = [t - c for c, t in zip(control, treatment, strict=True)]
    ours = bootstrap_mean_ci(deltas, resamples=10_000, seed=seed, method="percentile")
    low, high, se = _scipy_paired_ci(control, treatment, 0.95, 10_000, seed)
    # two independent Monte-Carlo estimates of the same quantiles: each is off by about
    # 0.03 standard errors at B = 10,000, so 0.15 is five times that
    assert ours.low == pytest.approx(low, abs=0.15 * se)
    assert ours.high == pytest.approx(high, abs=0.15 * se)
    # and not the unpaired interval, which is several times wider here
    assert ours.high - ours.low < 0.6 * 2 * 1.96 * math.sqrt(np.var(control) / n + np.var(treatment) / n)


def test_expanded_interval_is_the_percentile_interval_at_a_wider_level():
    rng = random.Random(7)
    control, treatment = synthetic(rng, 15, 0.2)
    deltas = [t - c for c, t in zip(control, treatment, strict=True)]
    ours = bootstrap_mean_ci(deltas, resamples=10_000, seed=7)
    assert ours.method == "expanded"
    alpha_prime = 2 * sps.norm.cdf(-math.sqrt(15 / 14) * sps.t.ppf(0.975, 14))
    assert expanded_alpha(0.05, 15) == pytest.approx(alpha_prime, rel=1e-9)
    assert ours.quantile_level == pytest.approx(1 - alpha_prime)
    low, high, se = _scipy_paired_ci(control, treatment, 1 - alpha_prime, 10_000, 7)
    assert ours.low == pytest.approx(low, abs=0.2 * se)
    assert ours.high == pytest.approx(high, abs=0.2 * se)
    plain = bootstrap_mean_ci(deltas, resamples=10_000, seed=7, method="percentile")
    assert ours.low < plain.low
    assert ours.high > plain.high


def test_quantile_is_numpys_linear_interpolation():
    values = sorted(random.Random(3).uniform(-1, 1) for _ in range(37))
    for q in [0.0, 0.025, 0.5, 0.9, 0.975, 1.0]:
        assert quantile(values, q) == pytest.approx(float(np.percentile(values, 100 * q)), rel=1e-12)


def test_bootstrap_is_reproducible_from_its_seed_and_moves_with_it():
    deltas = [0.1, -0.3, 0.5, 0.0, 0.2, 0.9, -0.1, 0.4]
    a = bootstrap_mean_ci(deltas, resamples=2000, seed=5)
    assert a == bootstrap_mean_ci(deltas, resamples=2000, seed=5)
    assert a != bootstrap_mean_ci(deltas, resamples=2000, seed=6)


def test_measures_bootstrapped_together_get_the_intervals_they_would_get_alone():
    rng = random.Random(12)
    columns = [[rng.gauss(0.1, 0.5) for _ in range(40)] for _ in range(3)]
    together = bootstrap_mean_cis(columns, resamples=1000, seed="s")
    assert together == [bootstrap_mean_ci(c, resamples=1000, seed="s") for c in columns]
    assert together[0] != together[1]
    with pytest.raises(ValueError, match="same length"):
        bootstrap_mean_cis([[0.1, 0.2], [0.3]])


def test_bootstrap_needs_two_values_and_sane_settings():
    assert bootstrap_mean_ci([0.4]) is None
    assert bootstrap_mean_ci([]) is None
    for bad in [{"method": "bca"}, {"level": 1.0}, {"resamples": 10}]:
        with pytest.raises(ValueError):
            bootstrap_mean_ci([0.1, 0.2], **bad)


# ---------------------------------------------------------------- coverage by simulation


def _independent_arms_ci(control, treatment, rng, resamples):
    """The original omk's method: each arm resampled on its own."""
    n = len(control)
    diffs = sorted(
        sum(rng.choices(treatment, k=n)) / n - sum(rng.choices(control, k=n)) / n for _ in range(resamples)
    )
    return quantile(diffs, 0.025), quantile(diffs, 0.975)


def test_paired_interval_covers_the_true_difference_95_percent_of_the_time():
    """1,000 simulated experiments of 30 samples with a known effect: the 95% interval must
    cover it in 93–97% of them. The same data analysed with independently resampled arms cover
    it nearly always (the interval is far too wide), which this band would reject."""
    rng = random.Random(20240611)
    true_delta, covered, runs = 0.3, 0, 1000
    for i in range(runs):
        control, treatment = synthetic(rng, 30, true_delta)
        deltas = [t - c for c, t in zip(control, treatment, strict=True)]
        ci = bootstrap_mean_ci(deltas, resamples=1000, seed=i)
        covered += ci.low <= true_delta <= ci.high
    assert 0.93 <= covered / runs <= 0.97, covered / runs

    rng = random.Random(99)
    wide = 0
    for _ in range(200):
        control, treatment = synthetic(rng, 30, true_delta)
        low, high = _independent_arms_ci(control, treatment, rng, 500)
        wide += low <= true_delta <= high
    assert wide / 200 > 0.99


def test_no_effect_gives_progress_or_regress_about_5_percent_of_the_time():
    """1,000 simulated experiments with no true difference (scores around 4, so the layer gate
    passes and does not mask a false PROGRESS). A two-sided 95% interval makes a false call
    5% of the time by construction (2.5% each way), so the rate is checked against 5% with
    the simulation's own error (2 standard errors, about 1.4 points), and each direction
    against 2.5% likewise."""
    rng = random.Random(31337)
    calls = {"PROGRESS": 0, "REGRESS": 0}
    runs = 1000
    for i in range(runs):
        control, treatment = synthetic(rng, 30, 0.0, center=4.0)
        variants = [variant("c", control, "control"), variant("t", treatment)]
        level = analyze(variants, AnalysisSettings(resamples=1000, seed=i)).verdict.level.value
        if level in calls:
            calls[level] += 1
    def bound(p):
        return p + 2 * math.sqrt(p * (1 - p) / runs)

    assert sum(calls.values()) / runs <= bound(0.05), calls
    assert calls["PROGRESS"] / runs <= bound(0.025), calls
    assert calls["REGRESS"] / runs <= bound(0.025), calls
    assert calls["PROGRESS"] > 0
    assert calls["REGRESS"] > 0  # both false calls are reachable


# ---------------------------------------------------------------- effect size, t-test, MDE


def _stats(deltas, cfg, seed):
    ci = bootstrap_mean_ci(deltas, resamples=cfg.resamples, seed=seed) if len(deltas) >= 2 else None
    return delta_stats(deltas, 0, cfg, ci)


def test_effect_size_t_test_and_mde_match_scipy():
    rng = random.Random(11)
    control, treatment = synthetic(rng, 25, 0.25)
    deltas = [t - c for c, t in zip(control, treatment, strict=True)]
    s = _stats(deltas, AnalysisSettings(resamples=200), 0)
    sd = float(np.std(deltas, ddof=1))
    assert s.sd == pytest.approx(sd, rel=1e-12)
    assert s.d_z == pytest.approx(np.mean(deltas) / sd, rel=1e-12)
    assert s.g_z == pytest.approx(s.d_z * (1 - 3 / (4 * 24 - 1)), rel=1e-12)
    assert s.t_p == pytest.approx(sps.ttest_rel(treatment, control).pvalue, rel=1e-8)
    expected_mde = (sps.t.ppf(0.975, 24) + sps.t.ppf(0.8, 24)) * sd / 5
    assert s.mde == pytest.approx(expected_mde, rel=1e-8)


@pytest.mark.parametrize("n", [10, 30, 200])
def test_mde_has_the_stated_power(n):
    """At the MDE, a two-sided paired t-test at 0.05 rejects with probability ~0.8 (exact power
    from the noncentral t)."""
    sd = 0.7
    mde = min_detectable_effect(sd, n)
    crit = sps.t.ppf(0.975, n - 1)
    nc = mde / (sd / math.sqrt(n))
    power = sps.nct.sf(crit, n - 1, nc) + sps.nct.cdf(-crit, n - 1, nc)
    assert power == pytest.approx(0.8, abs=0.01)
    z_mde = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sd / math.sqrt(n)
    assert mde > z_mde  # t-based, so larger than the normal formula at small n


def test_samples_needed_is_the_smallest_sufficient_count():
    for sd, effect in [(0.5, 0.1), (1.0, 0.3), (0.3, 0.5), (2.0, 0.05)]:
        n = samples_needed(sd, effect)
        assert min_detectable_effect(sd, n) <= effect
        assert n == 2 or min_detectable_effect(sd, n - 1) > effect
    assert samples_needed(0.5, 0.0) is None


def test_constant_deltas_have_no_effect_size_but_an_interval():
    s = _stats([0.2] * 10, AnalysisSettings(resamples=200), 0)
    assert (s.d_z, s.g_z, s.t_p) == (None, None, None)
    assert s.ci.low == pytest.approx(0.2)
    assert s.ci.high == pytest.approx(0.2)
    assert s.mde is None
    assert s.wins == 10  # nothing varies: no detectable size to give (NO_SPREAD says so)


# ---------------------------------------------------------------- wins, layers, errors, repeats


def test_wins_ties_losses_use_the_tie_tolerance():
    deltas = [0.5, 0.01, 0.005, 0.0, -0.004, -0.006, -1.0]
    s = _stats(deltas, AnalysisSettings(resamples=200, tie=0.005), 0)
    assert (s.wins, s.ties, s.losses) == (2, 3, 2)
    assert s.sign_p == pytest.approx(sps.binomtest(2, 4, 0.5).pvalue)
    wide = _stats(deltas, AnalysisSettings(resamples=200, tie=0.1), 0)
    assert (wide.wins, wide.ties, wide.losses) == (1, 5, 1)


def test_a_layer_missing_on_either_side_leaves_that_sample_out_of_that_layer_only():
    c = {"a": [record(4.0, layers={"fact": 4.0, "judge": 3.0})], "b": [record(3.0, layers={"fact": 3.0})]}
    t = {"a": [record(4.5, layers={"fact": 4.5, "judge": 4.0})], "b": [record(3.5, layers={"fact": 3.0, "judge": 4.0})]}
    comp = compare("c", fold_variant(VariantRun("c", c)), "t", fold_variant(VariantRun("t", t)), AnalysisSettings(resamples=200))
    assert comp.composite.n == 2
    assert (comp.layers["fact"].n, comp.layers["fact"].missing) == (2, 0)
    assert (comp.layers["judge"].n, comp.layers["judge"].missing) == (1, 1)
    assert comp.layers["judge"].mean == pytest.approx(1.0)
    assert "behavior" not in comp.layers


def test_repeats_fold_into_means_majority_pass_and_spread():
    records = [record(4.0), record(3.0, passed=False), error(), record(5.0)]
    o = fold("x", records)
    assert (o.repeats, o.errors, o.passes) == (4, 1, 2)
    assert o.composite == pytest.approx(4.0)
    assert not o.passed  # 2 of 4 is not more than half; the errored repeat counts as a failure
    assert not o.errored
    assert fold("y", [error(), error()]).errored


def test_repeats_give_run_to_run_spread_and_whether_the_difference_exceeds_it():
    rng = random.Random(4)
    c = {f"s{i}": [record(3.0 + rng.gauss(0, 0.2)) for _ in range(3)] for i in range(20)}
    t = {k: [record(3.8 + rng.gauss(0, 0.2)) for _ in range(3)] for k in c}
    exp = analyze([VariantRun("c", c, "control"), VariantRun("t", t)], AnalysisSettings(resamples=500))
    comp, control = exp.comparisons[0], exp.variants[0]
    pooled = math.sqrt(np.mean([np.var([r.composite for r in rs], ddof=1) for rs in c.values()]))
    assert control.spread == pytest.approx(pooled, rel=1e-9)
    assert comp.spread.control == pytest.approx(pooled, rel=1e-9)
    assert comp.spread.exceeded is True
    run_means = [np.mean([rs[i].composite for rs in c.values()]) for i in range(3)]
    assert control.run_means == pytest.approx(run_means)
    assert control.run_cv == pytest.approx(np.std(run_means, ddof=1) / np.mean(run_means))
    same = analyze([VariantRun("c", c, "control"), VariantRun("t", c)], AnalysisSettings(resamples=500))
    assert same.comparisons[0].spread.exceeded is False


def test_cost_and_latency_deltas_are_paired_and_relative():
    c = {"a": [record(4.0, cost_usd=0.01, latency_ms=100)], "b": [record(4.0, cost_usd=0.03, latency_ms=300)]}
    t = {"a": [record(4.0, cost_usd=0.02, latency_ms=150)], "b": [record(4.0, cost_usd=None, latency_ms=500)]}
    comp = analyze([VariantRun("c", c, "control"), VariantRun("t", t)], AnalysisSettings(resamples=200)).comparisons[0]
    assert comp.cost_usd.n == 1
    assert comp.cost_usd.delta == pytest.approx(0.01)
    assert comp.cost_usd.relative == pytest.approx(1.0)
    assert comp.latency_ms.n == 2
    assert comp.latency_ms.delta == pytest.approx(125.0)
    assert comp.latency_ms.relative == pytest.approx(125 / 200)


def test_samples_on_one_arm_only_are_listed_and_left_out():
    c = {"a": [record(4.0)], "b": [record(3.0)]}
    t = {"b": [record(3.5)], "z": [record(5.0)]}
    comp = analyze([VariantRun("c", c, "control"), VariantRun("t", t)], AnalysisSettings(resamples=200)).comparisons[0]
    assert (comp.samples, comp.only_control, comp.only_treatment) == (1, ("a",), ("z",))
    assert comp.composite.mean == pytest.approx(0.5)


def test_regressed_samples_are_score_drops_of_at_least_trivial_or_lost_passes():
    base, treated = paired([4.0, 4.0, 3.6, 4.0, 3.0], [-0.1, -0.09, -0.2, 0.5, -0.5])
    exp = analyze(
        [VariantRun("c", {f"s{i}": [record(v)] for i, v in enumerate(base)}, "control"),
         VariantRun("t", {f"s{i}": [record(v)] for i, v in enumerate(treated)})],
        AnalysisSettings(resamples=200),
    )
    regs = {r.sample_id: r.reasons for r in exp.comparisons[0].regressions}
    assert regs == {"s0": ("score",), "s2": ("score", "pass_to_fail"), "s4": ("score",)}
    assert [r.sample_id for r in exp.comparisons[0].regressions] == ["s4", "s2", "s0"]  # worst first


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="sample 'x': composite is not a finite number"):
        fold("x", [Record(composite=float("nan"))])
    with pytest.raises(ValueError, match="out of range"):
        AnalysisSettings(alpha=1.5)
    with pytest.raises(ValueError, match="one control"):
        analyze([VariantRun("a", {}, "control"), VariantRun("b", {}, "control")])
    with pytest.raises(ValueError, match="unique"):
        analyze([VariantRun("a", {}), VariantRun("a", {})])


# ---------------------------------------------------------------- properties

scores = st.floats(min_value=1.0, max_value=5.0, allow_nan=False).map(lambda x: round(x, 2))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(scores, scores), min_size=2, max_size=25))
def test_swapping_the_arms_negates_every_difference(pairs):
    c = VariantRun("c", {f"s{i}": [record(a)] for i, (a, _) in enumerate(pairs)}, "control")
    t = VariantRun("t", {f"s{i}": [record(b)] for i, (_, b) in enumerate(pairs)})
    cfg = AnalysisSettings(resamples=300)
    fc, ft = fold_variant(c), fold_variant(t)
    ab, ba = compare("c", fc, "t", ft, cfg), compare("t", ft, "c", fc, cfg)
    assert ab.composite.mean == pytest.approx(-ba.composite.mean, abs=1e-12)
    assert ab.composite.ci.low == pytest.approx(-ba.composite.ci.high, abs=1e-9)
    assert ab.composite.ci.high == pytest.approx(-ba.composite.ci.low, abs=1e-9)
    assert (ab.composite.wins, ab.composite.losses) == (ba.composite.losses, ba.composite.wins)
    assert (ab.pass_rate.lost, ab.pass_rate.gained) == (ba.pass_rate.gained, ba.pass_rate.lost)
    assert ab.pass_rate.p_value == ba.pass_rate.p_value


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=-4, max_value=4, allow_nan=False), min_size=2, max_size=40),
       st.floats(min_value=-2, max_value=2, allow_nan=False))
def test_interval_holds_the_mean_and_shifts_with_the_data(deltas, shift):
    ci = bootstrap_mean_ci(deltas, resamples=300, seed=1)
    mean = sum(deltas) / len(deltas)
    assert ci.low - 1e-9 <= mean <= ci.high + 1e-9
    moved = bootstrap_mean_ci([d + shift for d in deltas], resamples=300, seed=1)
    assert moved.low == pytest.approx(ci.low + shift, abs=1e-9)
    assert moved.high == pytest.approx(ci.high + shift, abs=1e-9)
    s = _stats(deltas, AnalysisSettings(resamples=300), 1)
    assert s.wins + s.ties + s.losses == len(deltas)


def test_a_bound_that_is_zero_up_to_float_error_does_not_exclude_zero():
    # a resample of eighteen -0.2 and twelve +0.3 sums to 0 on paper; with seed 1 the lower
    # bound is that resample's mean, +1.8e-17 in floats, which must not count as "above 0"
    deltas = [-0.2] * 12 + [0.3] * 18
    ci = bootstrap_mean_ci(deltas, resamples=2000, seed=1)
    assert 0 < ci.low < 1e-9
    assert not ci.excludes_zero


def test_large_sets_use_fewer_resamples_and_keep_the_same_interval():
    from omk.stats import AnalysisSettings, analyze
    from omk.stats.comparison import effective_resamples

    assert effective_resamples(10_000, 200) == 10_000
    assert effective_resamples(10_000, 1_000) == 2_000
    assert effective_resamples(10_000, 100_000) == 2_000  # never fewer than 2,000
    assert effective_resamples(500, 100_000) == 500  # never more than asked
    rng = random.Random(3)
    control, treatment = synthetic(rng, 1_000, 0.15)
    runs = [variant("c", control, "control"), variant("t", treatment)]
    fast = analyze(runs, AnalysisSettings(seed=1)).comparisons[0].composite.ci
    full = bootstrap_mean_ci([t - c for c, t in zip(control, treatment, strict=True)], resamples=10_000, seed=1, method="expanded")
    assert fast.resamples == 2_000
    assert full.resamples == 10_000
    width = full.high - full.low
    assert abs(fast.low - full.low) < 0.05 * width
    assert abs(fast.high - full.high) < 0.05 * width
