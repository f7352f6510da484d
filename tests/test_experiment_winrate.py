"""The pairwise win rate: the Wilson interval and the sign test against scipy.stats, its coverage
(exact over a grid, and by seeded simulation of whole experiments' verdicts), and the rule that
combines the judge's two orders."""

from __future__ import annotations

import itertools
import random
import statistics

import pytest
from scipy.stats import binom, binomtest

from omk.judge.comparison import combine_orders
from omk.records.experiment_block import WinRateRow
from omk.stats.pairwise_rate import WinRate
from omk.stats.winrate import wilson_interval

CASES = [(0, 1), (1, 1), (0, 10), (10, 10), (3, 7), (17, 40), (1, 2), (50, 100), (2, 300), (299, 300), (13, 13)]


@pytest.mark.parametrize(("k", "n"), CASES)
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_matches_scipy(k, n, level):
    ref = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    mine = wilson_interval(k, n, level)
    assert mine.low == pytest.approx(ref.low, abs=1e-12)
    assert mine.high == pytest.approx(ref.high, abs=1e-12)
    assert 0.0 <= mine.low <= k / n <= mine.high <= 1.0


def test_the_ends_are_exact_and_bad_input_is_refused():
    assert wilson_interval(0, 7).low == 0.0
    assert wilson_interval(7, 7).high == 1.0
    for k, n in ((1, 0), (-1, 3), (4, 3)):
        with pytest.raises(ValueError):
            wilson_interval(k, n)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, level=1.0)


@pytest.mark.parametrize(("b", "a", "ties"), [(7, 2, 3), (0, 5, 0), (12, 12, 1), (1, 0, 9)])
def test_win_rate_counts_only_decisive_verdicts_and_tests_them_like_scipy(b, a, ties):
    rate = WinRateRow.of(WinRate("pairwise", b_better=b, a_better=a, ties=ties)).to_json()
    ref = binomtest(b, a + b, 0.5)
    ci = ref.proportion_ci(method="wilson")
    assert rate["decisive"] == a + b
    assert rate["rate"] == round(b / (a + b), 4)
    assert rate["ci"] == {"low": round(ci.low, 4), "high": round(ci.high, 4), "level": 0.95, "method": "wilson"}
    assert rate["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert rate["tie_rate"] == round(ties / (a + b + ties), 4)


def test_no_decisive_verdict_has_no_rate():
    rate = WinRateRow.of(WinRate("llm_comparison", 0, 0, 4)).to_json()
    assert (rate["rate"], rate["ci"], rate["p_value"], rate["tie_rate"]) == (None, None, None, 1.0)


@pytest.mark.parametrize("n", [10, 20, 30, 50, 100])
def test_exact_coverage_is_close_to_nominal(n):
    """Coverage computed exactly (binomial probabilities, no simulation) for p from 0.10 to 0.90."""
    coverage = []
    for i in range(10, 91):
        p = i / 100
        hits = [k for k in range(n + 1) if (ci := wilson_interval(k, n)).low <= p <= ci.high]
        coverage.append(float(binom.pmf(hits, n, p).sum()))
    assert 0.945 <= statistics.mean(coverage) <= 0.96
    assert min(coverage) >= 0.92  # Wilson's known dips stay shallow in this range


@pytest.mark.parametrize(("seed", "n", "p_b", "p_a"), [(1, 60, 0.45, 0.25), (2, 40, 0.3, 0.3), (3, 100, 0.6, 0.1)])
def test_simulated_experiments_cover_the_true_win_rate(seed, n, p_b, p_a):
    """1,000 experiments of n samples whose verdicts are B, A or a tie: the interval covers
    p_b / (p_b + p_a) 93–97% of the time, whatever share of ties."""
    rng = random.Random(seed)
    truth, covered, runs = p_b / (p_b + p_a), 0, 0
    for _ in range(1000):
        draws = [rng.random() for _ in range(n)]
        b, a = sum(1 for u in draws if u < p_b), sum(1 for u in draws if p_b <= u < p_b + p_a)
        if a + b == 0:
            continue
        runs += 1
        ci = WinRate("pairwise", b, a, n - a - b).ci
        assert ci is not None
        covered += ci.low <= truth <= ci.high
    assert runs >= 990
    assert 0.93 <= covered / runs <= 0.97


def test_combine_orders_keeps_a_winner_only_when_both_orders_agree():
    """a_first: 1 = A better; b_first is asked with B shown first: 1 = B better."""
    table = {
        (1, 2): (1, None),  # A both times
        (2, 1): (2, None),  # B both times
        (0, 0): (0, None),  # a tie both times
        (1, 1): (0, "first"),  # each time the answer shown first
        (2, 2): (0, "second"),  # each time the answer shown second
        (1, 0): (0, "partial"),
        (0, 2): (0, "partial"),
        (2, 0): (0, "partial"),
        (0, 1): (0, "partial"),
    }
    assert {pair: combine_orders(*pair) for pair in itertools.product((0, 1, 2), repeat=2)} == table
