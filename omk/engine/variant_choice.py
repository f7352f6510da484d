"""Whether a run is an experiment: an experiment's record in a resumed run folder, or variants
given on the command line (`--control`/`--treatment`) or in omk.yaml (`variants:`). A plain run
asks and gets None; the variants themselves (omk.engine.variants) load only when there are some.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from omk.core.errors import ConfigError

if TYPE_CHECKING:
    from omk.engine.options import EvalOptions
    from omk.engine.variants import Variant
    from omk.settings.config import ConfigFile

MANIFEST = "experiment.json"  # an experiment's record in its run folder


def is_experiment(run_dir: Path) -> bool:
    """Whether `run_dir` holds an experiment (its record), not a plain run."""
    return (run_dir / MANIFEST).is_file()


def variants_for(options: EvalOptions, cwd: Path, config: ConfigFile | None = None) -> list[Variant] | None:
    """The experiment's variants: from --control/--treatment, else omk.yaml's `variants:`; None
    when the run is not an experiment. `config`: the run's omk.yaml, already read (None: read here)."""
    from omk.engine.inputs import sample_paths
    from omk.settings.config import ConfigFile

    if options.treatment and not options.control:
        raise ConfigError("--treatment needs a --control to compare with (baseline: no artifact)")
    if options.control:
        if not options.treatment:
            raise ConfigError("--control needs at least one --treatment")
        from omk.engine.variants import from_cli

        return from_cli(options.control, options.treatment, cwd)
    if config is None:
        config = ConfigFile.find(sample_paths(options, cwd), cwd)
    if config.path is None or "variants" not in config.data:
        return None
    from omk.engine.variants import from_config

    return from_config(config.path, config.data["variants"], config.node)
