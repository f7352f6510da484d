"""Agent assertions over the trace: cost, latency, turns, tool calls, tool content, mocks.

Missing trace data follows omk 0.54: no cost/latency/turns fails the `*_max` checks,
`turns_min` treats missing turns as 0, and missing tool calls are an empty list.
"""

from __future__ import annotations

import json
from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.registry import NON_NEGATIVE, STRINGS, TOOL_NEEDLE, assertion
from omk.assertions.steps import STEPS, Step, parse_steps
from omk.assertions.text import js_text, low
from omk.domain.toolnames import same_tool, tool_key
from omk.records import ToolCall
from omk.samples.model import AssertionSpec, Layer, Outcome

_LIMIT = {"required": ["value"], "properties": {"value": NON_NEGATIVE}}
_TOOLS = {"required": ["values"], "properties": {"values": STRINGS}}
_STEPS = {"required": ["values"], "properties": {"values": STEPS}}
_NEEDLE = {"required": ["value"], "properties": {"value": TOOL_NEEDLE}}
MOCK_KEY: dict[str, Any] = {"type": "string", "pattern": "^[^:]+:[1-9][0-9]*$"}  # "Tool:N"


def compact_json(value: Any) -> str:
    """JS JSON.stringify: compact, non-ASCII kept as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _limit(what: str, actual: float | None, limit: float, unit: str = "") -> Outcome:
    if actual is None:
        return Outcome(False, message=f"trace has no {what}")
    ok = actual <= limit
    sign = "<=" if ok else ">"
    return Outcome(
        ok, metric=actual, message=f"{what} {js_text(actual)}{unit} {sign} max {js_text(limit)}{unit}"
    )


@assertion("cost_max", layer=Layer.BEHAVIOR, schema=_LIMIT)
def cost_max(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The target's reported cost in USD is at most `value`; no reported cost fails."""
    return _limit("cost_usd", ctx.trace.cost_usd, spec.get("value"))


@assertion("latency_max", layer=Layer.BEHAVIOR, schema=_LIMIT)
def latency_max(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The target's latency is at most `value` milliseconds; no reported latency fails."""
    return _limit("latency_ms", ctx.trace.latency_ms, spec.get("value"))


@assertion("turns_max", layer=Layer.BEHAVIOR, schema=_LIMIT)
def turns_max(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The agent took at most `value` turns; no reported turn count fails."""
    return _limit("turns", ctx.trace.turns, spec.get("value"))


@assertion("turns_min", layer=Layer.BEHAVIOR, schema=_LIMIT)
def turns_min(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The agent took at least `value` turns; no reported turn count counts as 0."""
    turns = ctx.trace.turns or 0
    limit = spec.get("value")
    ok = turns >= limit
    return Outcome(ok, metric=turns, message=f"turns {turns} {'>=' if ok else '<'} min {js_text(limit)}")


# --- which tools were called ------------------------------------------------------------------


def _called(ctx: CheckContext) -> set[str]:
    return {tool_key(call.tool) for call in ctx.trace.tool_calls}


def _names(values: list[str]) -> str:
    return ", ".join(values)


def prepare_values(spec: AssertionSpec) -> tuple[Step, ...]:
    return parse_steps(spec.get("values"), "values")


def _step_values(spec: AssertionSpec) -> tuple[Step, ...]:
    return spec.compiled if isinstance(spec.compiled, tuple) else prepare_values(spec)


@assertion("tools_called", layer=Layer.BEHAVIOR, schema=_STEPS, prepare=prepare_values)
def tools_called(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Every tool in `values` was called at least once (names or step matchers, aliases allowed)."""
    steps = _step_values(spec)
    calls = ctx.trace.tool_calls
    missing = [s.label() for s in steps if not any(s.matches(c) for c in calls)]
    if missing:
        return Outcome(False, message=f"not called: {_names(missing)}")
    return Outcome(True, message=f"called: {_names([s.label() for s in steps])}")


@assertion("tools_not_called", layer=Layer.BEHAVIOR, schema=_TOOLS)
def tools_not_called(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """None of the tools in `values` was called."""
    values = spec.get("values") or []
    called = _called(ctx)
    hit = [v for v in values if tool_key(v) in called]
    if hit:
        return Outcome(False, message=f"called: {_names(hit)}")
    return Outcome(True, message=f"not called: {_names(values)}")


@assertion("tools_only", layer=Layer.BEHAVIOR, schema=_STEPS, prepare=prepare_values)
def tools_only(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Every tool call matches one of `values` (names or step matchers; no call at all passes)."""
    steps = _step_values(spec)
    shown = _names([s.label() for s in steps])
    other = sorted({call.tool for call in ctx.trace.tool_calls if not any(s.matches(call) for s in steps)})
    if other:
        return Outcome(False, message=f"called outside the allowed tools ({shown}): {_names(other)}")
    return Outcome(True, message=f"only allowed tools called ({shown})")


def _count(ctx: CheckContext, limit: float, at_least: bool) -> Outcome:
    count = len(ctx.trace.tool_calls)
    ok = count >= limit if at_least else count <= limit
    if at_least:
        message = f"tool calls {count} {'>=' if ok else '<'} min {js_text(limit)}"
    else:
        message = f"tool calls {count} {'<=' if ok else '>'} max {js_text(limit)}"
    return Outcome(ok, metric=count, message=message)


@assertion("tools_count_max", layer=Layer.BEHAVIOR, schema=_LIMIT)
def tools_count_max(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """At most `value` tool calls were made (every call counts, failed ones and repeats too)."""
    return _count(ctx, spec.get("value"), at_least=False)


@assertion("tools_count_min", layer=Layer.BEHAVIOR, schema=_LIMIT)
def tools_count_min(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """At least `value` tool calls were made."""
    return _count(ctx, spec.get("value"), at_least=True)


# --- what went into and came out of the tools -------------------------------------------------


def split_needle(value: str) -> tuple[str, str] | None:
    """`"Tool:needle"` split at the first colon; None when there is no tool name."""
    tool, sep, needle = value.partition(":")
    return (tool, needle) if sep and tool else None


def output_text(call: ToolCall) -> str:
    """A tool's output as text; an object is its compact JSON (not `[object Object]`)."""
    out = call.output
    if out is None:
        return ""
    return out if isinstance(out, str) else compact_json(out)


def input_text(call: ToolCall) -> str:
    """JS `JSON.stringify(input || '')`: a string input is quoted, a missing one is `""`."""
    value = call.input
    if value is None or value is False or value == "" or (type(value) in (int, float) and value == 0):
        value = ""
    return compact_json(value)


def _search(ctx: CheckContext, value: str, text_of: Any) -> tuple[bool, int]:
    """(found, number of calls of that tool)."""
    parts = split_needle(value)
    if parts is None:
        return False, 0
    tool, needle = parts
    calls = [c for c in ctx.trace.tool_calls if same_tool(c.tool, tool)]
    return any(low(needle) in low(text_of(c)) for c in calls), len(calls)


def _content_outcome(value: str, found: bool, calls: int, where: str, negative: bool = False) -> Outcome:
    parts = split_needle(value)
    if parts is None:
        return Outcome(negative, message=f'value {value!r} is not "Tool:needle"')
    tool, needle = parts
    if not calls:
        return Outcome(negative, message=f"{tool} was not called")
    verb = "contains" if found else "does not contain"
    message = f'{where} of {tool} ({calls} call{"s" if calls > 1 else ""}) {verb} "{needle}"'
    if found:
        message = f'{where} of a {tool} call contains "{needle}"'
    return Outcome(found != negative, message=message)


@assertion("tool_output_contains", layer=Layer.FACT, schema=_NEEDLE)
def tool_output_contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Some call of Tool returned output containing the needle (`value: "Tool:needle"`)."""
    value = js_text(spec.get("value"))
    found, calls = _search(ctx, value, output_text)
    return _content_outcome(value, found, calls, "output")


@assertion("tool_input_contains", layer=Layer.FACT, schema=_NEEDLE)
def tool_input_contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Some call of Tool had compact-JSON input containing the needle (`value: "Tool:needle"`)."""
    value = js_text(spec.get("value"))
    found, calls = _search(ctx, value, input_text)
    return _content_outcome(value, found, calls, "input")


@assertion("tool_input_not_contains", layer=Layer.FACT, schema=_NEEDLE)
def tool_input_not_contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """No call of Tool had compact-JSON input containing the needle."""
    value = js_text(spec.get("value"))
    if split_needle(value) is None:  # 0.54: trivially satisfied
        return Outcome(True, message=f'value {value!r} is not "Tool:needle"')
    found, calls = _search(ctx, value, input_text)
    return _content_outcome(value, found, calls, "input", negative=True)


# --- mocks -----------------------------------------------------------------------------------


@assertion(
    "mock_hit",
    layer=Layer.BEHAVIOR,
    schema={"required": ["value"], "properties": {"value": MOCK_KEY, "threshold": NON_NEGATIVE}},
)
def mock_hit(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The mock `Tool:N` answered at least `threshold` (default 1) tool calls."""
    key = js_text(spec.get("value"))
    threshold = spec.get("threshold", 1)
    stats = ctx.trace.mock_stats
    if stats is None:
        return Outcome(False, message="trace has no mock_stats")
    hits = stats.per_mock.get(key)
    if hits is None:  # tolerate a differently cased tool name in the key
        hits = next((n for k, n in stats.per_mock.items() if low(k) == low(key)), 0)
    ok = hits >= threshold
    sign = ">=" if ok else "<"
    return Outcome(ok, metric=hits, message=f"mock {key} hit {hits} time(s) {sign} {js_text(threshold)}")
