"""`claude:MODEL`: the Claude Code CLI as a target (see target.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omk.targets.claude.target import ClaudeTarget

__all__ = ["ClaudeTarget"]


def __getattr__(name: str):  # the hook program imports this package: keep it light
    if name == "ClaudeTarget":
        from omk.targets.claude.target import ClaudeTarget

        return ClaudeTarget
    raise AttributeError(name)
