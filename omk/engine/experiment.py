"""An experiment: the same samples on several variants, interleaved, compared with paired statistics.

Each variant is an ordinary evaluation with its own run folder (`<run>/variants/<name>/`: report.json,
results.jsonl, run.json), so every variant can be read, re-rendered or resumed like any run. The
jobs of all variants run under one concurrency limit, sample by sample: a sample's variants (and
repeats) start back to back, in an order shuffled per sample with a recorded seed, so drift, rate
limits and caches hit every arm alike. The judge grades each answer on its own and never learns
which variant wrote it.

With `pairwise` on (by default when the variants differ by target and nothing else, as
`--target A --target B` makes them), the judge then also compares each treatment's answers with
the control's, sample by sample, in both orders (omk/engine/pairwise.py).

Then `omk.stats.analyze` compares each treatment with the control, sample by sample, and
decides the verdict. `<run>/report.json` is the control's report with the `experiment` block
(docs/report-format.md); `<run>/experiment.json` records the variants and the seed for `--resume`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.engine.evaluation import Evaluation
from omk.engine.experiment_state import VARIANTS_DIR, ExperimentOutcome, ExperimentState
from omk.engine.options import EvalOptions
from omk.engine.state import OnResult, new_run_id
from omk.engine.variant_choice import MANIFEST
from omk.engine.variant_records import analyze_reports
from omk.engine.variants import Variant
from omk.io.jsontext import dumps
from omk.records import SampleResult
from omk.records.experiment_manifest import EXPERIMENT_FORMAT, ExperimentManifest, RecordedVariant
from omk.records.shard import ShardInfo
from omk.samples.model import Sample

if TYPE_CHECKING:
    from omk.engine.ablation import AblationPlan
    from omk.settings.config import ConfigFile

__all__ = ["VARIANTS_DIR", "Experiment", "ExperimentOutcome", "prepare_experiment"]  # importable from here, as before

MANIFEST_FORMAT = EXPERIMENT_FORMAT


class Experiment(ExperimentState):
    """One experiment: its state (omk/engine/experiment_state.py) and the steps that run, compare
    and finish it."""

    __slots__ = ()

    async def execute(self, on_result: Callable[[str, SampleResult], None] | None = None) -> None:
        from omk.engine.budget import budget_for
        from omk.engine.runtime import Runtime, run_jobs
        from omk.inline import inline_urls

        jobs = self.schedule()
        budget_for(self.evaluations, len(jobs))
        started = time.perf_counter()
        try:
            async with contextlib.AsyncExitStack() as stack:
                runtimes = []
                for variant, evaluation in zip(self.variants, self.evaluations, strict=True):
                    report_to = _tagged(on_result, variant.name) if on_result else None
                    runtimes.append(await stack.enter_async_context(Runtime(evaluation, report_to)))
                await inline_urls(list({id(s): s for _, s, _ in jobs}.values()), self.control.settings)
                await run_jobs([(runtimes[i], s, r) for i, s, r in jobs], self.control.settings.concurrency)
        finally:  # the variants ran together: each one's summary records the whole run phase
            for evaluation in self.evaluations:
                evaluation.duration_ms = (time.perf_counter() - started) * 1000
        if self.pairwise:
            self.pairwise_block = await self.compare_pairwise()

    async def compare_pairwise(self) -> dict[str, Any]:
        """The pairwise judge's verdicts, every treatment against the control (each variant's
        finished and fresh results)."""
        from omk.engine.finish import all_results
        from omk.engine.pairwise import Arm, pairwise_block

        arms = [
            Arm(v.name, e.target.describe(), f"{VARIANTS_DIR}/{v.name}" if self.out_dir else None, all_results(e))
            for v, e in zip(self.variants, self.evaluations, strict=True)
        ]
        control = self.control
        return await pairwise_block(
            control.samples, arms[0], arms[1:], control.settings, use_cache=not control.options.no_cache, cwd=control.cwd
        )

    def finish(self) -> ExperimentOutcome:
        reports = {v.name: e.finish() for v, e in zip(self.variants, self.evaluations, strict=True)}
        outcome = analyze_reports(self, reports)
        self.remove_scratch()
        return outcome


def _tagged(on_result: Callable[[str, SampleResult], None], name: str) -> OnResult:
    return lambda result: on_result(name, result)


def prepare_experiment(
    options: EvalOptions,
    variants: list[Variant],
    *,
    cwd: Path | None = None,
    seed: int | None = None,
    trivial: float = 0.1,
    samples: list[Sample] | None = None,
    write: bool = True,
    pairwise: bool | None = None,
    ablation: AblationPlan | None = None,
    paths: list[Path] | None = None,
    config: ConfigFile | None = None,
) -> Experiment:
    """Every variant's evaluation, ready to run; the samples are loaded once and shared.
    `write=False` keeps the experiment in memory (no run folder). `pairwise`: whether the judge
    also compares treatment and control answers; None: when the variants differ by target only.
    `paths`: the files in-memory `samples` came from (where omk.yaml is looked for); `config`:
    the run's omk.yaml, already read (None: read here, once for every variant)."""
    from omk.engine.skill_checks import agree_on_skills
    from omk.engine.variants import targets_only

    cwd = cwd or Path.cwd()
    write = write and not options.dry_run  # a dry run writes no run folder
    started = datetime.now(UTC)
    run_id = new_run_id(started)
    out = Path(options.out) if options.out else Path(".omk") / "runs" / run_id
    out = (out if out.is_absolute() else cwd / out).resolve()
    config = config or _config(options, cwd, (paths or []) if samples is not None else None)
    evaluations: list[Evaluation] = []
    for variant in variants:
        sub = dataclasses.replace(options, out=str(out / VARIANTS_DIR / variant.name) if write else None)
        first = evaluations[0] if evaluations else None
        evaluations.append(
            Evaluation.prepare(
                sub,
                cwd=cwd,
                samples=(first.whole_plan or first.samples) if first else samples,
                paths=first.paths if first else paths,
                adjust=variant.apply,
                write=write,
                check_skills=False,
                config=config,
            )
        )
    agree_on_skills(evaluations)
    if first_files := evaluations[0].files:
        for evaluation in evaluations[1:]:
            evaluation.files = first_files
    shard, seed = _shard_and_seed(evaluations, variants, seed, trivial)
    folder = out if write else None
    experiment = Experiment(options, variants, evaluations, seed, run_id, started.isoformat(timespec="seconds"), folder, trivial)
    experiment.pairwise = targets_only(variants) if pairwise is None else pairwise
    experiment.max_cost_increase = evaluations[0].settings.max_cost_increase  # the command line's, else omk.yaml's
    experiment.shard = shard
    experiment.ablation = ablation
    if write:
        _record(experiment)
    return experiment


def _config(options: EvalOptions, cwd: Path, paths: list[Path] | None) -> ConfigFile:
    """The experiment's omk.yaml, read once for every variant (`paths`: the files in-memory
    samples came from)."""
    from omk.engine.inputs import sample_paths
    from omk.settings.config import ConfigFile

    return ConfigFile.find(list(paths or []) if paths is not None else sample_paths(options, cwd), cwd)


def _shard_and_seed(evaluations: list[Evaluation], variants: list[Variant], seed: int | None, trivial: float) -> tuple[ShardInfo | None, int]:
    """A sharded experiment's plan (every variant's plan, the variants, the seed) and its seed: the
    one given, or one taken from the plan so every shard shares it. Unsharded: a random seed."""
    first = evaluations[0].shard
    if first is None:
        return None, seed if seed is not None else random.SystemRandom().randrange(2**31)
    from omk.engine.shards import derived_seed, fingerprint

    parts: dict[str, Any] = {
        "variants": [msgspec.structs.asdict(v) for v in variants],
        "plans": [e.shard.plan if e.shard else None for e in evaluations],
        "trivial": trivial,
    }
    seed = seed if seed is not None else derived_seed(fingerprint(parts))
    return msgspec.structs.replace(first, plan=fingerprint({**parts, "seed": seed})), seed


def _record(experiment: Experiment) -> None:
    from omk.io.fileio import write_atomic

    assert experiment.out_dir is not None
    experiment.out_dir.mkdir(parents=True, exist_ok=True)
    record = ExperimentManifest(
        run_id=experiment.run_id,
        started_at=experiment.started_at,
        seed=experiment.seed,
        trivial=experiment.trivial,
        require=experiment.options.require,
        max_cost_increase=experiment.max_cost_increase,
        pairwise=experiment.pairwise,
        variants=tuple(recorded_variant(v) for v in experiment.variants),
        shard=experiment.shard,
        ablation=experiment.ablation.to_json() if experiment.ablation is not None else None,
    )
    write_atomic(experiment.out_dir / MANIFEST, dumps(record.to_json(), indent=2) + "\n")


def recorded_variant(variant: Variant) -> RecordedVariant:
    """A variant as experiment.json records it."""
    return RecordedVariant(**{**msgspec.structs.asdict(variant), "params": dict(variant.params)})


def variant_of(recorded: RecordedVariant) -> Variant:
    """The variant experiment.json records."""
    return Variant(**{**msgspec.structs.asdict(recorded), "params": dict(recorded.params)})


def resume_experiment(
    run_dir: Path, options: EvalOptions, *, cwd: Path | None = None, confirmed: Sequence[str] = ()
) -> Experiment:
    """The experiment recorded in `run_dir`, each variant resumed from its own folder; a variant's
    command target runs only when it is in `confirmed` (given again with --target)."""
    cwd = cwd or Path.cwd()
    run_dir = (run_dir if run_dir.is_absolute() else cwd / run_dir).resolve()
    path = run_dir / MANIFEST
    record = ExperimentManifest.read_file(path)
    variants = [variant_of(v) for v in record.variants]
    ablation = ablation_of(record, path)
    if ablation is not None:  # the copies of the skill, written again if they were removed since
        from omk.engine.ablation import restore_copies

        restore_copies(ablation, variants)
    options = dataclasses.replace(options, require=options.require or record.require)  # a resume may set its own
    evaluations = []
    for variant in variants:
        # each variant resumes its own run: only the choices a resume may change are passed on
        sub = dataclasses.replace(options, resume=str(run_dir / VARIANTS_DIR / variant.name), require=None, max_cost_increase=None)
        evaluations.append(Evaluation.prepare(sub, cwd=cwd, adjust=variant.apply, confirmed=confirmed, check_skills=False))
    from omk.engine.skill_checks import agree_on_skills

    agree_on_skills(evaluations, check=False)
    experiment = Experiment(options, variants, evaluations, record.seed, record.run_id, record.started_at, run_dir, float(record.trivial))
    experiment.pairwise, experiment.shard, experiment.ablation = record.pairwise, record.shard, ablation
    if options.max_cost_increase is not None:  # a resume may set its own, as for --require
        experiment.max_cost_increase = options.max_cost_increase
    elif record.max_cost_increase is not None:
        experiment.max_cost_increase = float(record.max_cost_increase)
    return experiment


def ablation_of(record: ExperimentManifest, path: Path) -> AblationPlan | None:
    """The skill's parts an ablation recorded (`--ablate`), None for another experiment; a part
    of the wrong shape is an InputError naming it."""
    if record.ablation is None:
        return None
    from omk.engine.ablation import AblationPlan

    return AblationPlan.read(record.ablation, str(path))


def run_experiment(experiment: Experiment, on_result: Callable[[str, SampleResult], None] | None = None) -> ExperimentOutcome:
    asyncio.run(experiment.execute(on_result))
    return experiment.finish()
