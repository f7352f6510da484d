"""The verdict tiers, each triggered and not, at their boundaries; headlines; roll-up; require."""

from __future__ import annotations

import random
import re

import pytest
from experiment_support import FAST, error, experiment, record, variant

from omk.records.experiment_block import ExperimentBlock
from omk.stats import AnalysisSettings, Level, VariantRun, analyze, evaluate_policy


def noisy(rng: random.Random, n: int, center: float, sd: float) -> list[float]:
    return [round(center + rng.gauss(0, sd), 2) for _ in range(n)]


def shifted(base: list[float], delta: float, rng: random.Random | None = None, sd: float = 0.0) -> list[float]:
    return [round(b + delta + (rng.gauss(0, sd) if rng else 0.0), 2) for b in base]


@pytest.fixture
def base30() -> list[float]:
    return noisy(random.Random(1), 30, 4.0, 0.3)


# ---------------------------------------------------------------- PROGRESS


def test_progress_clean_win_with_the_originals_headline(base30):
    exp = experiment(base30, shifted(base30, 0.5, random.Random(2), 0.2))
    v = exp.verdict
    assert v.level is Level.PROGRESS
    assert v.pairs[0].reason == "clean-win"
    assert re.fullmatch(r"PROGRESS · skill vs base: Δ=\+0\.\d\d CI=\[0\.\d+, 0\.\d+\] · clean win", v.headline), v.headline
    assert v.recommendation.startswith("SHIP — skill beats base by +0.")
    assert v.action == "ship"
    assert v.lines[0] == "Verdict: PROGRESS"
    assert v.lines[1] == f"  {v.headline}"
    assert v.lines[-1] == f"  {v.recommendation}"


def test_progress_that_rescues_a_control_below_the_gate():
    base = noisy(random.Random(3), 30, 3.0, 0.2)
    v = experiment(base, shifted(base, 1.0)).verdict
    assert (v.level, v.pairs[0].reason) == (Level.PROGRESS, "recovers")
    assert v.headline.endswith("· recovers from broken control")


def test_the_trivial_threshold_itself_is_not_trivial(base30):
    at = experiment(base30, shifted(base30, 0.1)).verdict
    assert (at.level, at.pairs[0].reason) == (Level.PROGRESS, "clean-win")
    below = experiment(base30, shifted(base30, 0.09)).verdict
    assert (below.level, below.pairs[0].reason) == (Level.CAUTIOUS, "tiny-gain")
    assert below.headline.endswith("· practically tiny")
    assert below.recommendation.startswith("INVESTIGATE — ")
    wider = experiment(base30, shifted(base30, 0.09), AnalysisSettings(resamples=2000, trivial=0.05)).verdict
    assert wider.level is Level.PROGRESS


# ---------------------------------------------------------------- REGRESS and its neighbours


def test_regress_below_minus_trivial_and_cautious_above(base30):
    at = experiment(base30, shifted(base30, -0.1)).verdict
    assert (at.level, at.pairs[0].reason) == (Level.REGRESS, "regression")
    assert at.recommendation.startswith("DO NOT SHIP — skill scores 0.10 below base")
    assert at.action == "do-not-ship"
    tiny = experiment(base30, shifted(base30, -0.09)).verdict
    assert (tiny.level, tiny.pairs[0].reason) == (Level.CAUTIOUS, "tiny-loss")


def test_a_noisy_drop_whose_interval_spans_zero_is_not_a_regression(base30):
    rng = random.Random(5)
    treated = shifted(base30, -0.05, rng, 0.6)
    exp = experiment(base30, treated)
    ci = exp.comparisons[0].composite.ci
    assert ci.low < 0 < ci.high
    assert exp.verdict.level is Level.NOISE


def test_a_significant_pass_rate_drop_is_cautious_even_when_the_mean_rises():
    # 12 samples fall just below the 3.5 gate, 18 rise but stay below it: the mean improves,
    # passes fall
    control = [3.6] * 12 + [3.0] * 18
    treatment = [3.4] * 12 + [3.4] * 18
    exp = experiment(control, treatment)
    assert exp.comparisons[0].composite.ci.low > 0
    assert (exp.comparisons[0].pass_rate.lost, exp.comparisons[0].pass_rate.gained) == (12, 0)
    pair = exp.verdict.pairs[0]
    assert (pair.level, pair.reason) == (Level.CAUTIOUS, "pass-rate-drop")
    assert "pass rate 40% → 0%" in pair.headline
    assert "McNemar p=" in pair.headline


def test_a_pass_rate_drop_that_is_not_significant_is_not_cautious(base30):
    control = [3.6] * 2 + base30[2:]
    treatment = [3.4] * 2 + shifted(base30[2:], 0.5)
    pair = experiment(control, treatment).verdict.pairs[0]
    assert pair.level is Level.PROGRESS


# ---------------------------------------------------------------- NOISE and UNDERPOWERED


def test_all_ties(base30):
    v = experiment(base30, list(base30)).verdict
    assert (v.level, v.pairs[0].reason) == (Level.NOISE, "no-difference")
    assert v.headline == "NOISE · skill vs base: Δ=+0.00 CI=[0, 0] · CI spans 0, within ±0.1"
    assert v.recommendation.startswith("NO CALL — no difference between skill and base")
    short = experiment(base30[:10], base30[:10]).verdict
    assert (short.level, short.pairs[0].reason) == (Level.UNDERPOWERED, "few-samples")
    assert "n=10 < 20" in short.headline


def test_underpowered_below_min_samples_noise_from_it():
    rng = random.Random(8)
    base = noisy(rng, 19, 4.0, 0.3)
    treated = shifted(base, 0.05, rng, 0.5)
    v19 = experiment(base, treated).verdict
    assert v19.level is Level.UNDERPOWERED
    assert re.search(r"INSUFFICIENT DATA — 19 samples scored on both arms; about \d+ would detect", v19.recommendation)
    v19_lower_min = experiment(base, treated, AnalysisSettings(resamples=2000, min_samples=19)).verdict
    assert v19_lower_min.level is Level.NOISE


def test_one_sample_has_no_interval():
    v = experiment([4.0], [4.5]).verdict
    assert (v.level, v.pairs[0].reason) == (Level.UNDERPOWERED, "no-ci")
    assert v.headline == "UNDERPOWERED · skill vs base: Δ=+0.50 · no CI, n=1"


def test_all_errors_is_no_call_for_lack_of_data():
    control = VariantRun("base", {f"s{i}": [error()] for i in range(25)}, "control")
    treatment = VariantRun("skill", {f"s{i}": [error()] for i in range(25)})
    v = analyze([control, treatment], FAST).verdict
    assert (v.level, v.pairs[0].reason) == (Level.UNDERPOWERED, "too-many-errors")
    assert "25 of 25 samples errored (base 25, skill 25); fix them and rerun" in v.recommendation


def test_errors_on_the_treatment_only_are_not_silently_dropped(base30):
    control = variant("base", base30, "control")
    treatment = VariantRun("skill", {sid: [error()] if i < 10 else rs for i, (sid, rs) in enumerate(control.samples.items())})
    v = analyze([control, treatment], FAST).verdict
    assert (v.level, v.pairs[0].reason) == (Level.CAUTIOUS, "pass-rate-drop")


def test_error_share_at_and_above_the_limit(base30):
    def run(errors: int):
        control = variant("base", base30, "control")
        samples = dict(control.samples)
        for sid in list(samples)[:errors]:
            samples[sid] = [error()]
        control = VariantRun("base", samples, "control")
        # the same samples error on the treatment, so pass rates do not move
        treated = {sid: rs if rs[0].status == "error" else [record(rs[0].composite + 0.5)] for sid, rs in samples.items()}
        return analyze([control, VariantRun("skill", treated)], FAST).verdict.pairs[0]

    assert run(6).level is Level.PROGRESS  # 6 of 30 = 0.2, the limit itself
    assert (run(7).level, run(7).reason) == (Level.UNDERPOWERED, "too-many-errors")


def test_no_sample_in_common():
    v = analyze([variant("base", [4.0, 4.0], "control"), VariantRun("skill", {"other": [record(4.0)]})], FAST).verdict
    assert (v.level, v.pairs[0].reason) == (Level.UNDERPOWERED, "no-overlap")


# ---------------------------------------------------------------- CAUTIOUS: the layer gate


def test_a_gain_that_breaks_a_layer_gate_is_cautious():
    def two_layers(fact: float, behavior: float):
        return record((fact + behavior) / 2, layers={"fact": fact, "behavior": behavior}, passed=True)

    control = VariantRun("base", {f"s{i}": [two_layers(4.0, 4.0)] for i in range(30)}, "control")
    treatment = VariantRun("skill", {f"s{i}": [two_layers(5.0, 3.4)] for i in range(30)})
    v = analyze([control, treatment], FAST).verdict
    assert (v.level, v.pairs[0].reason) == (Level.CAUTIOUS, "broke-gate")
    assert v.headline.endswith("· broke layer gate")
    assert "Layer winners: fact skill (5) · behavior base (4)" in v.lines[2]
    fine = VariantRun("skill", {f"s{i}": [two_layers(5.0, 3.6)] for i in range(30)})
    assert analyze([control, fine], FAST).verdict.level is Level.PROGRESS


# ---------------------------------------------------------------- SOLO and roll-up


def test_solo_reports_the_layer_gate():
    passing = analyze([variant("only", [4.0, 4.5, 3.9])], FAST).verdict
    assert passing.level is Level.SOLO
    assert passing.headline == "SOLO · single variant, three-layer gate PASS @ threshold 3.5"
    assert passing.recommendation.startswith("ADD A CONTROL — ")
    failing = analyze([variant("only", [3.0, 4.5, 2.9])], FAST).verdict
    assert failing.headline == "SOLO · single variant, three-layer gate FAIL — see ci output"
    ungraded = analyze([VariantRun("only", {"a": [record(None)]})], FAST).verdict
    assert "FAIL" in ungraded.headline  # no layer at all fails the gate


def test_roll_up_takes_the_worst_pair_and_names_it(base30):
    variants = [
        variant("base", base30, "control"),
        variant("good", shifted(base30, 0.5)),
        variant("bad", shifted(base30, -0.4)),
        variant("same", list(base30)),
    ]
    v = analyze(variants, FAST).verdict
    assert [p.level for p in v.pairs] == [Level.PROGRESS, Level.REGRESS, Level.NOISE]
    assert v.level is Level.REGRESS
    assert v.headline.startswith("REGRESS · bad vs base: Δ=-0.40")
    assert "good: n=30 paired" in v.lines[3]
    assert "bad: n=30 paired" in v.lines[3]


def test_roll_up_of_all_progress_names_the_largest_gain(base30):
    variants = [variant("base", base30, "control"), variant("a", shifted(base30, 0.3)), variant("b", shifted(base30, 0.6))]
    v = analyze(variants, FAST).verdict
    assert v.level is Level.PROGRESS
    assert v.headline.startswith("PROGRESS · b vs base: Δ=+0.60")


def test_without_a_control_role_the_first_variant_is_the_control(base30):
    exp = analyze([variant("x", base30), variant("y", shifted(base30, 0.5))], FAST)
    assert exp.control == "x"
    assert exp.comparisons[0].treatment == "y"


def test_stability_line_with_and_without_repeats(base30):
    single = experiment(base30, shifted(base30, 0.5)).verdict
    assert "  Stability: not measured (rerun with --repeat 2 or more)" in single.lines
    rng = random.Random(9)
    c = VariantRun("base", {f"s{i}": [record(b + rng.gauss(0, 0.1)) for _ in range(3)] for i, b in enumerate(base30)}, "control")
    t = VariantRun("skill", {k: [record(r.composite + 0.5) for r in rs] for k, rs in c.samples.items()})
    v = analyze([c, t], FAST).verdict
    line = next(x for x in v.lines if "Stability" in x)
    assert re.search(r"CV=\d+\.\d% \(stable, runs=3; run-to-run spread base ±0\.\d\d, skill ±0\.\d\d\)", line), line


# ---------------------------------------------------------------- require


def _verdict(base, delta):
    return experiment(base, shifted(base, delta)).verdict


def test_require_progress(base30):
    assert evaluate_policy(_verdict(base30, 0.5), "progress").passed
    for delta in (0.05, 0.0, -0.5):
        result = evaluate_policy(_verdict(base30, delta), "progress")
        assert not result.passed
        assert result.reason.startswith("progress not met: skill ")


def test_require_no_regress(base30):
    assert evaluate_policy(_verdict(base30, 0.5), "no-regress").passed
    assert evaluate_policy(_verdict(base30, 0.0), "no-regress").passed  # NOISE
    assert evaluate_policy(_verdict(base30, -0.05), "no-regress").passed  # tiny loss: CAUTIOUS
    assert evaluate_policy(experiment(base30[:10], base30[:10]).verdict, "no-regress").passed  # few samples
    failed = evaluate_policy(_verdict(base30, -0.5), "no-regress")
    assert not failed.passed
    assert "skill REGRESS (regression)" in failed.reason
    drop = experiment([3.6] * 12 + [3.0] * 18, [3.4] * 30).verdict
    assert not evaluate_policy(drop, "no-regress").passed
    assert not evaluate_policy(experiment([4.0], [4.5]).verdict, "no-regress").passed  # no interval


def test_require_with_one_variant_follows_the_gate_and_unknown_policies_are_refused():
    passing = analyze([variant("only", [4.0, 4.5])], FAST).verdict
    failing = analyze([variant("only", [2.0, 4.5])], FAST).verdict
    for policy in ("progress", "no-regress"):
        assert evaluate_policy(passing, policy).passed
        assert not evaluate_policy(failing, policy).passed
    with pytest.raises(ValueError, match="unknown require policy 'ship'"):
        evaluate_policy(passing, "ship")


# ---------------------------------------------------------------- the report block


def test_experiment_block_is_json_and_carries_every_part(base30):
    import json

    block = ExperimentBlock.of(experiment(base30, shifted(base30, 0.5))).to_json()
    assert json.loads(json.dumps(block)) == block
    assert block["format"] == "omk-experiment/1"
    assert block["control"] == "base"
    assert [v["name"] for v in block["variants"]] == ["base", "skill"]
    comp = block["comparisons"][0]
    assert set(comp) >= {"composite", "layers", "pass_rate", "cost_usd", "latency_ms", "spread", "regressions", "per_sample"}
    assert comp["composite"]["ci"]["method"] == "expanded"
    assert comp["composite"]["ci"]["resamples"] == 2000
    assert len(comp["per_sample"]) == 30
    assert comp["per_sample"][0]["delta"] == 0.5
    assert block["verdict"]["level"] == "PROGRESS"
    assert block["verdict"]["pairs"][0]["action"] == "ship"
    assert block["settings"]["trivial"] == 0.1
