"""omk: an evaluation engine for LLM prompts, skills and agents.

    import omk

    report = omk.evaluate("eval-samples.yaml", target="replay:responses.jsonl")
    print(report.summary.passed, "of", report.summary.total, "passed")

The names below are the public API (docs/python-api.md); they load on first use, so `import omk`
stays cheap for the command line.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from omk.version import __version__

_EXPORTS = {
    "load": "omk.api",
    "evaluate": "omk.api",
    "evaluate_async": "omk.api",
    "prepare": "omk.api",
    "assertion_type": "omk.api",
    "run_experiment": "omk.api",
    "ablate": "omk.api",
    "read_report": "omk.api",
    "ReportDocument": "omk.records.document",
    "RunOptions": "omk.api",
    "Variant": "omk.engine.variants",
    "ExperimentOutcome": "omk.engine.experiment",
    "Ablation": "omk.records.experiment_block",
    "AblationPart": "omk.records.experiment_block",
    "CheckInput": "omk.assertions.python",
    "Report": "omk.engine.run_report",
    "Summary": "omk.records.document",
    "LayerMeans": "omk.records.document",
    "Evaluation": "omk.engine.evaluation",
    "Sample": "omk.samples.model",
    "SampleResult": "omk.records",
    "TurnResult": "omk.records",
    "AssertionResult": "omk.records",
    "Scores": "omk.records",
    "Trace": "omk.records",
    "ToolCall": "omk.records",
    "Outcome": "omk.samples.model",
    "Layer": "omk.samples.model",
    "Status": "omk.samples.model",
    "Target": "omk.targets.base",
    "TargetResult": "omk.targets.base",
    "TargetError": "omk.targets.base",
    "OmkError": "omk.core.errors",
    "InputError": "omk.core.errors",
    "ConfigError": "omk.core.errors",
    "Problem": "omk.core.errors",
}

__all__ = [
    "__version__",
    "load",
    "evaluate",
    "evaluate_async",
    "prepare",
    "assertion_type",
    "run_experiment",
    "ablate",
    "read_report",
    "ReportDocument",
    "RunOptions",
    "Variant",
    "ExperimentOutcome",
    "Ablation",
    "AblationPart",
    "CheckInput",
    "Report",
    "Summary",
    "LayerMeans",
    "Evaluation",
    "Sample",
    "SampleResult",
    "TurnResult",
    "AssertionResult",
    "Scores",
    "Trace",
    "ToolCall",
    "Outcome",
    "Layer",
    "Status",
    "Target",
    "TargetResult",
    "TargetError",
    "OmkError",
    "InputError",
    "ConfigError",
    "Problem",
]

if TYPE_CHECKING:
    from omk.api import (
        RunOptions,
        ablate,
        assertion_type,
        evaluate,
        evaluate_async,
        load,
        prepare,
        read_report,
        run_experiment,
    )
    from omk.assertions.python import CheckInput
    from omk.core.errors import ConfigError, InputError, OmkError, Problem
    from omk.engine.evaluation import Evaluation
    from omk.engine.experiment import ExperimentOutcome
    from omk.engine.run_report import Report
    from omk.engine.variants import Variant
    from omk.records import AssertionResult, SampleResult, Scores, ToolCall, Trace, TurnResult
    from omk.records.document import LayerMeans, ReportDocument, Summary
    from omk.records.experiment_block import Ablation, AblationPart
    from omk.samples.model import Layer, Outcome, Sample, Status
    from omk.targets.base import Target, TargetError, TargetResult


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'omk' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
