"""The summary's intervals (omk/scoring/intervals.py): the Wilson interval against scipy, and the
coverage of the composite's and the pass rate's intervals by seeded simulation."""

from __future__ import annotations

import random

import pytest
from scipy.stats import binomtest

from omk.records import Scores
from omk.scoring.digest import Digest
from omk.scoring.intervals import layer_intervals, mean_interval, pass_rate_interval, run_pass_rate

RUNS = 1_000


def digest(sample_id: str, composite: float, passed: bool, repeat: int = 0) -> Digest:
    scores = Scores(fact=composite, behavior=None, judge=None, composite=composite)
    return Digest(sample_id, None, repeat, "ok", passed, scores, None, False, 0)


@pytest.mark.parametrize(("k", "n"), [(0, 5), (1, 5), (3, 7), (17, 20), (20, 20), (42, 100), (1, 2)])
def test_the_pass_rate_interval_is_wilson_as_scipy_computes_it(k, n):
    ours = pass_rate_interval(k, n, n)
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours is not None
    assert ours.method == "wilson"
    assert ours.low == pytest.approx(ref.low, abs=6e-5)
    assert ours.high == pytest.approx(ref.high, abs=6e-5)


def test_under_repeats_the_pass_rate_interval_counts_samples_not_runs():
    runs = pass_rate_interval(30, 40, 40)
    repeated = pass_rate_interval(30, 40, 10)  # 10 samples × 4 runs: wider, as 10 trials would be
    assert runs is not None
    assert repeated is not None
    assert repeated.high - repeated.low > runs.high - runs.low
    ref = binomtest(7, 10).proportion_ci(method="wilson")  # a rate of 0.7 over 10 samples
    at_07 = pass_rate_interval(7, 10, 10)
    assert at_07 is not None
    assert at_07.low == pytest.approx(ref.low, abs=6e-5)


def test_fewer_than_two_samples_have_no_interval():
    assert mean_interval([4.2]) is None
    assert pass_rate_interval(1, 1, 1) is None
    assert pass_rate_interval(2, 3, 1) is None  # three runs of one sample
    one = [digest("a", 4.0, True, r) for r in range(3)]
    assert layer_intervals(one).composite is None
    assert run_pass_rate(one) is None


# A skewed 1–5 score as samples give it: most pass, a tail of failures.
SCORES, WEIGHTS = (1.0, 2.0, 3.0, 4.0, 5.0), (0.08, 0.07, 0.1, 0.25, 0.5)
TRUE_MEAN = sum(s * w for s, w in zip(SCORES, WEIGHTS, strict=True))


def test_the_composite_interval_covers_the_true_mean_95_percent_of_the_time():
    rng = random.Random(20261126)
    covered = 0
    for _ in range(RUNS):
        scores = rng.choices(SCORES, WEIGHTS, k=25)
        ci = layer_intervals([digest(f"s{i}", v, v >= 3.5) for i, v in enumerate(scores)], resamples=400).composite
        assert ci is not None
        covered += ci.low <= TRUE_MEAN <= ci.high
    assert 0.93 <= covered / RUNS <= 0.97, covered


def test_the_composite_interval_resamples_samples_not_runs():
    """Runs of one sample are alike: the interval is as wide as the samples allow, not narrower."""
    rng = random.Random(5)
    means = [rng.choice(SCORES) for _ in range(12)]
    once = layer_intervals([digest(f"s{i}", m, True) for i, m in enumerate(means)]).composite
    thrice = layer_intervals([digest(f"s{i}", m, True, r) for i, m in enumerate(means) for r in range(3)]).composite
    assert once is not None
    assert thrice is not None
    assert (once.low, once.high) == (thrice.low, thrice.high)


def test_the_pass_rate_interval_covers_the_true_rate_95_percent_of_the_time():
    rng = random.Random(11)
    covered = 0
    for _ in range(RUNS):
        passes = [rng.random() < 0.8 for _ in range(60)]
        ci = run_pass_rate([digest(f"s{i}", 5.0 if p else 1.0, p) for i, p in enumerate(passes)])
        assert ci is not None
        covered += ci.low <= 0.8 <= ci.high
    assert 0.93 <= covered / RUNS <= 0.97, covered
