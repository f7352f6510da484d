"""Assertion types written in Python by the user, registered at run time (`omk.assertion_type`).

    @omk.assertion_type("mentions_ticket", layer="behavior")
    def mentions_ticket(output: str, check: omk.CheckInput) -> bool:
        return check.assertion.get("ticket", "") in output

The function gets the output and a `CheckInput` (the assertion's fields as written, the sample,
the trace, the turn of a conversation) and returns a bool, a score-free verdict, a
`(passed, message)` pair, a mapping `{"pass", "message", "score"}` or an `Outcome`. It may be
`async`. An exception it raises fails that assertion with the exception's text (also under
`not`), never the run.

The function gets its own copies of the assertion's fields, the sample and the trace: samples
that write the same content share it once loaded, so a change made here must not reach another
sample's check or the report.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

import msgspec

from omk.assertions.context import CheckContext
from omk.assertions.registry import assertion, registry, remove
from omk.records import Trace
from omk.samples.model import AssertionSpec, Layer, Outcome, Sample, Turn

ANY_FIELDS: dict[str, Any] = {"additionalProperties": True}
_USER_TYPES: set[str] = set()


class CheckInput(msgspec.Struct, frozen=True):
    output: str
    assertion: dict[str, Any]  # every field of the assertion as written (type, value, your own)
    sample: Sample
    trace: Trace
    turn: Turn | None = None  # in a conversation, the turn being checked


def to_outcome(result: Any, name: str) -> Outcome:
    if isinstance(result, Outcome):
        return result
    if isinstance(result, bool):
        return Outcome(result)
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool):
        return Outcome(result[0], message=None if result[1] is None else str(result[1]))
    if isinstance(result, dict) and "pass" in result:
        score = result.get("score")
        score = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
        message = result.get("message")
        return Outcome(
            bool(result["pass"]),
            metric=score,
            score=score if score is not None and 1 <= score <= 5 else None,
            message=None if message is None else str(message),
        )
    return Outcome(
        False,
        error=True,
        message=f"{name} returned {type(result).__name__}; expected a bool, (bool, message), a mapping with pass, or an Outcome",
    )


def own_input(spec: AssertionSpec, ctx: CheckContext) -> CheckInput:
    """What the user's function sees, copied. The specs and the places in the file stay
    themselves: what they hold is read-only (a compiled check, a line found on demand), and
    copying a schema validator would cost far more than the check."""
    turns = [*ctx.sample.turns, *([ctx.turn] if ctx.turn else [])]
    kept: list[object] = [ctx.sample.source, *(t.source for t in turns)]
    kept += [s for specs in (ctx.sample.assertions, *(t.assertions for t in turns)) for s in specs]
    memo: dict[int, Any] = {id(x): x for x in kept if x is not None}
    sample, turn, trace = copy.deepcopy((ctx.sample, ctx.turn, ctx.trace), memo)  # one copy: a turn of the sample stays one
    return CheckInput(ctx.output, copy.deepcopy(spec.raw), sample, trace, turn)


def register(
    name: str, fn: Callable[..., Any], *, layer: str | Layer = Layer.FACT, schema: dict[str, Any] | None = None
) -> None:
    """Make `fn` the check of assertion type `name`; a type of the user's may be registered again."""
    types = registry()
    if name in types and name not in _USER_TYPES:
        raise ValueError(f"assertion type {name!r} is built into omk; choose another name")
    remove(name)
    is_async = inspect.iscoroutinefunction(fn)

    async def check(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
        try:
            given = own_input(spec, ctx)
        except Exception:  # a program's own objects in its samples (a lock, a client) cannot be copied: given as they are
            given = CheckInput(ctx.output, spec.raw, ctx.sample, ctx.trace, ctx.turn)
        try:
            result = (await fn(ctx.output, given)) if is_async else fn(ctx.output, given)
        except Exception as exc:  # the user's code: its failure is this assertion's, not the run's
            return Outcome(False, error=True, message=f"{name} raised {type(exc).__name__}: {exc}")
        return to_outcome(result, name)

    check.__name__ = check.__qualname__ = name
    check.__doc__ = fn.__doc__
    assertion(name, layer=Layer(layer), kind="async", schema=schema if schema is not None else ANY_FIELDS)(check)
    _USER_TYPES.add(name)


def unregister(name: str) -> None:
    """Remove a type registered with `register` (tests, notebooks)."""
    if name in _USER_TYPES:
        remove(name)
        _USER_TYPES.discard(name)
