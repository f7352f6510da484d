"""Targets: what produces the output for a sample.

A target kind is one module with a class that has a `from_spec` classmethod (the `TargetFactory`
below), plus one line in `KINDS`; `make_target` imports only the kind it is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from omk.core.errors import ConfigError
from omk.core.lazy import LazyRegistry
from omk.settings.target_settings import TargetSettings
from omk.targets.base import Target, TargetError, TargetResult

__all__ = ["KINDS", "Target", "TargetError", "TargetFactory", "TargetResult", "make_target", "register_target"]


class TargetFactory(Protocol):
    def __call__(self, arg: str, spec: str, *, base_dir: Path | None, settings: TargetSettings) -> Target:
        """The target for `KIND:ARG`; `arg` is what follows the colon, `spec` the whole text;
        `settings` what it reads of the run's settings, typed (and a mapping by name, as a kind
        written against a dict reads it)."""
        ...


# kind -> its factory, as "module:attr" (in the order error messages list them)
KINDS: LazyRegistry[TargetFactory] = LazyRegistry(
    {
        "openai": "omk.targets.openai:OpenAITarget.from_spec",
        "anthropic": "omk.targets.anthropic:AnthropicTarget.from_spec",
        "cmd": "omk.targets.cmd:CmdTarget.from_spec",
        "replay": "omk.targets.replay:ReplayTarget.from_spec",
        "claude": "omk.targets.claude.target:ClaudeTarget.from_spec",
        "codex": "omk.targets.codex.target:CodexTarget.from_spec",
    }
)
# kinds whose ARG may be empty: `claude:` and `codex:` run the CLI's default model
EMPTY_ARG = frozenset({"claude", "codex"})


def register_target(kind: str, factory: str) -> None:
    """Add a target kind: `factory` is the `"module:attr"` of its `TargetFactory`."""
    KINDS.register(kind, factory)


def make_target(spec: str, *, base_dir: Path | None = None, settings: Mapping[str, Any] | None = None) -> Target:
    """Build a target from `KIND:ARG`. Relative paths resolve against `base_dir`; `settings`:
    a run's `TargetSettings` (`Settings.blocks()`), or a mapping of them by name. Whatever it
    returns has the run's secrets masked (omk.targets.masked)."""
    from omk.core.secrets import Masker
    from omk.targets.masked import MaskedTarget

    typed = TargetSettings.of(settings)
    return MaskedTarget(_make(spec, base_dir, typed), Masker.for_run(typed))


def _make(spec: str, base_dir: Path | None, settings: TargetSettings) -> Target:
    kind, sep, arg = spec.partition(":")
    expected = ", ".join(KINDS.names())
    if not sep and (suggestion := _suggest(spec)):
        raise ConfigError(f"target {spec!r}: a target names its kind: did you mean {suggestion}? (KIND one of {expected})")
    if not sep or (not arg.strip() and kind not in EMPTY_ARG):
        raise ConfigError(f"target {spec!r}: expected KIND:ARG with KIND one of {expected}")
    if kind not in KINDS:
        import difflib

        close = difflib.get_close_matches(kind, KINDS.names(), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}:{arg}?)" if close else ""
        raise ConfigError(f"target {spec!r}: unknown kind {kind!r}{hint}; expected one of {expected}")
    return KINDS.load(kind)(arg, spec, base_dir=base_dir, settings=settings)


def _suggest(name: str) -> str | None:
    """`openai:NAME` or `anthropic:NAME` for a model name given without its kind."""
    from omk.llm.pricing import price_of

    model = name.strip()
    lowered = model.lower()
    if lowered in ("sonnet", "opus", "haiku"):
        return f"claude:{model} (the Claude Code CLI)"
    if lowered.startswith("claude"):
        return f"anthropic:{model} (or claude:{model} for the Claude Code CLI)"
    if price_of(model) is not None or lowered.startswith(("gpt-", "chatgpt", "o1", "o3", "o4")):
        return f"openai:{model}"
    return None
