"""A target whose every output, trace and error message has the run's secrets masked (and lone
surrogates replaced, omk.io.textsafe).

`make_target` wraps each target in one, so no kind (a model API whose server echoes the key, a
`cmd:` program that prints its environment, a recording that holds a key) can put a secret into
what follows: the assertions, the judge's prompt, the cache, results.jsonl and the reports. The
text is masked in full as it comes out of the target, before anything cuts it short.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.secrets import Masker
from omk.io.textsafe import scrub, scrub_value
from omk.records import ToolCall, Trace, WorkspaceChanges
from omk.samples.model import Sample
from omk.targets.base import CacheIdentity, Target, TargetError, TargetResult, answers_at_once

if TYPE_CHECKING:  # a conversation's session; a single-prompt sample has none
    from omk.targets.session import Session


def mask_trace(trace: Trace, mask: Masker) -> Trace:
    """`trace` with its tool calls, notes and workspace masked: the same record when nothing
    in it changed (most traces hold no secret)."""
    if not (trace.tool_calls or trace.notes or trace.workspace is not None):  # nothing in it to mask
        return trace

    def clean(value: Any) -> Any:
        return scrub_value(mask.value(value))

    calls = tuple(_masked_call(c, clean) for c in trace.tool_calls)
    notes = tuple(clean(n) for n in trace.notes)
    workspace = trace.workspace
    if workspace is not None:  # a file's start was cut already: a key at its end is masked too
        workspace = WorkspaceChanges(
            *(
                tuple(msgspec.structs.replace(c, path=clean(c.path), content=scrub(mask.cut_edges(c.content)) if c.content else c.content) for c in group)
                for group in (workspace.created, workspace.changed, workspace.deleted)
            )
        )
    if workspace is None and calls == trace.tool_calls and notes == trace.notes:
        return trace
    return msgspec.structs.replace(trace, tool_calls=calls, notes=notes, workspace=workspace)


def _masked_call(call: ToolCall, clean: Callable[[Any], Any]) -> ToolCall:
    masked = (clean(call.tool), clean(call.input), clean(call.output))
    if masked == (call.tool, call.input, call.output):
        return call
    return ToolCall(*masked, call.mocked, call.mock_key, call.is_error, call.outcome)


def mask_result(result: TargetResult, mask: Masker) -> TargetResult:
    """Secrets masked and lone surrogates replaced in everything the target returned."""
    if isinstance(result.output, str):
        result.output = scrub(mask(result.output))
    result.trace = mask_trace(result.trace, mask)
    if result.messages:
        result.messages = scrub_value(mask.value(result.messages))
    return result



class MaskedTarget:
    """Delegates to `inner`; masks what comes back. Anything else is the inner target's."""

    def __init__(self, inner: Target, mask: Masker):
        self.inner = inner
        self.mask = mask
        self.spec = inner.spec
        self._identity: list[CacheIdentity | None] = []  # empty until first asked

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("inner", "mask", "spec", "_identity"):
            object.__setattr__(self, name, value)
        else:  # a setting of the target itself (its own timeout)
            setattr(self.inner, name, value)

    def describe(self) -> dict[str, Any]:
        return self.mask.value(self.inner.describe())

    def cache_identity(self) -> CacheIdentity | None:
        """The inner target's, worked out once per run (it reads files and the environment) and
        then asked for by every sample; hashed into the cache key, never stored."""
        if not self._identity:
            self._identity.append(self.inner.cache_identity())
        return self._identity[0]

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        try:
            result = await self.inner.run(sample, prompt, session)
        except TargetError as exc:
            raise self._masked_error(exc) from None
        return mask_result(result, self.mask)

    @property
    def answers_at_once(self) -> bool:
        """Whether the inner target has its answers at hand (`answer`, omk.targets.base.Target)."""
        return bool(getattr(self.inner, "answers_at_once", False))

    def answer(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        inner = answers_at_once(self.inner)
        assert inner is not None, "asked for an answer at once of a target that waits for its answers"
        try:
            result = inner.answer(sample, prompt, session)
        except TargetError as exc:
            raise self._masked_error(exc) from None
        return mask_result(result, self.mask)

    def _masked_error(self, exc: TargetError) -> TargetError:
        return TargetError(scrub(self.mask(str(exc))), retryable=exc.retryable, retry_after=exc.retry_after)

    async def close(self) -> None:
        await self.inner.close()
