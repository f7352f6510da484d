"""Finishing an evaluation: the summary (from the results' digests), the typed `Report`, and the
report files (written from the results file, one result at a time)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec

from omk.engine.results import Results
from omk.engine.run_report import Report
from omk.io.jsontext import nonfinite_warning
from omk.records.document import RunTarget, Summary
from omk.scoring.digest import Digest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from omk.engine.state import EvaluationState
    from omk.judge import Judge
    from omk.records.gold import GoldCheck
    from omk.records.judge_settings import JudgeSettings
    from omk.records.repeats import Repeats
    from omk.records.triggering import TriggerCase, Triggering


def plan_keys(evaluation: EvaluationState) -> list[tuple[str, int]]:
    """The (sample_id, repeat) of every result the run has, in plan order (sample, then repeat)."""
    done = evaluation.log.digests  # what `key in log` asks, without a method call for each of a large run's keys
    return [key for s, r in evaluation.plan if (key := (s.sample_id, r)) in done]


def all_results(evaluation: EvaluationState) -> Results:
    """The run's results in plan order, read from its log when iterated."""
    return Results(evaluation.log, plan_keys(evaluation))


def build_summary(evaluation: EvaluationState, digests: list[Digest]) -> Summary:
    from omk.judge import why_no_judge
    from omk.runner.repeats import spent_cost
    from omk.scoring.summary import summarize

    summary = summarize(digests, evaluation.settings.threshold, evaluation.duration_ms)
    judge = evaluation.judge
    return msgspec.structs.replace(
        summary,
        cost_usd=spent_cost(digests),  # cached results cost nothing this run
        cached=sum(1 for r in digests if r.cached),
        judge_cost_usd=judge.spent_usd() if judge is not None else None,  # apart from the target's cost_usd
        skipped_judge_reason=why_no_judge(evaluation.settings) if summary.skipped_judge_items else None,
        repeat=evaluation.repeat,
    )


def repeats_block(digests: list[Digest], repeat: int) -> Repeats | None:
    from omk.runner.repeats import repeat_stats, repeats_of

    stats = repeat_stats(digests) if repeat > 1 else []
    return repeats_of(stats, repeat) if stats else None


def gold_block(evaluation: EvaluationState, results: Results) -> GoldCheck | None:
    """The judge against people's labels (`gold:` in the samples, `--gold FILE`); None without
    labels or without a judge."""
    from pathlib import Path

    files = [Path(f) for f in evaluation.options.gold or []]
    judge = evaluation.judge
    if judge is None or not (files or any(s.gold for s in evaluation.samples)):
        return None
    from omk.gold import CheckSettings, check_results

    settings = CheckSettings(threshold=evaluation.settings.threshold, seed=0)
    judges = [c.spec for c in judge.clients]
    return check_results(results, judges, files, settings, str(evaluation.out_dir or "run"))  # read as walked


def _triggering(cases: list[TriggerCase], skills: Sequence[str] | None) -> Triggering | None:
    """The triggering block, None when no sample checks `skill_used` (its module loads only then)."""
    if not cases:
        return None
    from omk.scoring.triggering import triggering

    return triggering(cases, skills)


def _judge_settings(judge: Judge | None, digests: list[Digest]) -> JudgeSettings | None:
    """The report's `judge` block, with an ensemble's agreement across the samples; None (its
    records never loaded) when no judge ran."""
    if judge is None:
        return None
    from omk.records.judge_settings import JudgeSettings

    return JudgeSettings.read(judge.describe(digests))


def finish(evaluation: EvaluationState) -> Report:
    results = all_results(evaluation)
    digests = [evaluation.log.digests[key] for key in results.keys]
    judge = evaluation.judge
    report = Report(
        run_id=evaluation.folder.run_id,
        started_at=evaluation.folder.started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        samples_files=[str(f) for f in evaluation.files],
        target=RunTarget.read(evaluation.target.describe()),
        judge=_judge_settings(judge, digests),  # with agreement across samples
        summary=build_summary(evaluation, digests),
        results=results,
        repeats=repeats_block(digests, evaluation.repeat),
        out_dir=evaluation.out_dir,
        lang=evaluation.settings.lang,
        warnings=[*(w.render() for w in evaluation.warnings), *nonfinite_warning(evaluation.log.nonfinite)],
        triggering=_triggering([case for d in digests for case in d.triggers], evaluation.skills),
        shard=evaluation.shard,
        budget=evaluation.budget.block(evaluation.not_run) if evaluation.budget is not None else None,
        gold=gold_block(evaluation, results),
    )
    if report.out_dir is not None:
        try:
            report.files = report.write(evaluation.settings.formats)
        except OSError as exc:  # a full disk at the very end: the results are kept, a resume writes the report
            from omk.runner.folder_lock import cannot_write

            raise cannot_write(report.out_dir / "report.json", exc, report.out_dir) from None
    if evaluation.folder.lock is not None:
        evaluation.folder.lock.release()
    return report
