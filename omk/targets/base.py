"""What every target is: something that turns a sample and its composed prompt into output + trace."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from omk.domain.target_identity import CacheIdentity
from omk.domain.target_result import TargetResult
from omk.llm.errors import CallError
from omk.samples.model import Sample

if TYPE_CHECKING:
    from omk.targets.session import Session

__all__ = ["AnswersAtOnce", "CacheIdentity", "Target", "TargetError", "TargetResult", "answers_at_once"]


# A target that could not produce an output for one sample raises this, and that sample is marked
# `error`. It is the model-call layer's `CallError`: a target's failures and the judge's are
# classified (`retryable`, `retry_after`) and retried alike.
TargetError = CallError


class Target(Protocol):
    """A target may also have its answers at hand (a replay): it then says `answers_at_once = True`
    and gives them with a plain `answer` (`AnswersAtOnce`)."""

    spec: str

    def describe(self) -> dict[str, Any]:
        """What the report records about the target (never a secret)."""
        ...

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        """One call. `session` is given for each turn of a conversation (history, shared mocks)."""
        ...

    def cache_identity(self) -> CacheIdentity | None:
        """What, besides the sample, determines the output: model, endpoint, program,
        environment, settings (omk.domain.target_identity; every field is required).

        None means "do not cache" (replay is already free). Never include secrets.
        """
        ...

    async def close(self) -> None: ...


class AnswersAtOnce(Protocol):
    """A target that has its answers at hand (a replay): `answer` gives one without waiting, and
    the run calls it without a per-call timer or retries (such a target's failure is final: asked
    again, it says the same)."""

    spec: str

    def answer(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult: ...


def answers_at_once(target: Target) -> AnswersAtOnce | None:
    """`target` when it has its answers at hand (it says `answers_at_once`), else None."""
    return cast(AnswersAtOnce, target) if getattr(target, "answers_at_once", False) else None
