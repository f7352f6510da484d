"""What an evaluation reads before it runs: the sample files (given or discovered), the samples
in them (or inline `--prompts`), the `--filter` selection, and the target the settings name."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

from omk.core.errors import ConfigError, InputError
from omk.engine.options import EvalOptions
from omk.samples.model import Sample
from omk.settings.config import ConfigFile, Settings
from omk.targets.base import Target


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
