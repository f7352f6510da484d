"""Finishing an evaluation: the summary (from the results' digests), the typed `Report`, and the
report files (written from the results file, one result at a time)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from omk.engine.results import Results
from omk.engine.run_report import Report
from omk.records.document import Category, LayerMeans, Repeats, Summary
from omk.scoring.digest import Digest

if TYPE_CHECKING:
    from omk.engine.evaluation import Evaluation


def plan_keys(evaluation: Evaluation) -> list[tuple[str, int]]:
    """The (sample_id, repeat) of every result the run has, in plan order (sample, then repeat)."""
    log = evaluation.log
    return [key for s, r in evaluation.plan if (key := (s.sample_id, r)) in log]


def all_results(evaluation: Evaluation) -> Results:
    """The run's results in plan order, read from its log when iterated."""
    return Results(evaluation.log, plan_keys(evaluation))


def build_summary(evaluation: Evaluation, digests: list[Digest]) -> Summary:
    from omk.judge import why_no_judge
    from omk.runner.repeats import spent_cost
    from omk.scoring.summary import summarize

    data = summarize(digests, evaluation.settings.threshold, evaluation.duration_ms)
    judge = evaluation.judge
    return Summary(
        total=data["total"],
        ok=data["ok"],
        errored=data["errored"],
        passed=data["passed"],
        failed=data["failed"],
        cost_usd=spent_cost(digests),  # cached results cost nothing this run
        duration_ms=data["duration_ms"],
        scores=LayerMeans(**data["scores"]),
        threshold=data["threshold"],
        gate_passed=data["gate_passed"],
        skipped_judge_items=data["skipped_judge_items"],
        categories=tuple(Category(**c) for c in data["categories"]),
        cached=sum(1 for r in digests if r.cached),
        judge_cost_usd=judge.spent_usd() if judge is not None else None,  # apart from the target's cost_usd
        skipped_judge_reason=why_no_judge(evaluation.settings) if data["skipped_judge_items"] else None,
        repeat=evaluation.repeat,
    )


def repeats_block(digests: list[Digest], repeat: int) -> Repeats | None:
    from omk.runner.repeats import repeat_stats, repeats_of

    stats = repeat_stats(digests) if repeat > 1 else []
    return repeats_of(stats, repeat) if stats else None


def finish(evaluation: Evaluation) -> Report:
    results = all_results(evaluation)
    digests = [evaluation.log.digests[key] for key in results.keys]
    judge = evaluation.judge
    report = Report(
        run_id=evaluation.folder.run_id,
        started_at=evaluation.folder.started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        samples_files=[str(f) for f in evaluation.files],
        target=evaluation.target.describe(),
        judge=judge.describe(digests) if judge is not None else None,  # with agreement across samples
        summary=build_summary(evaluation, digests),
        results=results,
        repeats=repeats_block(digests, evaluation.repeat),
        out_dir=evaluation.out_dir,
        lang=evaluation.settings.lang,
        warnings=[w.render() for w in evaluation.warnings],
    )
    if report.out_dir is not None:
        report.write(evaluation.settings.formats)
    return report
