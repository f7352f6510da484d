"""What every target is: something that turns a sample and its composed prompt into output + trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from omk.llm.errors import CallError
from omk.model import Sample
from omk.records import Trace

if TYPE_CHECKING:
    from omk.targets.session import Session


# A target that could not produce an output for one sample raises this, and that sample is marked
# `error`. It is the model-call layer's `CallError`: a target's failures and the judge's are
# classified (`retryable`, `retry_after`) and retried alike.
TargetError = CallError


@dataclass(slots=True)
class TargetResult:
    output: str
    trace: Trace = field(default_factory=Trace)
    # In a conversation: what this turn said after the user message, as neutral messages
    # (omk.targets.session), so the next turn can send it as history. Empty = just `output`.
    messages: list[dict[str, Any]] = field(default_factory=list)


class Target(Protocol):
    spec: str

    def describe(self) -> dict[str, Any]:
        """What the report records about the target (never a secret)."""
        ...

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        """One call. `session` is given for each turn of a conversation (history, shared mocks)."""
        ...

    def cache_identity(self) -> dict[str, Any] | None:
        """What, besides the sample, determines the output (kind, model, params, system).

        None means "do not cache" (replay is already free). Never include secrets.
        """
        ...

    async def close(self) -> None: ...
