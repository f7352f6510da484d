"""`codex:MODEL`: the Codex CLI as a target (see target.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omk.targets.codex.target import CodexTarget

__all__ = ["CodexTarget"]


def __getattr__(name: str):  # the hook program imports this package: keep it light
    if name == "CodexTarget":
        from omk.targets.codex.target import CodexTarget

        return CodexTarget
    raise AttributeError(name)
