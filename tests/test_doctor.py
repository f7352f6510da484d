"""Every doctor diagnostic: one case that triggers it and one that does not."""

from __future__ import annotations

import pytest

from omk.doctor import examine, verdict
from omk.doctor.coverage import coverage
from omk.doctor.diagnostics import (
    capability_thin,
    environment,
    health_score,
    mock_coverage,
    near_duplicates,
    rouge1_recall,
    rubric_clarity_low,
    run_diagnostics,
    ungraded,
    upper_median,
)
from omk.records.document import ReportDocument
from omk.samples.model import AssertionSpec, Sample


def spec(type_: str, **raw) -> AssertionSpec:
    children = raw.pop("children", [])
    return AssertionSpec.of(type=type_, raw={"type": type_, **raw}, children=children)


def sample(sid: str, prompt: str = "", **kw) -> Sample:
    kw.setdefault("assertions", [spec("contains", value="x")])
    return Sample(sample_id=sid, prompt=prompt or f"Explain {sid}alpha {sid}beta {sid}gamma", **kw)


def kinds(diags) -> list[tuple[str, str | None]]:
    return [(d.kind, d.sample_id) for d in diags]


# ---------------------------------------------------------------- sample set


def test_rubric_clarity_low_flags_a_short_rubric_without_criteria():
    diags = rubric_clarity_low([sample("a", rubric="回答要专业"), sample("b", rubric="Be nice.")])
    assert kinds(diags) == [("rubric_clarity_low", "a"), ("rubric_clarity_low", "b")]
    assert all(d.severity == "info" for d in diags)


def test_rubric_clarity_low_spares_keywords_long_rubrics_and_no_rubric():
    ok = [
        sample("zh", rubric="必须包含修复代码"),
        sample("en", rubric="Must include a fix"),
        sample("case", rubric="EXCELLENT if fixed"),
        sample("long", rubric="Explains the injection and shows the parameterised query."),
        sample("none"),
    ]
    assert rubric_clarity_low(ok) == []


def test_near_duplicate_flags_the_first_of_a_pair_with_rouge1_recall():
    samples = [
        sample("a", "Review this function for SQL injection and suggest a fix"),
        sample("b", "Review this function for SQL injection and suggest a fix please"),
        sample("c", "审查这段代码的安全性并给出修复建议"),
        sample("d", "审查这段代码的安全性"),
        sample("e", "Translate the release notes into French"),
    ]
    diags = near_duplicates(samples)
    assert kinds(diags) == [("near_duplicate", "a"), ("near_duplicate", "c")]
    assert diags[0].detail["duplicate_of"] == "b"
    assert diags[0].severity == "warning"
    assert diags[1].detail["duplicate_of"] == "d"
    assert diags[1].detail["rouge1"] == 1.0  # every char of d is in c


def test_near_duplicate_leaves_different_prompts_alone():
    samples = [sample("a", "Summarise the incident report"), sample("b", "Write a haiku about the sea"), sample("c", "!!!")]
    assert near_duplicates(samples) == []
    # recall is against the second prompt: a short prompt contained in a long one is not flagged
    assert near_duplicates([sample("short", "fix it"), sample("long", "fix it now and explain every step you took")]) == []


def test_near_duplicate_is_skipped_above_500_samples():
    same = [sample(f"s{i}", "exactly the same prompt") for i in range(501)]
    assert near_duplicates(same) == []
    assert len(near_duplicates(same[:3])) == 3


def test_rouge1_recall_clips_counts():
    from collections import Counter

    assert rouge1_recall(Counter("aab"), Counter("aaab")) == 0.75


def test_capability_thin_flags_rare_capabilities_once_on_their_first_sample():
    samples = [sample(f"s{i}", capability=["Security-Review"]) for i in range(8)]
    samples += [sample("t1", capability=["tool use", "security_review"]), sample("t2", capability=["Tool-Use"])]
    diags = capability_thin(samples)
    assert kinds(diags) == [("capability_thin", "t1")]
    assert diags[0].detail == {"capability": "tooluse", "count": 2, "limit": 2}


def test_capability_thin_needs_ten_samples_and_a_thin_capability():
    assert capability_thin([sample(f"s{i}", capability=["a" if i < 8 else "b"]) for i in range(9)]) == []
    assert capability_thin([sample(f"s{i}", capability=["a" if i < 5 else "b"]) for i in range(10)]) == []


def test_no_grading_flags_a_sample_with_nothing_to_grade():
    diags = ungraded([sample("bare", assertions=[])])
    assert kinds(diags) == [("no_grading", "bare")]
    assert diags[0].severity == "error"


def test_no_grading_accepts_assertions_a_rubric_or_dimensions():
    ok = [sample("a"), sample("r", assertions=[], rubric="x"), sample("d", assertions=[], dimensions={"tone": "polite"})]
    assert ungraded(ok) == []


def test_mock_unchecked_and_mock_hit_unknown():
    mocks = [{"tool": "Read"}, {"tool": "Bash"}, {"tool": "Bash"}]
    nested = spec("assert-set", children=[spec("mock_hit", value="Bash:2")])
    s = sample("m", mocks=mocks, assertions=[spec("mock_hit", value="Read:1"), nested, spec("mock_hit", value="Bash:3")])
    diags = mock_coverage([s])
    assert [(d.kind, d.detail["mock"], d.severity) for d in diags] == [
        ("mock_unchecked", "Bash:1", "info"),
        ("mock_hit_unknown", "Bash:3", "error"),
    ]


def test_mocks_all_checked_raise_nothing():
    s = sample("m", mocks=[{"tool": "Read"}], assertions=[spec("mock_hit", value="Read:1")])
    assert mock_coverage([s, sample("no-mocks")]) == []


def test_environment_prerequisites_that_do_not_hold(tmp_path):
    (tmp_path / "repo").mkdir()
    s = sample(
        "env",
        environment={"cli_available": ["omk-no-such-cli-xyz"], "files_available": ["src/app.py"]},
        cwd="repo",
        base_dir=tmp_path,
    )
    diags = environment([s])
    assert [(d.kind, d.severity) for d in diags] == [("env_cli_missing", "warning"), ("env_file_missing", "warning")]
    assert diags[1].detail["cwd"] == str((tmp_path / "repo").resolve())


def test_environment_prerequisites_that_hold(tmp_path):
    (tmp_path / "repo" / "src").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "app.py").write_text("")
    s = sample(
        "env",
        environment={"cli_available": ["sh"], "files_available": ["src/app.py"], "notes": "x"},
        cwd="repo",
        base_dir=tmp_path,
    )
    assert environment([s, sample("none")]) == []


def test_coverage_counts_metadata_with_unspecified_and_normalised_capabilities():
    samples = [
        sample("a", capability=["Security-Review", "security_review"], difficulty="easy", provenance="human", tripwire=True),
        sample("b", capability=["security review"], difficulty="hard", rubric="  twelve chars  "),
        sample("c", assertions=[spec("assert-set", children=[spec("contains", value="a"), spec("latency_max", value=1)])]),
    ]
    cov = coverage(samples)
    assert cov["capability"] == {"Security-Review": 2, "unspecified": 1}
    assert cov["difficulty"] == {"easy": 1, "hard": 1, "unspecified": 1}
    assert cov["construct"] == {"unspecified": 3}
    assert cov["provenance"] == {"unspecified": 2, "human": 1}
    assert cov["assertion_types"] == {"contains": 3, "assert-set": 1, "latency_max": 1}
    assert cov["layers"] == {"fact": 3}  # a mixed set counts as fact
    assert cov["declared"] == {"capability": 2, "difficulty": 2, "construct": 0, "provenance": 1}
    assert cov["avg_rubric_length"] == 12
    assert cov["tripwires"] == 1


# ---------------------------------------------------------------- a finished run


def res(sid: str, composite: float | None = None, *, status: str = "ok", repeat: int = 0, judge=None, cost=None, latency=None, judge_block=None):
    return {
        "sample_id": sid,
        "status": status,
        "error": "HTTP 503" if status == "error" else None,
        "repeat": repeat,
        "scores": {"fact": composite, "behavior": None, "judge": judge, "composite": composite or 0.0},
        "judge": judge_block,
        "trace": {"cost_usd": cost, "latency_ms": latency},
    }


def run(*results) -> ReportDocument:
    return ReportDocument.from_dict({"format": "omk-report/1", "run_id": "r1", "summary": {}, "results": list(results)})


def test_all_pass_and_all_fail_across_repeats():
    diags = run_diagnostics(run(res("easy", 5, repeat=0), res("easy", 5, repeat=1), res("broken", 1), res("broken", 1, repeat=1)))
    assert sorted((d.kind, d.severity, d.sample_id) for d in diags) == [
        ("all_fail", "error", "broken"),
        ("all_pass", "info", "easy"),
    ]


def test_all_pass_and_all_fail_need_two_equal_scores():
    diags = run_diagnostics(run(res("once", 5), res("mixed", 5), res("mixed", 4.5, repeat=1), res("low", 1), res("low", 1.5, repeat=1)))
    assert diags == []


def test_error_prone_is_an_error_when_every_run_errored_else_a_warning():
    diags = run_diagnostics(run(res("dead", status="error"), res("flaky", 4), res("flaky", status="error", repeat=1)))
    assert sorted((d.kind, d.severity, d.sample_id) for d in diags) == [
        ("error_prone", "error", "dead"),
        ("error_prone", "warning", "flaky"),
    ]
    assert run_diagnostics(run(res("fine", 4), res("fine", 4, repeat=1))) == []


def test_ambiguous_rubric_from_repeats_and_from_an_ensemble():
    repeats = run(res("r", 3, judge=1.0), res("r", 3, judge=4.0, repeat=1))
    ensemble = run(res("e", 3, judge=3.0, judge_block={"score": 3.0, "ensemble": [{"model": "a", "score": 1}, {"model": "b", "score": 5}]}))
    agreement = run(res("g", 3, judge=3.0, judge_block={"score": 3.0, "agreement": {"stddev": 1.2}}))
    for report, sid in ((repeats, "r"), (ensemble, "e"), (agreement, "g")):
        assert kinds(run_diagnostics(report)) == [("ambiguous_rubric", sid)]


def test_consistent_judges_are_not_ambiguous():
    steady = run(
        res("r", 3, judge=4.0),
        res("r", 3, judge=4.5, repeat=1),
        res("e", 3, judge=4.0, judge_block={"score": 4, "ensemble": [{"score": 4}, {"score": 5}]}),
    )
    assert run_diagnostics(steady) == []


def test_cost_and_latency_outliers_against_the_upper_median():
    report = run(*(res(f"s{i}", 3 + i * 0.5, cost=0.01, latency=100) for i in range(3)), res("big", 4.9, cost=0.03, latency=1000))
    diags = run_diagnostics(report)
    assert sorted(kinds(diags)) == [("cost_outlier", "big"), ("latency_outlier", "big")]
    assert all(d.severity == "info" for d in diags)


def test_no_outlier_below_three_times_the_median():
    report = run(*(res(f"s{i}", 3 + i * 0.5, cost=0.01, latency=100) for i in range(3)), res("big", 4.9, cost=0.029, latency=290))
    assert run_diagnostics(report) == []
    assert upper_median([0, 1, 2, 3, 4]) == 3
    assert upper_median([0]) is None


def test_flat_scores_when_the_whole_set_scores_alike():
    flat = run(*(res(f"s{i}", 3.0 + i * 0.1) for i in range(5)))
    diags = run_diagnostics(flat)
    assert [(d.kind, d.severity, d.sample_id) for d in diags] == [("flat_scores", "warning", None)]


def test_no_flat_scores_with_spread_or_few_samples():
    assert run_diagnostics(run(*(res(f"s{i}", 2.0 + i * 0.5) for i in range(5)))) == []
    assert run_diagnostics(run(*(res(f"s{i}", 3.0) for i in range(4)))) == []


# ---------------------------------------------------------------- health and verdict


@pytest.mark.parametrize(
    ("errors", "warnings", "infos", "n", "expected"),
    [(0, 0, 0, 10, 100), (1, 0, 0, 10, 84), (0, 1, 1, 10, 92), (0, 0, 1, 8, 98), (5, 0, 0, 4, 0), (0, 0, 0, 0, 100)],
)
def test_health_score_formula(errors, warnings, infos, n, expected):
    from omk.doctor.diagnostics import Diagnostic

    diags = [Diagnostic("k", "error", "x", "") for _ in range(errors)]
    diags += [Diagnostic("k", "warning", "x", "") for _ in range(warnings)]
    diags += [Diagnostic("k", "info", "x", "") for _ in range(infos)]
    assert health_score(diags, n) == expected


def test_examine_sorts_by_severity_and_verdict_follows_the_documented_rule():
    samples = [sample(f"s{i}") for i in range(10)] + [sample("bare", assertions=[]), sample("vague", rubric="ok")]
    result = examine(samples, ["x.yaml"])
    sev = [d["severity"] for d in result["diagnostics"]]
    assert sev == sorted(sev, key=["error", "warning", "info", "advice"].index)
    assert result["totals"]["errors"] == 1
    assert not verdict(result)

    warn_only = examine([sample(f"s{i}") for i in range(9)] + [sample("dup1", "same words here"), sample("dup2", "same words here")], [])
    assert warn_only["totals"] == {"samples": 11, "flagged": 1, "errors": 0, "warnings": 1, "infos": 0, "advice": 14}
    assert verdict(warn_only)
    assert not verdict(warn_only, strict=True)

    clean = examine([sample("a"), sample("b")], [])
    assert clean["health"] == 100
    assert [d for d in clean["diagnostics"] if d["severity"] != "advice"] == []
    assert verdict(clean, strict=True)

    low = examine([sample(f"i{i}", rubric="ok") for i in range(4)], [])  # 4 infos over 4 samples: health 80
    assert low["health"] == 80
    assert verdict(low)
    lower = examine([sample("m", mocks=[{"tool": "A"}] * 3, rubric="ok")], [])  # 4 infos, 1 sample: 20
    assert lower["health"] == 20
    assert lower["totals"]["errors"] == 0
    assert not verdict(lower)
