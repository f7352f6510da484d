"""omk evolve's pure parts: the seeded stratified split, the refusals of a candidate, the
acceptance rule with its whole-run correction (checked against scipy), and the leakage guard."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from scipy import stats as sp

import omk
from omk.core.errors import ConfigError, InputError
from omk.evolve.acceptance import compare_rates, compare_scores, corrected_level
from omk.evolve.candidates import refusal
from omk.evolve.leakage import LeakError, LeakGuard
from omk.evolve.report import (
    CandidateRow,
    DecisionRow,
    EvolveReport,
    EvolveSettings,
    Gap,
    SplitCounts,
    SplitIds,
    StandingRow,
    read_report,
)
from omk.evolve.splits import needed, parse_shares, sample_kind, split_ids, split_samples


def _samples(tmp_path: Path, fire: int, miss: int, task: int, categories: int = 1) -> list[omk.Sample]:
    items = []
    for i in range(fire):
        items.append({"sample_id": f"fire-{i}", "prompt": f"please do the thing {i}", "category": f"c{i % categories}",
                      "assertions": [{"type": "skill_used", "value": "demo"}]})  # fmt: skip
    for i in range(miss):
        items.append({"sample_id": f"miss-{i}", "prompt": f"something else {i}", "category": f"c{i % categories}",
                      "assertions": [{"type": "skill_used", "value": "demo", "not": True}]})  # fmt: skip
    for i in range(task):
        items.append({"sample_id": f"task-{i}", "prompt": f"task {i}", "category": f"c{i % categories}",
                      "assertions": [{"type": "contains", "value": "x"}]})  # fmt: skip
    path = tmp_path / "samples.yaml"
    path.write_text(yaml.safe_dump({"samples": items}), encoding="utf-8")
    return list(omk.load(path))


def test_kinds_are_read_from_skill_used(tmp_path: Path) -> None:
    kinds = Counter(sample_kind(s) for s in _samples(tmp_path, 3, 2, 4))
    assert kinds == {"should-fire": 3, "near-miss": 2, "task": 4}


def test_split_is_seeded_stratified_and_independent_of_order(tmp_path: Path) -> None:
    samples = _samples(tmp_path, 16, 8, 16, categories=2)
    one = split_samples(samples, (0.5, 0.25, 0.25), seed=7, alpha=0.05, tests=1)
    again = split_samples(list(reversed(samples)), (0.5, 0.25, 0.25), seed=7, alpha=0.05, tests=1)
    assert {n: set(one.of(n)) for n in ("train", "selection", "test")} == {n: set(again.of(n)) for n in ("train", "selection", "test")}
    assert one.counts() == {"train": 20, "selection": 10, "test": 10}
    assert sorted(one.train + one.selection + one.test) == sorted(s.sample_id for s in samples)
    by_id = {s.sample_id: s for s in samples}
    for name, share in (("train", 0.5), ("selection", 0.25), ("test", 0.25)):
        per = Counter(f"{sample_kind(by_id[i])}/{by_id[i].category}" for i in one.of(name))
        for stratum, size in Counter(f"{sample_kind(s)}/{s.category}" for s in samples).items():
            assert abs(per[stratum] - share * size) <= 1, (name, stratum)
    other = split_samples(samples, (0.5, 0.25, 0.25), seed=8, alpha=0.05, tests=1)
    assert set(other.train) != set(one.train)


def test_split_shares_hold_for_every_seed() -> None:
    strata = [(f"s{i}", f"k{i % 3}") for i in range(37)]
    for seed in range(50):
        counts = split_ids(strata, (0.5, 0.25, 0.25), seed).counts()
        assert abs(counts["train"] - 18.5) <= 1
        assert abs(counts["selection"] - 9.25) <= 1
        assert abs(counts["test"] - 9.25) <= 1


def test_too_few_samples_is_one_line_saying_what_each_split_needs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        split_samples(_samples(tmp_path, 6, 3, 3), (0.5, 0.25, 0.25), seed=1, alpha=0.05, tests=12)
    message = str(caught.value)
    assert "\n" not in message
    assert "selection 3 (needs 9)" in message
    assert "test 3 (needs 6)" in message
    assert "0.05/12" in message


def test_needed_is_the_smallest_n_a_perfect_sign_test_passes() -> None:
    for tests in (1, 4, 12, 40):
        n = needed(0.05, tests)
        assert sp.binomtest(n, n).pvalue < 0.05 / tests <= sp.binomtest(n - 1, n - 1).pvalue


@pytest.mark.parametrize("text", ["50/50", "a/b/c", "50/0/50", "-1/1/1", "nan/1/1"])
def test_bad_split_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--split"):
        parse_shares(text)


SKILL = "---\nname: demo\ndescription: Does the thing when asked.\n---\n" + "".join(f"Line {i} of the body.\n" for i in range(20))


def _with(description: str = "Does the thing when asked.", name: str = "demo", body_lines: int = 0) -> str:
    body = "".join(f"Line {i} of the body{' (changed)' if i < body_lines else ''}.\n" for i in range(20))
    return f"---\nname: {name}\ndescription: {description}\n---\n" + body


@pytest.mark.parametrize(
    ("candidate", "focus", "reason"),
    [
        ("no front matter\n", "both", "does not start with"),
        ("---\nname: [demo\n---\nbody\n", "both", "not valid YAML"),
        ("---\n- a\n---\nbody\n", "both", "not a mapping"),
        (_with(name="other"), "both", "name changed"),
        (_with(description="x" * 1025), "both", "1,025 characters"),
        (_with(description="Fires on: " + "y" * 60_000), "both", "over the limit of 49,152"),
        (_with(body_lines=6), "both", "over the edit budget"),
        (SKILL, "both", "duplicate of the current skill"),
        (_with(body_lines=1), "description", "body changed"),
        (_with(description="Also when told to."), "body", "front matter changed"),
    ],
)
def test_candidate_refusals(candidate: str, focus: str, reason: str) -> None:
    assert reason in (refusal(candidate, SKILL, focus=focus) or "")


def test_candidate_within_the_rules_passes_and_a_repeat_is_a_duplicate() -> None:
    from omk.evolve.candidates import digest

    good = _with(description="Does the thing when asked, or told to do it.")
    assert refusal(good, SKILL, focus="description") is None
    assert refusal(_with(body_lines=4), SKILL, focus="body") is None  # 4 of 24 lines: within 20%
    assert "already tried" in (refusal(good, SKILL, seen={digest(good)}) or "")


def test_score_comparison_matches_scipy_at_the_corrected_level() -> None:
    rng = random.Random(3)
    best = [rng.uniform(1, 5) for _ in range(15)]
    candidate = [b + rng.gauss(0.6, 0.4) for b in best]
    decision = compare_scores(best, candidate, alpha=0.05, tests=12, trivial=0.1)
    deltas = [c - b for b, c in zip(best, candidate, strict=True)]
    low, high = sp.t.interval(1 - 0.05 / 12, len(deltas) - 1, loc=sp.tmean(deltas), scale=sp.sem(deltas))
    assert decision.low == pytest.approx(low, abs=1e-6)
    assert decision.high == pytest.approx(high, abs=1e-6)
    assert decision.p_value == pytest.approx(sp.ttest_rel(candidate, best).pvalue, rel=1e-6)
    assert decision.accepted
    assert decision.level == pytest.approx(1 - 0.05 / 12)


def test_the_correction_counts_every_candidate_of_the_run() -> None:
    # significant at 5% on its own, not once twelve candidates are counted
    best = [3.0] * 10
    candidate = [3.0 + d for d in (0.9, 0.1, 0.8, 0.7, 0.2, 0.95, 0.6, 0.5, 0.3, 0.9)]
    alone = compare_scores(best, candidate, alpha=0.05, tests=1, trivial=0.0)
    assert alone.accepted
    corrected = compare_scores(best, candidate, alpha=0.05, tests=5000, trivial=0.0)
    assert not corrected.accepted
    assert "not significant" in corrected.reason


def test_lower_bound_must_clear_the_trivial_difference() -> None:
    best = [3.0] * 20
    candidate = [3.0 + 0.105 + (0.02 if i % 2 else -0.02) for i in range(20)]
    decision = compare_scores(best, candidate, alpha=0.05, tests=4, trivial=0.1)
    assert decision.p_value is not None
    assert decision.p_value < 0.05 / 4
    assert not decision.accepted
    assert "trivial" in decision.reason


def test_rate_comparison_is_mcnemar_exact_with_a_wilson_bound() -> None:
    pairs = [(False, True)] * 11 + [(True, False)] * 1 + [(True, True)] * 6 + [(False, False)] * 2
    decision = compare_rates(pairs, alpha=0.05, tests=4, trivial=0.05)
    test = sp.binomtest(11, 12)
    assert decision.p_value == pytest.approx(test.pvalue, rel=1e-9)
    ci = test.proportion_ci(confidence_level=1 - 0.05 / 4, method="wilson")
    assert decision.low == pytest.approx(12 / 20 * (2 * ci.low - 1), abs=1e-9)
    assert decision.change == pytest.approx(10 / 20)
    assert decision.accepted
    assert not compare_rates(pairs, alpha=0.05, tests=40, trivial=0.05).accepted


def test_corrected_level_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        corrected_level(0.05, 0)


def test_leak_guard_finds_held_out_text_whatever_the_spacing() -> None:
    guard = LeakGuard(["Please summarise the quarterly report", "ok"])
    guard.check("train prompt: refund my order please")
    guard.check("ok, the answer")  # too short to be held out
    with pytest.raises(LeakError):
        guard.check("failures:\n  Please   summarise the\nquarterly report -> missed")


def test_leak_guard_lets_through_what_train_shows_too() -> None:
    guard = LeakGuard(["Here is a general answer.", "Summarise the changelog for Ember 5.4."])
    guard.allow(["Here is a general answer."])
    guard.check("Output: Here is a general answer.")
    with pytest.raises(LeakError, match="Ember"):
        guard.check("Prompt: Summarise the changelog for Ember 5.4.")


def test_a_large_train_selection_test_gap_is_flagged() -> None:
    assert Gap(2.0, 1.5, 0.3, 0.1).large  # the test split keeps a fifth of the selection gain
    assert not Gap(2.0, 1.5, 1.2, 0.1).large
    assert not Gap(0.3, 0.25, 0.1, 0.1).large  # short by less than twice the trivial difference
    assert not Gap(1.0, 1.0, None, 0.1).large


def _report() -> EvolveReport:
    decision = DecisionRow("triggering", 22, 0.545, 0.119, 0.545, 0.994444, 0.000488, 9, 0.05, True, "better")
    return EvolveReport(
        "release-notes", "description", EvolveSettings(3, 3, (0.5, 0.25, 0.25), 0, 0.05, 9, 0.05, 0.2, "triggering"),
        SplitCounts(44, 22, 22), SplitIds(("a",), ("b",), ("c",)), (CandidateRow(1, 1, "accepted", "better", 1, 5.0, 4.5, 0.022, decision),),
        (1,), "every train sample passes", "PROGRESS", "PROGRESS · clean win", Gap(2.0, 1.5, 0.3, 0.1), "--- a\n+++ b\n", 0.25,
        {1: 0.022}, ("a note",), (StandingRow(0, 2.5, 2.0, 3.0), StandingRow(1, 4.5, None, None)),
    )  # fmt: skip


def test_the_evolve_report_is_written_and_read_back_through_its_record() -> None:
    report = _report()
    data = report.to_json()
    assert list(data)[:3] == ["format", "skill", "focus"]
    assert data["cost_per_round"] == {"1": 0.022}
    assert data["gap"]["large"] is True
    assert read_report(json.dumps(data).encode(), "out/report.json") == report


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["standings"][0].update(mean="<script>"), "out/report.json: standings[0].mean: expected a number or null, found '<script>'; not an evolve report omk wrote"),
        (lambda d: d["candidates"][0]["decision"].update(low=[]), "out/report.json: candidates[0].decision.low: expected a number or null, found a list; not an evolve report omk wrote"),
        (lambda d: d.pop("skill"), "out/report.json: skill: missing; not an evolve report omk wrote"),
        (lambda d: d.update(format="omk-run/1"), "out/report.json: format: expected 'omk-evolve/1'; not an evolve report omk wrote"),
        (lambda d: d["gap"].update(large="yes"), "out/report.json: gap.large: expected true or false, found 'yes'; not an evolve report omk wrote"),
    ],
)
def test_a_report_json_omk_did_not_write_is_one_line_naming_the_field(change: Callable[[dict[str, Any]], object], message: str) -> None:
    data = _report().to_json()
    change(data)
    with pytest.raises(InputError) as caught:
        read_report(json.dumps(data).encode(), "out/report.json")
    assert str(caught.value) == message


def test_a_large_gap_read_back_is_worked_out_again() -> None:
    data = _report().to_json()
    data["gap"]["large"] = False
    assert read_report(json.dumps(data).encode(), "out/report.json").gap.large


def test_the_request_names_missed_and_false_triggers_and_shows_train_only() -> None:
    from omk.evolve.evaluate import EvolveOutcome
    from omk.evolve.improver import Rejected, build_request, parse_answer

    missed = EvolveOutcome("t1", 1.0, False, (False,), 0.0, ("missed trigger: the skill was not used",), "A general answer.")
    passed = EvolveOutcome("t2", 5.0, True, (True,), 0.0, (), "Release notes.")
    request = build_request(
        round_no=2, rounds=3, k=2, focus="description", edit_budget=0.2, skill_text=SKILL,
        train=[("Summarise the changelog for Ember.", missed), ("Release notes for Fable.", passed)],
        rejected=[Rejected(_with(description="Nope."), "not significant")],
    )  # fmt: skip
    assert "Summarise the changelog for Ember." in request
    assert "missed trigger" in request
    assert "Release notes for Fable." not in request  # a passing train sample is not listed
    assert "(1 of 2; 1 shown)" in request
    assert 'reason="not significant"' in request
    assert "description: Nope." in request
    answer = "<candidate>\n" + SKILL + "</candidate>\nchatter\n<candidate>\nsecond\n</candidate>\n<candidate>\nthird\n</candidate>\n"
    assert parse_answer(answer, 2) == [SKILL, "second\n"]


def test_a_cached_answer_costs_nothing_now_in_the_ledger_as_in_the_engine_budget() -> None:
    """One rule for what a run spent: the evolve ledger (each sample's outcome) and the engine's
    budget count the same results the same way, a cached answer as nothing, the judge's calls made
    for it as what they cost."""

    from omk.engine.budget import Budget
    from omk.evolve.evaluate import fold
    from omk.records import SampleResult
    from omk.records.judging import JudgeBlock
    from omk.records.result import Trace

    fresh = SampleResult("s1", "ok", "p", trace=Trace(cost_usd=0.25), passed=True)
    cached = msgspec.structs.replace(fresh, repeat=1, cached=True)
    judged = msgspec.structs.replace(fresh, repeat=2, cached=True, judge=JudgeBlock(4.0, None, (), 0.125, None))
    budget = Budget(10.0)
    for result in (fresh, cached, judged):
        budget.add(result)
    outcome = fold("s1", [fresh, cached, judged])
    assert outcome.cost_usd == 0.375  # the fresh answer and the judge's call; the cached answers nothing
    assert budget.target_usd + 0.125 == outcome.cost_usd  # the budget counts the judge through its own tally
