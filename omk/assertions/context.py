"""What an assertion function gets to look at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omk.model import NO_JUDGE, Sample, Trace, Turn

if TYPE_CHECKING:
    from omk.assertions.hooks import HookRunner


@dataclass(slots=True)
class CheckContext:
    output: str
    trace: Trace
    sample: Sample
    judge: Any = None  # the judge client, when one is configured (judge-scored types)
    no_judge: str = NO_JUDGE  # why judge-scored types are skipped when `judge` is None
    hooks: HookRunner | None = None  # the worker that runs custom hooks
    regex_timeout_s: float = 2.0
    # In a conversation: the turn being checked (`sample` is then that turn's view: its prompt,
    # context, rubric and assertions) and the earlier turns as (prompt, output) pairs.
    turn: Turn | None = None
    history: list[tuple[str, str]] | None = None
