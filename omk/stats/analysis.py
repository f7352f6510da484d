"""The whole experiment: every variant summarised, every treatment compared with the control,
and the verdict. The `experiment` block of report.json is written from it by
`omk.records.experiment_block.ExperimentBlock.of(analysis).to_json()`.

The control is the variant whose role is `control`; when no variant says so, the first variant
is the control (as the original does). More than one control is an error: a comparison needs
one reference. A single variant gives no comparison and a SOLO verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from omk.stats.bootstrap import Draws
from omk.stats.comparison import PairedComparison, compare
from omk.stats.data import AnalysisSettings, VariantRun, fold_variant
from omk.stats.summary import VariantSummary, summarize
from omk.stats.verdict import Verdict, decide

FORMAT = "omk-experiment/1"


class ExperimentAnalysis(msgspec.Struct, frozen=True, gc=False):
    settings: AnalysisSettings
    control: str
    variants: tuple[VariantSummary, ...]
    comparisons: tuple[PairedComparison, ...]
    verdict: Verdict

def _control_first(variants: Sequence[VariantRun]) -> list[VariantRun]:
    if not variants:
        raise ValueError("an experiment needs at least one variant")
    names = [v.name for v in variants]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"variant names must be unique; repeated: {', '.join(duplicates)}")
    controls = [v for v in variants if v.role == "control"]
    if len(controls) > 1:
        raise ValueError(
            f"an experiment has one control; {len(controls)} variants say control: "
            + ", ".join(v.name for v in controls)
        )
    control = controls[0] if controls else variants[0]
    return [control, *(v for v in variants if v is not control)]


def analyze(
    variants: Sequence[VariantRun], settings: AnalysisSettings | None = None, judge_doubts: Sequence[str] = ()
) -> ExperimentAnalysis:
    """Summarise each variant, compare each treatment with the control, and decide the verdict;
    `judge_doubts` (omk.gold's flags) turn a PROGRESS into CAUTIOUS."""
    settings = settings or AnalysisSettings()
    ordered = _control_first(variants)
    folded = [fold_variant(v) for v in ordered]
    draws = Draws()  # the variants' figures with as many samples share the bootstrap's draws
    summaries = tuple(summarize(v, f, settings, draws) for v, f in zip(ordered, folded, strict=True))
    control, control_outcomes = ordered[0], folded[0]
    comparisons = tuple(
        compare(control.name, control_outcomes, v.name, outcomes, settings)
        for v, outcomes in zip(ordered[1:], folded[1:], strict=True)
    )
    return ExperimentAnalysis(settings, control.name, summaries, comparisons, decide(summaries, comparisons, settings, judge_doubts))
