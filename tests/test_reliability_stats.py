"""pass@k and pass^k under `--repeat N`: the estimators against hand-computed values and a
brute-force enumeration of k-run subsets, the run's interval by seeded simulation, and the
`repeats` record the run writes and every reader reads back."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest
from scipy import special

from omk.records.document import ReportDocument
from omk.records.repeats import Repeats
from omk.runner.repeats import repeat_stats, repeats_of
from omk.stats.reliability import pass_at_k, pass_hat_k, run_figures

# ---------------------------------------------------------------- the estimators


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        (1, 1, 1, 1, 1),
        (1, 0, 1, 0, 0),
        (3, 1, 1, Fraction(1, 3), Fraction(1, 3)),  # k = 1: both are the pass rate
        (3, 1, 2, Fraction(2, 3), 0),  # 2 of the 3 pairs hold the one pass; no pair passes twice
        (3, 2, 2, 1, Fraction(1, 3)),  # every pair holds a pass; 1 of 3 pairs is both passes
        (4, 2, 2, Fraction(5, 6), Fraction(1, 6)),  # 1 − C(2,2)/C(4,2) = 5/6; C(2,2)/C(4,2) = 1/6
        (5, 3, 3, 1, Fraction(1, 10)),  # C(2,3) = 0; C(3,3)/C(5,3) = 1/10
        (10, 3, 5, Fraction(11, 12), 0),  # 1 − C(7,5)/C(10,5) = 1 − 21/252
        (10, 7, 3, Fraction(119, 120), Fraction(7, 24)),  # 1 − 1/120; 35/120
    ],
)
def test_pass_at_k_and_pass_hat_k_match_the_closed_form_by_hand(n, c, k, at, hat):
    assert pass_at_k(n, c, k) == pytest.approx(float(at), abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(float(hat), abs=1e-12)


def test_the_estimators_are_the_share_of_k_run_subsets_by_brute_force():
    """Every subset of k of the n runs, counted: with at least one pass (pass@k), all passes (pass^k)."""
    for n in range(1, 8):
        for c in range(n + 1):
            runs = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(runs, k))
                assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets), abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets), abs=1e-12)
                assert pass_at_k(n, c, k) == pytest.approx(1 - special.comb(n - c, k) / special.comb(n, k), abs=1e-12)


def test_the_estimators_are_unbiased_for_the_k_run_chances():
    """Averaged over every outcome of n runs (binomial weights), the estimates equal 1 − (1 − p)^k and p^k."""
    p, n = 0.37, 6
    for k in range(1, n + 1):
        weights = [special.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
        assert sum(w * pass_at_k(n, c, k) for c, w in enumerate(weights)) == pytest.approx(1 - (1 - p) ** k, abs=1e-12)
        assert sum(w * pass_hat_k(n, c, k) for c, w in enumerate(weights)) == pytest.approx(p**k, abs=1e-12)


def test_impossible_counts_are_refused():
    for n, c, k in [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)]:
        with pytest.raises(ValueError, match="pass@k needs"):
            pass_at_k(n, c, k)


# ---------------------------------------------------------------- the run's interval


def test_the_run_interval_covers_the_mean_pass_at_k_about_95_percent_of_the_time():
    """300 simulated runs of 30 samples × 5 repeats, each sample's pass chance drawn from
    Beta(2, 2): the expected pass@k and pass^k over such samples are known in closed form
    (E[1 − (1 − p)^k] and E[p^k] under the Beta). The 95% intervals must cover them in 91–98%
    (the simulation's own error is about 1.3 points). Near the bound (most samples always
    passing) a bootstrap of 30 samples covers less, about 89%: docs/run.md says so."""
    rng = random.Random(2025)
    a, b, n, samples, runs = 2.0, 2.0, 5, 30, 300
    k = 3
    true_at = 1 - special.beta(a, b + k) / special.beta(a, b)
    true_hat = special.beta(a + k, b) / special.beta(a, b)
    covered_at = covered_hat = 0
    for i in range(runs):
        passes = [sum(rng.random() < p for _ in range(n)) for p in (rng.betavariate(a, b) for _ in range(samples))]
        at, hat = run_figures(
            [[pass_at_k(n, c, k) for c in passes], [pass_hat_k(n, c, k) for c in passes]], seed=i
        )
        assert at.ci is not None
        assert hat.ci is not None
        covered_at += at.ci.low <= true_at <= at.ci.high
        covered_hat += hat.ci.low <= true_hat <= hat.ci.high
    assert 0.91 <= covered_at / runs <= 0.98, covered_at / runs
    assert 0.91 <= covered_hat / runs <= 0.98, covered_hat / runs


def test_run_figures_skip_ks_no_sample_reached_and_need_two_samples_for_an_interval():
    figures = run_figures([[1.0, 0.5, 0.0], [1.0], []])
    assert [(f.k, f.samples) for f in figures] == [(1, 3), (2, 1)]
    assert figures[0].mean == pytest.approx(0.5)
    assert figures[0].ci is not None
    assert figures[0].ci.low < 0.5 < figures[0].ci.high
    assert figures[1].ci is None  # one sample: no interval


# ---------------------------------------------------------------- the record


def test_the_repeats_section_lists_flaky_samples_first_with_pass_at_k():
    import msgspec
    from report_factory import sample_results

    ids = [r.sample_id for r in sample_results()[:3]]
    results = []
    for sid, outcomes in zip(ids, ([True] * 3, [True, True, True], [False, True, False]), strict=True):
        for k, ok in enumerate(outcomes):
            base = next(r for r in sample_results() if r.sample_id == sid)
            results.append(msgspec.structs.replace(base, repeat=k, passed=ok, status="ok"))
    rep = repeats_of(repeat_stats(results), 3)
    assert [s.sample_id for s in rep.per_sample] == [ids[2], ids[0], ids[1]]  # flaky first, then first-seen
    flaky = rep.per_sample[0]
    assert flaky.flaky
    assert flaky.pass_at_k == (0.3333, 0.6667, 1.0)
    assert flaky.pass_hat_k == (0.3333, 0.0, 0.0)
    assert (rep.samples, rep.always_passed, rep.flaky, rep.never_passed) == (3, 2, 1, 0)
    assert [m.k for m in rep.pass_at_k] == [1, 2, 3]
    assert rep.pass_at_k[1].mean == pytest.approx(round((1 + 1 + 2 / 3) / 3, 4))
    assert rep.pass_hat_k[2].mean == pytest.approx(round(2 / 3, 4))
    assert rep.pass_at_k[0].ci is not None
    assert rep.pass_at_k[0].ci.level == 0.95
    back = Repeats.read(json.loads(json.dumps(rep.to_json())), "report.json", "repeats")
    assert back == rep


def test_a_repeats_block_from_before_pass_at_k_still_reads():
    old = {"n": 2, "samples": 1, "always_passed": 1, "flaky": 0, "never_passed": 0, "per_sample": [
        {"sample_id": "a", "runs": 2, "errored": 0, "passed": 2, "pass_rate": 1.0,
         "composite": {"mean": 5.0, "stddev": 0.0, "min": 5.0, "max": 5.0}}]}  # fmt: skip
    rep = Repeats.read(old, "r.json", "repeats")
    assert rep is not None
    assert rep.per_sample[0].pass_at_k == ()
    assert rep.pass_at_k == ()


def test_a_repeats_block_edited_into_a_bad_shape_names_the_field():
    from omk.core.errors import InputError

    bad = {"n": 2, "per_sample": [{"sample_id": "a", "pass_at_k": [1.0, "x"]}]}
    with pytest.raises(InputError, match=r"repeats\.per_sample\[0\]\.pass_at_k\[1\]: expected a number"):
        Repeats.read(bad, "r.json", "repeats")


def test_a_repeated_run_writes_pass_at_k_into_report_json(tmp_path):
    """A real `--repeat 3` run through the engine: report.json's `repeats` has pass@k for each k."""
    from omk.api import evaluate

    samples = tmp_path / "eval-samples.yaml"
    samples.write_text("- sample_id: a\n  prompt: hi\n  assertions: [{type: contains, value: hi}]\n", encoding="utf-8")
    outputs = tmp_path / "out.jsonl"
    outputs.write_text('{"sample_id": "a", "output": "hi"}\n', encoding="utf-8")
    report = evaluate(str(samples), target=f"replay:{outputs}", repeat=3, out=str(tmp_path / "run"), judge=False, cache=False)
    data = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    assert data["repeats"]["per_sample"][0]["pass_at_k"] == [1.0, 1.0, 1.0]
    assert [m["k"] for m in data["repeats"]["pass_hat_k"]] == [1, 2, 3]
    assert ReportDocument.from_dict(data).repeats == report.repeats
