"""What every target is: something that turns a sample and its composed prompt into output + trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from omk.model import Sample, Trace


class TargetError(Exception):
    """The target could not produce an output for one sample; that sample is marked `error`."""


@dataclass(slots=True)
class TargetResult:
    output: str
    trace: Trace = field(default_factory=Trace)


class Target(Protocol):
    spec: str

    def describe(self) -> dict[str, Any]:
        """What the report records about the target (never a secret)."""
        ...

    async def run(self, sample: Sample, prompt: str) -> TargetResult: ...

    async def close(self) -> None: ...
