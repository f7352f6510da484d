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

import fnmatch
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.config import ConfigFile, Settings
from omk.engine.options import EvalOptions
from omk.engine.results import ResultLog
from omk.engine.run_report import Report
from omk.errors import ConfigError, InputError, Problem
from omk.judge import Judge
from omk.model import Sample
from omk.records import SampleResult
from omk.records.manifest import RunManifest
from omk.runner.folder_lock import FolderLock
from omk.targets.base import Target

if TYPE_CHECKING:
    from omk.engine.budget import Budget
    from omk.records.shard import ShardInfo

OnResult = Callable[[SampleResult], None]


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def resolve_samples(paths: list[str], cwd: Path) -> list[Path]:
    from omk.loader import discover

    if paths:
        # Kept as written when they are relative to the process's own folder, so messages name
        # them as the user typed them; joined to `cwd` when the caller runs elsewhere.
        here = cwd == Path.cwd()
        return [p if p.is_absolute() or here else cwd / p for p in map(Path, paths)]
    found = discover(cwd)
    if not found:
        raise InputError(
            "no samples given and none found: looked for eval-samples.yaml, eval-samples.yml and "
            "eval-samples.json in the current directory and in ./evals/, then for the M365 names "
            "prompts.json, evals.json and tests.json in both (or pass prompts with --prompts)"
        )
    return found


def sample_paths(options: EvalOptions, cwd: Path) -> list[Path]:
    """The files to load: none for inline prompts (`--prompts`), else the given or discovered ones."""
    if options.prompts:
        if options.samples:
            raise InputError("give sample files or --prompts, not both")
        return []
    for name in ("expected", "evaluators"):
        if getattr(options, name):
            raise InputError(f"--{name} goes with --prompts (inline prompts, as runevals takes them)")
    return resolve_samples(options.samples, cwd)


def load_inputs(options: EvalOptions, paths: list[Path], cwd: Path, config: ConfigFile | None = None) -> Any:
    """`LoadedSamples` from the files, or from `--prompts` (inline prompts, read as M365 items)."""
    from omk.loader import LoadedSamples, load_samples

    if options.prompts:
        from omk.loader.formats.inline import inline_samples

        return LoadedSamples(samples=inline_samples(options.prompts, options.expected, options.evaluators, cwd))
    if config is None or config.path is None:
        return load_samples(paths, strict=options.strict)
    from omk.loader.paths import allowed_dirs

    folder, data = config.path.resolve().parent, config.data

    def allowed(file: Path) -> list[Path]:  # the omk.yaml already read, when it is the file's own
        return allowed_dirs(file, data) if file.resolve().parent == folder else allowed_dirs(file)

    return load_samples(paths, strict=options.strict, allowed=allowed)


def select(samples: list[Sample], pattern: str | None) -> list[Sample]:
    if not pattern:
        return samples
    chosen = [s for s in samples if fnmatch.fnmatchcase(s.sample_id, pattern)]
    if not chosen:
        raise InputError(f"--filter {pattern!r} matches no sample_id")
    return chosen


def build_target(settings: Settings) -> Target:
    """The target the settings name; its checks before the run (the API answers, …) are made once
    the run knows whether it will call it (omk/engine/preflight_check.py)."""
    from omk.targets import make_target

    if not settings.target:
        raise ConfigError("no target: pass --target KIND:ARG or set `target:` in omk.yaml")
    return make_target(settings.target, base_dir=settings.target_base, settings=settings.blocks())


@dataclass(slots=True)
class RunFolder:
    """Where a run is recorded: its id, start time and folder (None: an in-memory run)."""

    run_id: str
    started_at: str
    out_dir: Path | None
    manifest: RunManifest | None = None  # run.json of the run being resumed
    lock: FolderLock | None = None  # held from before the folder is written until its reports are


@dataclass(slots=True)
class Evaluation:
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
        return [(s, r) for s, r in self.plan if (s.sample_id, r) not in self.log]

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
        from omk.engine import plan

        return plan.prepare(
            cls, options, cwd=cwd or Path.cwd(), samples=samples, target=target, write=write, paths=paths, adjust=adjust,
            confirmed=confirmed,
            check_skills=check_skills,
            config=config,
        )

    async def execute(self, on_result: OnResult | None = None) -> int:
        """Run what is left; each result goes to the log (`results.jsonl`) and to `on_result` as it
        finishes, and is not kept: the number of results this call produced."""
        from omk.engine.runtime import execute

        started = time.perf_counter()
        try:
            return await execute(self, on_result)
        finally:
            self.duration_ms = (time.perf_counter() - started) * 1000

    def finish(self) -> Report:
        """Score the run (everything in its log), write its reports, return the `Report`."""
        from omk.engine.finish import finish

        return finish(self)
