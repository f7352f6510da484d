"""Finishing an evaluation: the summary, the typed `Report`, and the report files."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from omk.engine.report import LayerMeans, Report, Summary
from omk.model import SampleResult

if TYPE_CHECKING:
    from omk.engine.run import Evaluation


def all_results(evaluation: Evaluation, fresh: list[SampleResult]) -> list[SampleResult]:
    """The finished and the fresh results, in plan order (sample, then repeat)."""
    done = {**evaluation.finished, **{(r.sample.sample_id, r.repeat): r for r in fresh}}
    return [done[(s.sample_id, r)] for s, r in evaluation.plan]


def build_summary(evaluation: Evaluation, results: list[SampleResult]) -> Summary:
    from omk.judge import why_no_judge
    from omk.run.repeats import spent_cost
    from omk.scoring.summary import summarize

    data = summarize(results, evaluation.settings.threshold, evaluation.duration_ms)
    judge = evaluation.judge
    return Summary(
        total=data["total"],
        ok=data["ok"],
        errored=data["errored"],
        passed=data["passed"],
        failed=data["failed"],
        cost_usd=spent_cost(results),  # cached results cost nothing this run
        duration_ms=data["duration_ms"],
        scores=LayerMeans(**data["scores"]),
        threshold=data["threshold"],
        gate_passed=data["gate_passed"],
        skipped_judge_items=data["skipped_judge_items"],
        categories=data["categories"],
        cached=sum(1 for r in results if r.cached),
        judge_cost_usd=judge.spent_usd() if judge is not None else None,  # apart from the target's cost_usd
        skipped_judge_reason=why_no_judge(evaluation.settings) if data["skipped_judge_items"] else None,
        repeat=evaluation.repeat,
    )


def repeats_block(results: list[SampleResult], repeat: int) -> dict[str, Any] | None:
    from omk.run.repeats import repeat_stats, repeat_summary

    stats = repeat_stats(results) if repeat > 1 else []
    return {**repeat_summary(stats, repeat), "per_sample": stats} if stats else None


def finish(evaluation: Evaluation, fresh: list[SampleResult]) -> Report:
    results = all_results(evaluation, fresh)
    judge = evaluation.judge
    report = Report(
        run_id=evaluation.folder.run_id,
        started_at=evaluation.folder.started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        samples_files=[str(f) for f in evaluation.files],
        target=evaluation.target.describe(),
        judge=judge.describe(results) if judge is not None else None,  # with agreement across samples
        summary=build_summary(evaluation, results),
        results=results,
        repeats=repeats_block(results, evaluation.repeat),
        out_dir=evaluation.out_dir,
        lang=evaluation.settings.lang,
        warnings=[w.render() for w in evaluation.warnings],
    )
    if report.out_dir is not None:
        report.write(evaluation.settings.formats)
    return report
