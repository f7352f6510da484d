"""One evaluation, from options to report: plan, run, score, write.

    evaluation = Evaluation.prepare(options)            # load, settings, target, judge, run folder
    await evaluation.execute(on_result)                  # the samples still to run, streamed to disk
    report = evaluation.finish()                         # summary, report.json and the other formats

`prepare` raises `InputError` (exit code 2 at the command line) for anything wrong with the input,
before any call is made. `execute` streams each finished result to `results.jsonl` as it comes and
keeps only its digest (omk/engine/results.py), so a run cut short keeps what it finished,
`--resume` continues it, and memory does not grow with the number of results. Nothing here touches
process-wide state (the working directory, signal handlers, the garbage collector): the command
line does that, for itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from omk.engine import plan
from omk.engine.finish import finish as finish_run
from omk.engine.inputs import build_target, load_inputs, resolve_samples, sample_paths, select
from omk.engine.options import EvalOptions
from omk.engine.run_report import Report
from omk.engine.runtime import execute as execute_run
from omk.engine.state import EvaluationState, OnResult, RunFolder, new_run_id
from omk.samples.model import Sample
from omk.settings.config import ConfigFile, Settings
from omk.targets.base import Target

# Kept importable from here, where they were first written.
__all__ = [
    "Evaluation",
    "OnResult",
    "RunFolder",
    "build_target",
    "load_inputs",
    "new_run_id",
    "resolve_samples",
    "sample_paths",
    "select",
]


class Evaluation(EvaluationState):
    """One evaluation: its state (omk/engine/state.py) and the steps that prepare, run and finish it."""

    __slots__ = ()

    @classmethod
    def prepare(
        cls,
        options: EvalOptions,
        *,
        cwd: Path | None = None,
        samples: list[Sample] | None = None,
        target: Target | None = None,
        write: bool = True,
        paths: list[Path] | None = None,
        adjust: Callable[[Settings], None] | None = None,
        confirmed: Sequence[str] = (),
        check_skills: bool = True,
        config: ConfigFile | None = None,
    ) -> Evaluation:
        """Everything short of calling the target: raises `InputError` for bad input or settings.

        `samples` given in memory replace loading files; `target` given as an object replaces the
        `target` spec; `write=False` keeps the run in memory (no run folder, no results.jsonl);
        `paths` are the files in-memory samples came from (recorded for a resume); `adjust`
        changes the settings before the target and judge are built (an experiment's variant);
        `confirmed`: command targets and judges the user gave again for a resume (`--target`).
        `check_skills=False` leaves the check of `skill_used` names to the caller (an experiment
        checks them against every variant's skills together). `config`: the run's omk.yaml,
        already read (None: found and read here).
        """
        return plan.prepare(
            cls, options, cwd=cwd or Path.cwd(), samples=samples, target=target, write=write, paths=paths, adjust=adjust,
            confirmed=confirmed,
            check_skills=check_skills,
            config=config,
        )

    async def execute(self, on_result: OnResult | None = None) -> int:
        """Run what is left; each result goes to the log (`results.jsonl`) and to `on_result` as it
        finishes, and is not kept: the number of results this call produced."""
        started = time.perf_counter()
        try:
            return await execute_run(self, on_result)
        finally:
            self.duration_ms = (time.perf_counter() - started) * 1000

    def finish(self) -> Report:
        """Score the run (everything in its log), write its reports, return the `Report`."""
        return finish_run(self)
