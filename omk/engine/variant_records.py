"""From run results to the experiment block: records per variant, the analysis, the report files.

Also what `omk verdict RUN_DIR` and `omk diff RUN_A RUN_B` read back from report.json files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from omk.engine.run_report import Report
from omk.records import SampleResult
from omk.records.document import ReportDocument
from omk.records.experiment_block import ExperimentBlock
from omk.stats import AnalysisSettings, Record, VariantRun, analyze, evaluate_policy

if TYPE_CHECKING:
    from omk.engine.experiment import Experiment, ExperimentOutcome

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


def case_of(result: SampleResult, threshold: float) -> dict[str, Any]:
    """One result as the block's `runs[name].results` keep it: enough for the JUnit and Markdown
    reports to show every variant's outcome without reading the variant's own folder."""
    from omk.report.reasons import failure_lines

    lines = [] if result.passed else failure_lines(result, threshold)
    if len(lines) > MAX_MESSAGES:
        lines = [*lines[: MAX_MESSAGES - 1], f"… and {len(lines) - MAX_MESSAGES + 1} more (see the variant's report)"]
    return {
        "sample_id": result.sample_id,
        "repeat": result.repeat,
        "status": "ok" if result.status == "ok" else "error",
        "passed": result.passed,
        "composite": result.scores.composite if result.status == "ok" else None,
        "duration_ms": round(result.duration_ms, 1),
        "messages": [line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…" for line in lines],
    }


def variant_run(name: str, role: str, results: Sequence[SampleResult]) -> VariantRun:
    samples: dict[str, list[Record]] = {}
    for r in results:
        samples.setdefault(r.sample_id, []).append(record_of(r))
    return VariantRun(name, samples, role)  # type: ignore[arg-type]  # the experiment loader checks the role


def analyze_reports(experiment: Experiment, reports: dict[str, Report]) -> ExperimentOutcome:
    from omk.engine.experiment import VARIANTS_DIR, ExperimentOutcome

    settings = AnalysisSettings(
        trivial=experiment.trivial,
        threshold=experiment.control.settings.threshold,
        seed=experiment.seed,
        max_cost_increase=experiment.max_cost_increase,
    )
    runs = [variant_run(v.name, v.role, reports[v.name].results) for v in experiment.variants]
    analysis = analyze(runs, settings)
    block = analysis.to_dict()
    block["seed"] = experiment.seed
    block["schedule"] = "sample-major, variants shuffled per sample"
    threshold = experiment.control.settings.threshold
    block["runs"] = {
        v.name: {
            "variant": v.describe(),
            "report": f"{VARIANTS_DIR}/{v.name}",
            "target": reports[v.name].target,
            "results": [case_of(r, threshold) for r in reports[v.name].results],
        }
        for v in experiment.variants
    }
    if experiment.options.require:
        block["require"] = evaluate_policy(analysis.verdict, experiment.options.require).to_dict()
    if experiment.pairwise_block is not None:
        block["pairwise"] = experiment.pairwise_block
    if changes := trigger_block(experiment):
        block["triggering"] = changes
    control = reports[experiment.variants[0].name]
    report = control.header()  # its results are the control's, read from its results file when written
    report["run_id"], report["started_at"] = experiment.run_id, experiment.started_at
    report["experiment"] = block
    if experiment.out_dir is not None:
        from omk.report import write_formats

        files = write_formats(experiment.out_dir, report, experiment.control.settings.formats, experiment.control.settings.lang)
    else:
        files = []
    document = dataclasses.replace(ReportDocument.from_dict({**report, "results": []}), results=control.results)
    return ExperimentOutcome(reports, analysis, ExperimentBlock.read(block), document, experiment.out_dir, files)


def trigger_block(experiment: Experiment) -> list[dict[str, Any]]:
    """Each treatment's paired change of every skill's trigger rates (from the results' digests)."""
    from omk.scoring.triggering import trigger_changes

    def cases(index: int) -> list[Any]:
        log = experiment.evaluations[index].log
        return [case for digest in log.digests.values() for case in digest.triggers]

    control = cases(0)
    if not control:
        return []
    found = []
    for i, variant in enumerate(experiment.variants[1:], start=1):
        found += [change.to_json() for change in trigger_changes(variant.name, control, cases(i))]
    return found


def records_of_report(report: ReportDocument) -> dict[str, list[Record]]:
    """A finished run's results as records by sample (for `omk diff`), read one at a time."""
    found: dict[str, list[Record]] = {}
    for result in report.results:
        found.setdefault(result.sample_id, []).append(record_of(result))
    return found
