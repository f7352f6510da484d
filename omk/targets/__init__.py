"""Targets: what produces the output for a sample (spec §2)."""

from __future__ import annotations

from pathlib import Path

from omk.errors import ConfigError
from omk.targets.base import Target, TargetError, TargetResult

__all__ = ["Target", "TargetError", "TargetResult", "make_target"]

KINDS = ("openai", "anthropic", "cmd", "replay")


def make_target(spec: str, *, base_dir: Path | None = None, settings: dict | None = None) -> Target:
    """Build a target from `KIND:ARG`. Relative paths resolve against `base_dir`. Whatever it
    returns has the run's secrets masked (omk.targets.masked)."""
    from omk.secrets import Masker
    from omk.targets.masked import MaskedTarget

    return MaskedTarget(_make(spec, base_dir, settings), Masker.for_run(settings))


def _make(spec: str, base_dir: Path | None, settings: dict | None) -> Target:
    kind, sep, arg = spec.partition(":")
    if not sep or not arg.strip():
        raise ConfigError(f"target {spec!r}: expected KIND:ARG with KIND one of {', '.join(KINDS)}")
    if kind == "replay":
        from omk.targets.replay import ReplayTarget

        path = Path(arg)
        if not path.is_absolute() and base_dir is not None and not path.exists():
            path = base_dir / path
        return ReplayTarget(path, spec)
    if kind == "openai":
        from omk.targets.openai import OpenAITarget

        return OpenAITarget(arg.strip(), spec, settings)
    if kind == "anthropic":
        from omk.targets.anthropic import AnthropicTarget

        return AnthropicTarget(arg.strip(), spec, settings)
    if kind == "cmd":
        from omk.targets.cmd import CmdTarget

        return CmdTarget(arg, spec, base_dir=base_dir, settings=settings)
    raise ConfigError(f"target {spec!r}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
