"""The state of one evaluation (`EvaluationState`) and where it is recorded (`RunFolder`).

The steps of an evaluation (omk/engine/plan.py, runtime.py, finish.py, budget.py,
skill_checks.py) each read and fill this state; omk/engine/evaluation.py puts them together as
`Evaluation`. The state lives here, apart from the steps, so that no step imports the module that
calls it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from omk.core.errors import Problem
from omk.engine.options import EvalOptions
from omk.engine.results import ResultLog
from omk.judge import Judge
from omk.records import SampleResult
from omk.records.manifest import RunManifest
from omk.runner.folder_lock import FolderLock
from omk.samples.model import Sample
from omk.settings.config import Settings
from omk.targets.base import Target

if TYPE_CHECKING:
    from omk.engine.budget import Budget
    from omk.records.shard import ShardInfo

OnResult = Callable[[SampleResult], None]


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@dataclass(slots=True)
class RunFolder:
    """Where a run is recorded: its id, start time and folder (None: an in-memory run)."""

    run_id: str
    started_at: str
    out_dir: Path | None
    manifest: RunManifest | None = None  # run.json of the run being resumed
    lock: FolderLock | None = None  # held from before the folder is written until its reports are


@dataclass(slots=True)
class EvaluationState:
    """What one evaluation holds from its preparation to its report: options, samples, settings,
    target, judge, run folder and the results log. omk.engine.evaluation.Evaluation adds the
    steps (prepare, execute, finish); the modules that do those steps read and fill this state."""

    options: EvalOptions
    cwd: Path
    paths: list[Path]
    files: list[Path]
    settings: Settings
    samples: list[Sample]
    repeat: int
    target: Target
    judge: Judge | None
    folder: RunFolder
    log: ResultLog = field(default_factory=lambda: ResultLog(()))  # finished results, by (sample_id, repeat)
    duration_ms: float = 0.0
    warnings: list[Problem] = field(default_factory=list)  # from loading: unknown fields, ignored
    shard: ShardInfo | None = None  # `--shard I/N`: which part of the plan this run is
    shard_positions: list[int] | None = None  # its samples' places in the whole plan
    whole_plan: list[Sample] | None = None  # the samples of every shard (an experiment's other variants split them again)
    skills: tuple[str, ...] | None = None  # the skills the run installs (omk.engine.skill_checks); None: unknown
    budget: Budget | None = None  # this invocation's spending limit (omk.engine.budget), shared by an experiment's variants
    not_run: list[tuple[str, int]] = field(default_factory=list)  # (sample_id, repeat) the budget left out

    @property
    def out_dir(self) -> Path | None:
        return self.folder.out_dir

    @property
    def plan(self) -> list[tuple[Sample, int]]:
        """Every (sample, repeat index) of the run, in report order."""
        return [(s, r) for s in self.samples for r in range(self.repeat)]

    @property
    def todo(self) -> list[tuple[Sample, int]]:
        """What is left to run: all of the plan, less what a resumed run had finished."""
        if not len(self.log):  # nothing finished yet
            return self.plan
        return [(s, r) for s, r in self.plan if (s.sample_id, r) not in self.log]
