"""`--ablate SKILL_DIR`: the ablation experiment, made ready to run from the skill's parts
(omk/engine/ablation.py) and an ordinary experiment (omk/engine/experiment.py)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from omk.core.errors import ConfigError
from omk.engine.ablation import (
    FOLDER,
    copies_digest,
    mark_used,
    plan_ablation,
    prune_copies,
    target_kind,
    write_copies,
)
from omk.engine.experiment import Experiment
from omk.engine.options import EvalOptions
from omk.samples.model import Sample
from omk.settings.config import ConfigFile


def prepare_ablation(
    options: EvalOptions,
    cwd: Path,
    several_targets: bool = False,
    *,
    samples: list[Sample] | None = None,
    write: bool = True,
    config: ConfigFile | None = None,
) -> Experiment:
    """The ablation experiment, ready to run. The copies of the skill go into
    `.omk/ablation/<digest>/` when the run writes a folder (older unused copies there are pruned,
    see `prune_copies`), else into a temporary folder the experiment removes when it is done
    (`Experiment.remove_scratch`)."""
    from omk.engine.experiment import prepare_experiment

    assert options.ablate is not None
    if options.control or options.treatment or several_targets:
        flag = "several --target" if several_targets else "--control/--treatment"
        raise ConfigError(f"--ablate makes its own variants (the whole skill, and the skill without each part): drop {flag}")
    given = Path(options.ablate)
    from omk.domain.skillset import skill_folder

    skill = skill_folder((given if given.is_absolute() else cwd / given).resolve())
    plan, text, references = plan_ablation(skill, target_kind(options, cwd, config))
    keep = write and not options.dry_run
    root = cwd / ".omk" / FOLDER / copies_digest(skill, plan) if keep else Path(tempfile.mkdtemp(prefix="omk-ablate-"))
    variants = write_copies(plan, text, references, root, library_beside(skill, options, cwd, config))
    if keep:
        mark_used(root)
        prune_copies(root.parent, keep=root)
    try:
        experiment = prepare_experiment(options, variants, cwd=cwd, seed=options.seed, trivial=options.trivial or 0.1, samples=samples, write=write, ablation=plan, config=config)
    except BaseException:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
        raise
    if not keep:
        experiment.scratch = root
    return experiment


def library_beside(skill: Path, options: EvalOptions, cwd: Path, config: ConfigFile | None = None) -> list[str]:
    """The other skills the run installs with the ablated one (omk.yaml's `skills:`, a library
    that holds it), so that every variant keeps them: a sample that expects a neighbour to fire
    (or not) still finds it installed. None when omk.yaml names no library holding the skill."""
    from omk.domain.skillset import read_skill_paths
    from omk.engine.inputs import sample_paths

    config = config if config is not None else ConfigFile.find(sample_paths(options, cwd), cwd)
    value = config.data.get("skills")
    if value is None:
        return []
    base = config.folder or cwd
    given = [value] if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
    library = read_skill_paths([str(base / p) for p in given], "skills") if given else []
    if skill.name not in {s.name for s in library}:
        return []
    return [str(s.path.resolve()) for s in library if s.name != skill.name]
