"""Call a target with a per-call timeout, retrying transient failures with backoff
(omk/llm/retry.py has the policy and the loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from omk.domain.toolnames import unsupported_note
from omk.llm.retry import CallFailure, RetryPolicy, call_with_retry
from omk.records import Trace
from omk.samples.model import Sample
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

    produced, attempts = await call_with_retry(call, timeout, policy)
    produced.trace = noted_unsupported(produced.trace, target.spec)
    return produced, attempts


def noted_unsupported(trace: Trace, spec: str) -> Trace:
    """The trace with a note per tool the agent called that its target does not offer (a call's
    `outcome: unsupported`): such a call gets the CLI's refusal and is easy to miss otherwise."""
    tools = dict.fromkeys(c.tool for c in trace.tool_calls if c.outcome == "unsupported")
    new = [n for n in (unsupported_note(tool, spec) for tool in tools) if n not in trace.notes]
    return msgspec.structs.replace(trace, notes=(*trace.notes, *new)) if new else trace
