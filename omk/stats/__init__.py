"""Experiments: do variants of a prompt, skill or agent differ on the same samples, and can the
answer be trusted? Paired statistics and the verdict, in pure Python (no numpy).

The engine adapts its sample results to `Record`s, groups them per variant in `VariantRun`s and
calls `analyze`; `ExperimentAnalysis.to_dict()` is report.json's `experiment` block. `diff_runs`
compares two runs sample by sample. Nothing here imports the CLI, the run loop or the engine.
"""

from omk.stats.analysis import ExperimentAnalysis, analyze
from omk.stats.bootstrap import Interval, bootstrap_mean_ci
from omk.stats.compare import PairedComparison, compare
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
