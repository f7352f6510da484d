"""Run a sample's assertions: `not` (it inverts every type, custom and judge-scored ones too),
assert-set nesting, layers, skipping.

Results keep the sample's order. A judge-scored assertion with no judge configured is
SKIPPED, never failed; an assert-set's raw verdict is `any`/`all` over its children's final
verdicts, and the set's own `not` inverts that.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from functools import lru_cache
from operator import is_
from typing import Any

import msgspec

from omk.assertions import registry
from omk.assertions.context import CheckContext
from omk.records import AssertionResult
from omk.samples.model import AssertionSpec, Layer, Outcome, Status

SET_TYPE = "assert-set"

# The members as plain module names: reading a member from its enum class is slow (Python 3.11
# looks it up through the class's machinery each time), and these are read for every check.
_PASSED, _FAILED, _SKIPPED = Status.PASSED, Status.FAILED, Status.SKIPPED


def display_value(spec: AssertionSpec) -> object:
    """What the assertion checks for, as a reader of the report wants to see it."""
    raw = spec.raw
    for key in DISPLAY_KEYS:
        value = raw.get(key)
        if value is not None:
            return value
    return None


DISPLAY_KEYS = ("value", "pattern", "values", "reference", "fn")  # the first one set is shown


def layer_of(spec: AssertionSpec) -> Layer:
    """An explicit `layer:` wins; a set whose leaves all share a layer takes it, mixed → fact."""
    return _layer(spec, None if spec.type == SET_TYPE else registry.get(spec.type))


def _layer(spec: AssertionSpec, kind: registry.AssertionType | None) -> Layer:
    if spec.layer is not None:
        return spec.layer
    if spec.type == SET_TYPE:
        return _set_layer({layer_of(child) for child in spec.children})
    return kind.layer if kind else Layer.FACT


def _set_layer(layers: set[Layer]) -> Layer:
    return layers.pop() if len(layers) == 1 else Layer.FACT


async def evaluate(specs: Sequence[AssertionSpec], ctx: CheckContext) -> list[AssertionResult]:
    """The results in the specs' order. A plain check whose function returns its outcome at once
    (most types) is called here directly, with no coroutine made for it, and so is an assert-set's
    own verdict (its children are checked by this same loop)."""
    results = []
    revision = registry.revision()
    for spec in specs:
        plan = spec.plan
        # still what `spec` is (a plan set on content that changed since, or a type registered again, is made anew)
        if plan is None or not (
            plan.raw is spec.raw and plan.compiled is spec.compiled and plan.type == spec.type and plan.revision == revision
        ):
            if not spec.reused:  # no other sample has it: checked once a run, no plan is kept for it
                kind = None if spec.type == SET_TYPE else registry.get(spec.type)
                if kind is None or kind.kind == "judge":
                    results.append(await evaluate_one(spec, ctx))
                    continue
                outcome = _call(kind, spec, ctx)
                if type(outcome) is not Outcome:
                    outcome = await _finish(spec, outcome)
                layer = spec.layer
                results.append(_result(spec, kind, outcome, (), kind.layer if layer is None else layer))
                continue
            plan = spec.plan = Plan.of(spec)
        if plan.direct:
            try:
                outcome = plan.check(spec, ctx)
            except Exception as exc:  # a bug or bad data in one check fails that check alone
                outcome = _crashed(spec, exc)
            if type(outcome) is not Outcome:
                outcome = await _finish(spec, outcome)
            if outcome is not plan.last:  # else: the same outcome as this plan's last, and so its record
                made = _MADE.get((id(plan), id(outcome)))
                plan.last, plan.made = outcome, made[1] if made is not None else plan.result(outcome)
            results.append(plan.made)
        elif plan.kind is None and plan.type == SET_TYPE:
            children = tuple(await evaluate(spec.children, ctx))
            last = plan.last  # a set's verdict and record follow from its children's records alone
            if last is None or len(last) != len(children) or not all(map(is_, last, children)):
                plan.last, plan.made = children, plan.result(_set_outcome(spec, children), children)
            results.append(plan.made)
        else:
            results.append(await evaluate_one(spec, ctx, plan))
    return results


async def evaluate_one(spec: AssertionSpec, ctx: CheckContext, plan: Plan | None = None) -> AssertionResult:
    if plan is None:
        plan = Plan.of(spec)
    kind = plan.kind
    children: tuple[AssertionResult, ...] = ()
    layer = plan.layer
    if spec.type == SET_TYPE:
        children = tuple(await evaluate(spec.children, ctx))
        outcome = _set_outcome(spec, children)
    elif kind is None:  # the loader rejects unknown types; this guards direct API use
        outcome = Outcome(False, message=f"unsupported assertion type: {spec.type!r}", error=True)
    elif kind.kind == "judge" and ctx.judge is None and not (kind.decides_alone and kind.decides_alone(spec, ctx)):
        outcome = Outcome(False, message=f"skipped: {ctx.no_judge}", skipped=True)
    else:
        outcome = await _check(kind, spec, ctx)
    return plan.result(outcome, children, layer)


class Plan(msgspec.Struct, gc=False):
    """What checking one assertion needs besides the output, made once for every sample that
    shares the assertion's content: its type's entry, its layer and the value a report shows.
    A check whose verdict and words repeat (most of them, on most outputs) returns the same
    `Outcome` object each time, and its result is then the same record, made once (`result`):
    records are frozen, so one serves every sample that has it. Not tracked by the garbage
    collector (a large run keeps one per shared assertion, and nothing it holds refers back to it).

    Made with `Plan.of(spec)`."""

    raw: dict[str, Any]
    type: str
    compiled: Any
    revision: int
    weight: float
    negate: bool
    kind: registry.AssertionType | None
    check: Any
    direct: bool
    layer: Layer | None  # an explicit `layer:`, else the type's; a set without one takes its children's (None here)
    value: object
    # The last outcome checked (a set: its children's records) and its record: a verdict often
    # repeats from one sample to the next, and is then found here without a look-up.
    last: Any = None
    made: Any = None

    @classmethod
    def of(cls, spec: AssertionSpec) -> Plan:
        kind = None if spec.type == SET_TYPE else registry.get(spec.type)
        return cls(
            raw=spec.raw,
            type=spec.type,
            compiled=spec.compiled,
            revision=registry.revision(),  # read after `get`, which may load the types
            weight=spec.weight,
            negate=spec.negate,
            kind=kind,
            check=kind.check if kind is not None else None,
            direct=kind is not None and kind.kind != "judge",
            layer=spec.layer or (None if spec.type == SET_TYPE else _layer(spec, kind)),
            value=display_value(spec),
        )

    def result(self, outcome: Outcome, children: tuple[AssertionResult, ...] = (), layer: Layer | None = None) -> AssertionResult:
        """The record of `outcome`, made once for the same outcome (and, for a set, the same
        children, from which its layer follows when it has none of its own)."""
        key = (id(self), id(outcome), *map(id, children)) if children else (id(self), id(outcome))
        made = _MADE.get(key)
        if made is not None:
            return made[1]
        if layer is None:
            layer = self.layer
            if layer is None:  # a set without a `layer:` of its own: its children's, as `layer_of` finds them
                layer = _set_layer({c.layer for c in children}) if children else Layer.FACT
        result = _record(self.type, self.weight, self.negate, self.value, self.kind, outcome, children, layer)
        if len(_MADE) >= MADE_KEPT:
            _MADE.clear()
        _MADE[key] = ((self, outcome, children), result)  # held here, so their ids are no other's while kept
        return result


# The records made lately, by (plan, outcome, children): few verdicts repeat on most samples, the
# rest (numbers, quotes) rarely, so a bounded number is kept for all plans together.
_MADE: dict[tuple[int, ...], tuple[tuple[Plan, Outcome, tuple[AssertionResult, ...]], AssertionResult]] = {}
MADE_KEPT = 256


def _result(
    spec: AssertionSpec, kind: registry.AssertionType | None, outcome: Outcome, children: tuple[AssertionResult, ...], layer: Layer
) -> AssertionResult:
    return _record(spec.type, spec.weight, spec.negate, display_value(spec), kind, outcome, children, layer)


def _record(
    type_: str,
    weight: float,
    negate: bool,
    value: object,
    kind: registry.AssertionType | None,
    outcome: Outcome,
    children: tuple[AssertionResult, ...],
    layer: Layer,
) -> AssertionResult:
    """The assertion's result from its outcome: `not` inverts a verdict, never an error (a check that
    could not run fails either way), and mirrors a 1-5 score."""
    if outcome.skipped:
        status, score, metric = _SKIPPED, None, None
    else:
        passed = False if outcome.error else outcome.passed != negate
        status, score, metric = (_PASSED if passed else _FAILED), outcome.score, outcome.metric
        if negate and score is not None:
            score = round(6 - score, 2)
    return AssertionResult(
        type=type_,
        layer=layer,
        status=status,
        weight=weight,
        negate=negate,
        metric=metric,
        score=score,
        message=outcome.message,
        children=children,
        value=value,
        error=bool(outcome.error) and kind is not None and not outcome.skipped,
    )


async def _check(kind: registry.AssertionType, spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    outcome = _call(kind, spec, ctx)
    return outcome if type(outcome) is Outcome else await _finish(spec, outcome)


def _call(kind: registry.AssertionType, spec: AssertionSpec, ctx: CheckContext) -> Any:
    """The check's outcome, or the awaitable an async check returns."""
    try:
        return kind.check(spec, ctx)
    except Exception as exc:  # a bug or bad data in one check fails that check alone
        return _crashed(spec, exc)


async def _finish(spec: AssertionSpec, outcome: Any) -> Outcome:
    if not inspect.isawaitable(outcome):
        return outcome
    try:
        return await outcome
    except Exception as exc:  # a bug or bad data in one check fails that check alone
        return _crashed(spec, exc)


def _crashed(spec: AssertionSpec, exc: Exception) -> Outcome:
    return Outcome(False, message=f"{spec.type} error: {type(exc).__name__}: {exc}", error=True)


def _set_outcome(spec: AssertionSpec, children: tuple[AssertionResult, ...]) -> Outcome:
    verdicts = [c.status is _PASSED for c in children if c.status is not _SKIPPED]
    mode = spec.raw.get("mode", "all")
    if not verdicts:
        return Outcome(False, message="assert-set has no evaluated children")
    raw = any(verdicts) if mode == "any" else all(verdicts)
    if spec.negate and raw:  # `not` fails because of what matched: say which child, on what text
        passed_count = sum(verdicts)
        message = f"{passed_count}/{len(verdicts)} children passed (mode {mode})"
        matched = [f"children[{i}] {c.type}: {c.message}" for i, c in enumerate(children) if c.status is Status.PASSED]
        more = f"; and {len(matched) - MATCHES_SHOWN} more" if len(matched) > MATCHES_SHOWN else ""
        message += f"; under not, it fails on {'; '.join(matched[:MATCHES_SHOWN])}{more}"
        return Outcome(raw, metric=passed_count / len(verdicts), message=message)
    return _counted(raw, sum(verdicts), len(verdicts), mode)


@lru_cache(maxsize=256)
def _counted(raw: bool, passed: int, graded: int, mode: str) -> Outcome:
    """A set's outcome from its children's count: one object for each count (its record is then
    made once, omk.assertions.evaluate's `Plan`)."""
    return Outcome(raw, metric=passed / graded, message=f"{passed}/{graded} children passed (mode {mode})")


MATCHES_SHOWN = 3  # the children named in a failed `not` set's message
