"""Experiments: do variants of a prompt, skill or agent differ on the same samples, and can the
answer be trusted? Paired statistics and the verdict, in pure Python (no numpy).

The engine adapts its sample results to `Record`s, groups them per variant in `VariantRun`s and
calls `analyze`; `ExperimentBlock.of(analysis)` (omk.records.experiment_block) is report.json's
`experiment` block. `diff_runs` compares two runs sample by sample. Nothing here imports the CLI, the run loop or the engine.
"""

from typing import TYPE_CHECKING

from omk.core.lazy import forwarder

# Each name's module, imported when the name is first asked for: a plain run reads one function
# of this package (a distribution) and should not load the whole experiment analysis with it.
_HOMES = {
    "ExperimentAnalysis": "omk.stats.analysis",
    "analyze": "omk.stats.analysis",
    "Interval": "omk.stats.bootstrap",
    "bootstrap_mean_ci": "omk.stats.bootstrap",
    "PairedComparison": "omk.stats.comparison",
    "compare": "omk.stats.comparison",
    "LAYERS": "omk.stats.data",
    "AnalysisSettings": "omk.stats.data",
    "Record": "omk.stats.data",
    "SampleOutcome": "omk.stats.data",
    "VariantRun": "omk.stats.data",
    "fold": "omk.stats.data",
    "fold_variant": "omk.stats.data",
    "RunDiff": "omk.stats.diff",
    "SampleChange": "omk.stats.diff",
    "diff_runs": "omk.stats.diff",
    "DeltaStats": "omk.stats.paired",
    "MeasureDelta": "omk.stats.paired",
    "PassRateChange": "omk.stats.paired",
    "Regression": "omk.stats.paired",
    "SampleDelta": "omk.stats.paired",
    "Spread": "omk.stats.paired",
    "min_detectable_effect": "omk.stats.paired",
    "samples_needed": "omk.stats.paired",
    "VariantSummary": "omk.stats.summary",
    "summarize": "omk.stats.summary",
    "Level": "omk.stats.verdict",
    "PairVerdict": "omk.stats.verdict",
    "PolicyResult": "omk.stats.verdict",
    "Verdict": "omk.stats.verdict",
    "decide": "omk.stats.verdict",
    "decide_pair": "omk.stats.verdict",
    "evaluate_policy": "omk.stats.verdict",
}

if TYPE_CHECKING:
    from omk.stats.analysis import ExperimentAnalysis, analyze
    from omk.stats.bootstrap import Interval, bootstrap_mean_ci
    from omk.stats.comparison import PairedComparison, compare
    from omk.stats.data import LAYERS, AnalysisSettings, Record, SampleOutcome, VariantRun, fold, fold_variant
    from omk.stats.diff import RunDiff, SampleChange, diff_runs
    from omk.stats.paired import (
        DeltaStats,
        MeasureDelta,
        PassRateChange,
        Regression,
        SampleDelta,
        Spread,
        min_detectable_effect,
        samples_needed,
    )
    from omk.stats.summary import VariantSummary, summarize
    from omk.stats.verdict import (
        Level,
        PairVerdict,
        PolicyResult,
        Verdict,
        decide,
        decide_pair,
        evaluate_policy,
    )


__getattr__ = forwarder(__name__, _HOMES)


__all__ = [
    "LAYERS",
    "DeltaStats",
    "ExperimentAnalysis",
    "Interval",
    "Level",
    "MeasureDelta",
    "PairVerdict",
    "PairedComparison",
    "PassRateChange",
    "PolicyResult",
    "Record",
    "Regression",
    "RunDiff",
    "SampleChange",
    "SampleDelta",
    "SampleOutcome",
    "AnalysisSettings",
    "Spread",
    "VariantRun",
    "VariantSummary",
    "Verdict",
    "analyze",
    "bootstrap_mean_ci",
    "compare",
    "decide",
    "decide_pair",
    "diff_runs",
    "evaluate_policy",
    "fold",
    "fold_variant",
    "min_detectable_effect",
    "samples_needed",
    "summarize",
]
