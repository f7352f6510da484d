"""Call a target with a per-call timeout, retrying transient failures with backoff
(omk/llm/retry.py has the policy and the loop); take the answer of a target that has it at hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from omk.domain.mock_defs import mock_keys
from omk.domain.toolnames import run_not_honoured_note, unsupported_note
from omk.llm.retry import CallFailure, RetryPolicy, call_with_retry, classify
from omk.records import Trace
from omk.samples.model import Sample
from omk.targets.base import AnswersAtOnce, Target, TargetResult

if TYPE_CHECKING:  # a conversation's turn carries one
    from omk.targets.session import Session

TargetFailure = CallFailure  # the target gave no output for a sample, after `attempts` calls

__all__ = ["RetryPolicy", "TargetFailure", "answer_at_once", "call_with_retries"]


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
    produced.trace = noted_run_mocks(noted_unsupported(produced.trace, target.spec), sample, target.spec)
    return produced, attempts


def answer_at_once(target: AnswersAtOnce, sample: Sample, prompt: str, timeout: float) -> tuple[TargetResult, int]:
    """The answer of a target that has it at hand (a replay), taken with no timer and no retry:
    its failure is final, said as `call_with_retries` says a final one."""
    try:
        produced = target.answer(sample, prompt)
    except Exception as exc:  # noqa: BLE001 - a bug in the target must not end the run
        raise TargetFailure(classify(exc, timeout)[0], 1) from None
    if produced.trace.tool_calls or sample.mocks:  # else there is nothing to note (most replays)
        produced.trace = noted_run_mocks(noted_unsupported(produced.trace, target.spec), sample, target.spec)
    return produced, 1


def noted_run_mocks(trace: Trace, sample: Sample, spec: str) -> Trace:
    """The trace with a note per mock with `run: true` that answered with its return (`outcome:
    mock`): the target cannot run the real tool, and the call would otherwise read as the real
    tool's (claude: and codex: run it: `outcome: ran`)."""
    if not sample.mocks or not any(m.get("run") is True for m in sample.mocks):  # most samples have no mocks
        return trace
    runs = {key for key, m in zip(mock_keys(sample.mocks), sample.mocks, strict=True) if m.get("run") is True}
    keys = dict.fromkeys(c.mock_key for c in trace.tool_calls if c.outcome == "mock" and c.mock_key in runs)
    new = [n for n in (run_not_honoured_note(str(k), spec) for k in keys) if n not in trace.notes]
    return msgspec.structs.replace(trace, notes=(*trace.notes, *new)) if new else trace


def noted_unsupported(trace: Trace, spec: str) -> Trace:
    """The trace with a note per tool the agent called that its target does not offer (a call's
    `outcome: unsupported`): such a call gets the CLI's refusal and is easy to miss otherwise."""
    if not trace.tool_calls:  # most traces: no call at all
        return trace
    tools = dict.fromkeys(c.tool for c in trace.tool_calls if c.outcome == "unsupported")
    new = [n for n in (unsupported_note(tool, spec) for tool in tools) if n not in trace.notes]
    return msgspec.structs.replace(trace, notes=(*trace.notes, *new)) if new else trace
