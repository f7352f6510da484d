"""From run results to the experiment block: records per variant, the analysis, the report files.

Also what `omk verdict RUN_DIR` and `omk diff RUN_A RUN_B` read back from report.json files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.engine.run_report import Report
from omk.records import SampleResult
from omk.records.document import ReportDocument
from omk.records.experiment_block import Case, ExperimentBlock, PairwiseBlock, Require, Run
from omk.records.shard import ShardInfo
from omk.records.triggering import TriggerChange
from omk.scoring.digest import Digest
from omk.stats import AnalysisSettings, Record, VariantRun, analyze, evaluate_policy

if TYPE_CHECKING:
    from omk.engine.ablation import AblationPlan
    from omk.engine.experiment_state import ExperimentOutcome, ExperimentState
    from omk.engine.variants import Variant

LAYERS = ("fact", "behavior", "judge")
MAX_MESSAGES = 8  # failure lines kept per result in the block (the variant's report.json has all)
MAX_MESSAGE = 300  # characters per line


def record_of(result: SampleResult) -> Record:
    s = result.scores
    layers = {k: float(v) for k in LAYERS if (v := getattr(s, k)) is not None}
    return Record(
        status="ok" if result.status == "ok" else "error",
        composite=float(s.composite or 0.0) if layers else None,
        layers=layers,
        passed=result.passed,
        cost_usd=result.trace.cost_usd,
        latency_ms=result.trace.latency_ms if result.trace.latency_ms is not None else result.duration_ms,
        input_tokens=result.trace.tokens.input,
        output_tokens=result.trace.tokens.output,
    )


def case_of(result: SampleResult, threshold: float) -> Case:
    """One result as the block's `runs[name].results` keep it: enough for the JUnit and Markdown
    reports to show every variant's outcome without reading the variant's own folder."""
    from omk.report.reasons import failure_lines

    lines = [] if result.passed else failure_lines(result, threshold)
    if len(lines) > MAX_MESSAGES:
        lines = [*lines[: MAX_MESSAGES - 1], f"… and {len(lines) - MAX_MESSAGES + 1} more (see the variant's report)"]
    return Case(
        sample_id=result.sample_id,
        repeat=result.repeat,
        status="ok" if result.status == "ok" else "error",
        passed=result.passed,
        composite=result.scores.composite if result.status == "ok" else None,
        duration_ms=round(result.duration_ms, 1),
        messages=tuple(line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…" for line in lines),
        cached=result.cached,
    )


def variant_run(name: str, role: str, results: Sequence[SampleResult]) -> VariantRun:
    samples: dict[str, list[Record]] = {}
    for r in results:
        samples.setdefault(r.sample_id, []).append(record_of(r))
    return VariantRun(name, samples, role)  # type: ignore[arg-type]  # the experiment loader checks the role


class BlockInputs(msgspec.Struct, frozen=True):
    """What the experiment block is computed from, beside the variants' reports: a run's
    `Experiment`, or the record of the shards `omk merge` joins."""

    variants: list[Variant]
    settings: AnalysisSettings
    require: str | None
    pairwise: dict[str, Any] | None
    triggers: list[TriggerChange]  # each treatment's paired change of the trigger rates
    run_id: str
    started_at: str
    out_dir: Path | None
    formats: list[str]
    lang: str
    shard: ShardInfo | None = None
    ablation: AblationPlan | None = None  # `--ablate`: the parts to rank


def analyze_reports(experiment: ExperimentState, reports: dict[str, Report]) -> ExperimentOutcome:
    control = experiment.control.settings
    inputs = BlockInputs(
        variants=experiment.variants,
        settings=AnalysisSettings(
            trivial=experiment.trivial,
            threshold=control.threshold,
            seed=experiment.seed,
            max_cost_increase=experiment.max_cost_increase,
        ),
        require=experiment.options.require,
        pairwise=experiment.pairwise_block,
        triggers=trigger_block(experiment.variants, [e.log.digests.values() for e in experiment.evaluations]),
        run_id=experiment.run_id,
        started_at=experiment.started_at,
        out_dir=experiment.out_dir,
        formats=list(control.formats),
        lang=control.lang,
        shard=experiment.shard,
        ablation=experiment.ablation,
    )
    return experiment_outcome(inputs, reports)


def experiment_outcome(inputs: BlockInputs, reports: dict[str, Report]) -> ExperimentOutcome:
    """The analysis over every variant's results, the block, and the experiment's report files."""
    from omk.engine.experiment_state import ExperimentOutcome

    runs = [variant_run(v.name, v.role, reports[v.name].results) for v in inputs.variants]
    gold = reports[inputs.variants[0].name].gold  # people labelled the control's outputs
    doubts = [f"{j.judge}: {'; '.join(j.reasons)}" for j in gold.flagged] if gold is not None else []
    analysis = analyze(runs, inputs.settings, doubts)
    block = ExperimentBlock.of(
        analysis,
        _runs(inputs, reports),
        seed=inputs.settings.seed,
        require=Require.of(evaluate_policy(analysis.verdict, inputs.require)) if inputs.require else None,
        pairwise=PairwiseBlock.read(inputs.pairwise) if inputs.pairwise is not None else None,
        triggering=inputs.triggers,
    )
    if inputs.ablation is not None:  # each part's contribution, from the comparisons just made
        block = msgspec.structs.replace(block, ablation=inputs.ablation.ranking(block, inputs.settings.trivial), absent=block.absent - {"ablation"})
    control = reports[inputs.variants[0].name]
    report = control.header()  # its results are the control's, read from its results file when written
    report["run_id"], report["started_at"] = inputs.run_id, inputs.started_at
    if inputs.shard is not None:
        report["shard"] = inputs.shard.to_json()
    report["experiment"] = block.to_json()
    if inputs.out_dir is not None:
        from omk.report import write_formats

        files = write_formats(inputs.out_dir, report, inputs.formats, inputs.lang)
    else:
        files = []
    document = msgspec.structs.replace(ReportDocument.from_dict({**report, "results": []}), results=control.results)
    return ExperimentOutcome(reports, analysis, block, document, inputs.out_dir, files)


def _runs(inputs: BlockInputs, reports: dict[str, Report]) -> dict[str, Run]:
    """Each variant's run as the block keeps it: its choices, its folder, its target, its results."""
    from omk.engine.experiment_state import VARIANTS_DIR

    threshold = inputs.settings.threshold
    return {
        v.name: Run(
            f"{VARIANTS_DIR}/{v.name}",
            reports[v.name].target,
            tuple(case_of(r, threshold) for r in reports[v.name].results),
            v.describe(),
            reports[v.name].target.to_json(),
        )
        for v in inputs.variants
    }


def trigger_block(variants: Sequence[Variant], digests: Sequence[Iterable[Digest]]) -> list[TriggerChange]:
    """Each treatment's paired change of every skill's trigger rates (from the results' digests)."""
    from omk.scoring.triggering import trigger_changes

    cases = [[case for digest in found for case in digest.triggers] for found in digests]
    if not cases or not cases[0]:
        return []
    changes = []
    for variant, treatment in zip(variants[1:], cases[1:], strict=True):
        changes += trigger_changes(variant.name, cases[0], treatment)
    return changes


def records_of_report(report: ReportDocument) -> dict[str, list[Record]]:
    """A finished run's results as records by sample (for `omk diff`), read one at a time."""
    found: dict[str, list[Record]] = {}
    for result in report.results:
        found.setdefault(result.sample_id, []).append(record_of(result))
    return found
