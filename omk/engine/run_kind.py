"""What kind of run `omk eval` (or the Python API) was asked for — a plain evaluation, an
experiment of variants (several targets, --control/--treatment, omk.yaml's `variants:`, a resumed
experiment) or an ablation — decided here, once, for every caller. omk.yaml is read once for it
and handed to every evaluation the run prepares."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from omk.core.errors import ConfigError
from omk.engine.options import EvalOptions
from omk.samples.model import Sample
from omk.settings.config import ConfigFile

if TYPE_CHECKING:
    from omk.engine.evaluation import Evaluation
    from omk.engine.experiment import Experiment
    from omk.engine.variants import Variant


def prepare_run(options: EvalOptions, *, cwd: Path | None = None, targets: list[str] | None = None) -> Evaluation | Experiment:
    """The run the options ask for, ready to execute. `targets`: two or more `--target`, an
    experiment whose variants differ by target only (the first the control)."""
    from omk.engine.evaluation import Evaluation

    cwd = cwd or Path.cwd()
    config = project_config(options, cwd)
    experiment = experiment_for(options, cwd, targets, config=config)
    if experiment is not None:
        return experiment
    if options.pairwise:
        raise ConfigError("--pairwise compares the variants of an experiment: give two --target, or --control and --treatment")
    return Evaluation.prepare(options, cwd=cwd, config=config)


def project_config(options: EvalOptions, cwd: Path) -> ConfigFile | None:
    """The omk.yaml of a new run, read once (None for a resumed run: its record says where)."""
    if options.resume:
        return None
    from omk.engine.inputs import sample_paths

    return ConfigFile.find(sample_paths(options, cwd), cwd)


def experiment_for(
    options: EvalOptions,
    cwd: Path | None = None,
    targets: list[str] | None = None,
    *,
    variants: list[Variant] | None = None,
    samples: list[Sample] | None = None,
    write: bool = True,
    config: ConfigFile | None = None,
) -> Experiment | None:
    """The experiment the options ask for (an ablation, a resumed experiment, several targets,
    `variants` given, --control/--treatment, or omk.yaml's `variants:`), or None for a plain run."""
    from omk.engine.variant_choice import is_experiment, variants_for

    cwd = cwd or Path.cwd()
    if options.ablate:
        from omk.engine.ablation_run import prepare_ablation

        if options.resume:
            raise ConfigError("--ablate starts a new experiment: drop --resume (omk eval --resume RUN_DIR continues a recorded ablation)")
        return prepare_ablation(options, cwd, several_targets=bool(targets), samples=samples, write=write, config=config)
    resume_dir = Path(options.resume) if options.resume else None
    resuming = resume_dir is not None and is_experiment(resume_dir)
    if targets and not resuming and (options.resume or options.control or options.treatment):
        flag = "--resume" if options.resume else "--control/--treatment"
        raise ConfigError(
            f"several --target make an experiment of their own: drop {flag}"
            + (" (omk eval --resume RUN_DIR continues a recorded experiment with its targets)" if options.resume else "")
        )
    if resume_dir is not None and resuming:
        return _resumed(resume_dir, options, targets)
    if options.resume:
        return None
    if variants is None and targets:  # the variants' module loads only for an experiment
        from omk.engine.variants import target_variants

        variants = target_variants(targets)
    if variants is None:
        variants = variants_for(options, cwd, config)
    if variants is None:
        return None
    from omk.engine.experiment import prepare_experiment

    trivial = options.trivial or 0.1
    return prepare_experiment(
        options, variants, cwd=cwd, seed=options.seed, trivial=trivial, pairwise=options.pairwise, samples=samples, write=write, config=config
    )


def _resumed(resume_dir: Path, options: EvalOptions, targets: list[str] | None) -> Experiment:
    """A recorded experiment, continued with the choices a resume may change."""
    if options.shard:
        raise ConfigError("--resume reruns the recorded run as it was; drop --shard (a resume keeps the run's own shard)")
    given = EvalOptions(
        quiet=options.quiet,
        concurrency=options.concurrency,
        timeout=options.timeout,
        retries=options.retries,
        no_cache=options.no_cache,
        format=options.format,
        lang=options.lang,
        require=options.require,
        max_cost_increase=options.max_cost_increase,
    )
    judges = [j.strip() for j in (options.judge or "").split(",") if j.strip()]
    confirmed = [*(targets or []), *([options.target] if options.target else []), *judges]  # given again
    from omk.engine.experiment import resume_experiment

    experiment = resume_experiment(resume_dir, given, confirmed=confirmed)
    recorded = {e.settings.target for e in experiment.evaluations}
    if stray := [t for t in targets or [] if t not in recorded]:
        raise ConfigError(f"--resume: {', '.join(stray)} is not a target of this experiment ({', '.join(sorted(map(str, recorded)))})")
    return experiment
