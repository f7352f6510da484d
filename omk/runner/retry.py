"""Call a target with a per-call timeout, retrying transient failures with backoff
(omk/llm/retry.py has the policy and the loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omk.llm.retry import CallFailure, RetryPolicy, call_with_retry
from omk.model import Sample
from omk.targets.base import Target, TargetResult

if TYPE_CHECKING:  # a conversation's turn carries one
    from omk.targets.session import Session

TargetFailure = CallFailure  # the target gave no output for a sample, after `attempts` calls

__all__ = ["RetryPolicy", "TargetFailure", "call_with_retries"]


async def call_with_retries(
    target: Target, sample: Sample, prompt: str, timeout: float, policy: RetryPolicy, session: Session | None = None
) -> tuple[TargetResult, int]:
    """The target's result and the number of calls it took; raises `TargetFailure`.

    With a `session` (one turn of a conversation) a retry starts the turn over: the mocks are
    put back as they were when the turn began.
    """

    async def call(attempt: int) -> TargetResult:
        if session is None:
            return await target.run(sample, prompt)
        if attempt > 1:
            session.sandbox.retry_turn()
        return await target.run(sample, prompt, session=session)

    return await call_with_retry(call, timeout, policy)
