"""`omk doctor`: what a sample set is missing and, given a run, what its results say about the set.

`examine()` gathers coverage and diagnostics into one dict (the `--json` output, documented in
docs/doctor.md); `verdict()` turns it into the exit code.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from omk.core.errors import Problem
from omk.doctor.coverage import coverage
from omk.doctor.diagnostics import (
    Diagnostic,
    health_score,
    run_diagnostics,
    sample_diagnostics,
    sort_diagnostics,
    unknown_fields,
)
from omk.samples.model import Sample

if TYPE_CHECKING:
    from omk.records.document import ReportDocument

HEALTH_MIN = 70  # as in omk 0.23: exit 0 iff no error and health ≥ 70


def recommendations(diags: list[Diagnostic], n: int) -> list[str]:
    kinds = Counter(d.kind for d in diags)
    tips = []
    if n and kinds["all_pass"] / n > 0.3:
        tips.append("over 30% of samples always score 5: add harder samples or stricter assertions")
    if kinds["flat_scores"]:
        tips.append("scores hardly vary across the set: add assertions that separate good answers from bad")
    if kinds["near_duplicate"]:
        tips.append("merge or vary near-duplicate prompts: they weigh one behaviour several times")
    if kinds["ambiguous_rubric"]:
        tips.append("judges disagree on some rubrics: say what a 5 and a 1 look like")
    if kinds["error_prone"]:
        tips.append("some samples error: check the target, timeouts and mocks before reading scores")
    if kinds["rubric_clarity_low"]:
        tips.append("short rubrics without criteria grade loosely: name what must be included")
    if kinds["capability_thin"]:
        tips.append("thin capabilities: add samples so each capability has a few")
    if kinds["unknown_field"]:
        tips.append('omk ignores unknown fields: fix the spelling, or prefix your own labels with "x-"')
    if kinds["no_grading"]:
        tips.append("give every sample at least one assertion or a rubric")
    if kinds["small_set"]:
        tips.append("a small set sees only large regressions: grow it before trusting a small change in scores")
    if kinds["single_check"] or kinds["layer_without_checks"]:
        tips.append("a sample with one check scores 1 or 5: add checks in other layers, or a rubric")
    if kinds["capability_single"]:
        tips.append("a capability with one sample is all or nothing: give each capability two samples or more")
    if kinds["mock_unchecked"]:
        tips.append("add mock_hit assertions so a run proves the agent used its mocks")
    if kinds["env_cli_missing"] or kinds["env_file_missing"]:
        tips.append("declared environment does not hold here: agent targets run on this machine will not find it")
    return tips


def examine(
    samples: list[Sample] | None, files: list[str], report: ReportDocument | None = None, ignored: list[Problem] | None = None
) -> dict[str, Any]:
    """`ignored`: the loader's warnings (unknown fields), one `unknown_field` diagnostic per name."""
    diags: list[Diagnostic] = unknown_fields(ignored or [])
    if samples is not None:
        from omk.doctor.advice import advice

        diags += sample_diagnostics(samples) + advice(samples)
    if report is not None:
        diags += run_diagnostics(report)
    diags = sort_diagnostics(diags)
    n = len(samples) if samples is not None else len({r.sample_id for r in report.results}) if report is not None else 0
    counts = Counter(d.severity for d in diags)
    return {
        "files": files,
        "valid": True,
        "problems": [],
        "health": health_score(diags, n),
        "totals": {
            "samples": n,
            "flagged": len({d.sample_id for d in diags if d.sample_id and d.severity != "advice"}),
            "errors": counts["error"],
            "warnings": counts["warning"],
            "infos": counts["info"],
            "advice": counts["advice"],
        },
        "coverage": coverage(samples) if samples is not None else None,
        "run": {"run_id": report.run_id, "results": len(report.results)} if report is not None else None,
        "diagnostics": [d.to_dict() for d in diags],
        "recommendations": recommendations(diags, n),
    }


def verdict(result: dict[str, Any], strict: bool = False) -> bool:
    """Healthy: valid, no error diagnostic, health ≥ 70; under `strict`, no warning either."""
    totals = result["totals"]
    if not result["valid"] or totals["errors"] or result["health"] < HEALTH_MIN:
        return False
    return not (strict and totals["warnings"])
