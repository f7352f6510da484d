"""The evaluation engine: the one place that knows the order of an evaluation.

    load → select → plan → run (inline URLs, target, assertions, judge) → score → report

The command line (omk.cli), the Python API (omk.api) and the pytest plugin all drive it the same
way: build `EvalOptions`, `Evaluation.prepare`, `execute`, `finish`. Module map: `options` (the
choices) and `checks` (their checks), `run_kind` (a plain run, an experiment or an ablation:
decided here for the CLI and the API alike), `state` (what one evaluation holds), `inputs` (the
sample files, the samples, the target), `evaluation` (one evaluation from options to report), `plan`
(samples, settings, target, judge, run folder), `runtime` (the jobs: URL inlining, hooks, cache,
results), `results` (where results are kept), `finish` (summary and report files), `run_report`
(the typed `Report`), `estimate` (`--dry-run`), `budget` (`--budget-usd`), `experiment_state`,
`experiment`, `variants`, `variant_choice` and `variant_records` (the same samples on several
variants, and the experiment block), `ablation` and `ablation_run` (`--ablate`), `pairwise` (the
pairwise judge of an experiment), `shards`, `merge`, `merge_experiment` and `merge_run` (split
runs and `omk merge`), `power_run` (`omk power`), `preflight_check` and `skill_checks` (what is
checked before a run).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from omk.engine.evaluation import Evaluation
from omk.engine.options import EvalOptions
from omk.engine.run_report import LayerMeans, Report, Summary
from omk.engine.state import OnResult
from omk.samples.model import Sample
from omk.targets.base import Target

__all__ = ["EvalOptions", "Evaluation", "LayerMeans", "Report", "Summary", "run_evaluation", "run_evaluation_async"]


async def run_evaluation_async(
    options: EvalOptions,
    *,
    cwd: Path | None = None,
    samples: list[Sample] | None = None,
    target: Target | None = None,
    write: bool = True,
    on_result: OnResult | None = None,
) -> Report:
    """Prepare, run and finish one evaluation inside the caller's event loop."""
    evaluation = Evaluation.prepare(options, cwd=cwd, samples=samples, target=target, write=write)
    await evaluation.execute(on_result)
    return evaluation.finish()


def run_evaluation(
    options: EvalOptions,
    *,
    cwd: Path | None = None,
    samples: list[Sample] | None = None,
    target: Target | None = None,
    write: bool = True,
    on_result: OnResult | None = None,
) -> Report:
    """`run_evaluation_async` in an event loop of its own."""
    return asyncio.run(
        run_evaluation_async(options, cwd=cwd, samples=samples, target=target, write=write, on_result=on_result)
    )
