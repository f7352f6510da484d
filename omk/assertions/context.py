"""What an assertion function gets to look at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omk.model import Sample, Trace

if TYPE_CHECKING:
    from omk.assertions.hooks import HookRunner


@dataclass(slots=True)
class CheckContext:
    output: str
    trace: Trace
    sample: Sample
    judge: Any = None  # the judge client, when one is configured (judge-scored types)
    hooks: HookRunner | None = None  # the worker that runs custom hooks
    regex_timeout_s: float = 2.0
