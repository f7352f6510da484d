"""Big Sky Agents evaluators: `match_tool_call` (`chat:matchToolCall`) and `include_context`
(`chat:includeContext`), with Big Sky's exact semantics.

`match_tool_call` looks only at the first tool call: the name must equal `tool` (case-sensitive;
no `tool` means any name) and the arguments must deep-equal `arguments` (default `{}`):

* primitives compare strictly (`1` is not `"1"`, `true` is not `1`); objects need the same keys;
* arrays need the same length and are compared after JavaScript's default sort (by string form),
  so arrays of scalars are order-insensitive while arrays of objects keep their order;
* an expected key whose value is the string `"IGNORE"` is dropped from both sides first, at any
  depth (an `"IGNORE"` that is an array element is compared as a string, as in Big Sky).

With no expected call, an agent that calls nothing passes, and so does one whose first call has
empty arguments (the name check passes when no name is expected). Calls after the first are
ignored, unless `calls: any`, `threshold` or `max` is given: then every call is checked by the
same rules and the matching ones are counted (at least `threshold`, default 1; at most `max`).
omk's own `tool_sequence`, `tools_called` and `tool_input_contains` cover the other questions.
"""

from __future__ import annotations

import json
from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.registry import assertion
from omk.assertions.text import js_text
from omk.core.dotpath import lookup  # the same reading as a target's {{ placeholders }}
from omk.samples.model import AssertionSpec, Layer, Outcome

IGNORE = "IGNORE"


def js_string(value: Any) -> str:
    """JavaScript's String(value) for JSON values (what Array.prototype.sort compares)."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return js_text(value)


def _js_sort_key(value: Any) -> bytes:
    # JS compares the strings by UTF-16 code units, which big-endian UTF-16 bytes order the same way
    return js_string(value).encode("utf-16-be", "surrogatepass")


def deep_equal(a: Any, b: Any) -> bool:
    """Big Sky's deepEqual on JSON values."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        return all(deep_equal(x, y) for x, y in zip(sorted(a, key=_js_sort_key), sorted(b, key=_js_sort_key), strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and deep_equal(v, b[k]) for k, v in a.items())
    return False  # an array against an object, and the like


def drop_ignored(expected: Any, actual: Any) -> tuple[Any, Any]:
    """Copies of both sides without the keys whose expected value is "IGNORE", at any depth."""
    if isinstance(expected, dict):
        exp_out: dict[str, Any] = {}
        act_out = dict(actual) if isinstance(actual, dict) else actual
        for key, value in expected.items():
            if value == IGNORE:
                if isinstance(act_out, dict):
                    act_out.pop(key, None)
                continue
            sub_actual = act_out.get(key) if isinstance(act_out, dict) else None
            new_exp, new_act = drop_ignored(value, sub_actual)
            exp_out[key] = new_exp
            if isinstance(act_out, dict) and key in act_out:
                act_out[key] = new_act
        return exp_out, act_out
    if isinstance(expected, list):
        act_list = list(actual) if isinstance(actual, list) else actual
        exp_list = []
        for i, value in enumerate(expected):
            sub_actual = act_list[i] if isinstance(act_list, list) and i < len(act_list) else None
            new_exp, new_act = drop_ignored(value, sub_actual)
            exp_list.append(new_exp)
            if isinstance(act_list, list) and i < len(act_list):
                act_list[i] = new_act
        return exp_list, act_list
    return expected, actual


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= 120 else text[:119] + "…"


@assertion(
    "match_tool_call",
    layer=Layer.FACT,
    schema={
        "properties": {
            "tool": {"type": "string"},
            "arguments": {"type": "object"},
            "calls": {"enum": ["first", "any"]},
            "threshold": {"type": "integer", "minimum": 0},
            "max": {"type": "integer", "minimum": 0},
        }
    },
)
def match_tool_call(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The first tool call (any call with `calls: any`, `threshold` or `max`) is `tool` with arguments deep-equal to `arguments`."""
    if spec.get("calls") == "any" or spec.get("threshold") is not None or spec.get("max") is not None:
        return _count_matches(spec, ctx)
    expected_name = spec.get("tool") or ""
    expected_args = spec.get("arguments") or {}
    first = ctx.trace.tool_calls[0] if ctx.trace.tool_calls else None
    actual_name = first.tool if first else None
    actual_args: Any = first.input if first is not None and first.input is not None else {}
    if isinstance(actual_args, str):
        try:
            actual_args = json.loads(actual_args) if actual_args.strip() else {}
        except ValueError:
            return Outcome(False, message=f"first tool call {actual_name}: arguments are not JSON: {actual_args[:80]!r}")
    name_ok = not expected_name or actual_name == expected_name
    exp, act = drop_ignored(expected_args, actual_args)
    args_ok = deep_equal(exp, act)
    if name_ok and args_ok:
        what = f"{actual_name}({_short(actual_args)})" if first else "no tool call"
        return Outcome(True, metric=1.0, message=f"first call matches: {what}")
    if first is None:
        return Outcome(False, metric=0.0, message=f"expected a call of {expected_name or 'a tool'}({_short(exp)}), got no tool call")
    if not name_ok:
        return Outcome(False, metric=0.0, message=f"first call is {actual_name}, expected {expected_name}")
    return Outcome(
        False, metric=0.0, message=f"first call {actual_name}: arguments {_short(act)} differ from expected {_short(exp)}"
    )


def _call_matches(name: str, args: Any, call: Any) -> bool:
    """One call against `tool` / `arguments` by the same rules as the first-call check."""
    actual: Any = call.input if call.input is not None else {}
    if isinstance(actual, str):
        try:
            actual = json.loads(actual) if actual.strip() else {}
        except ValueError:
            return False
    exp, act = drop_ignored(args, actual)
    return (not name or call.tool == name) and deep_equal(exp, act)


def _count_matches(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Any call, counted: at least `threshold` (default 1) and at most `max` calls match."""
    name, args = spec.get("tool") or "", spec.get("arguments") or {}
    least, most = spec.get("threshold", 1), spec.get("max")
    count = sum(_call_matches(name, args, c) for c in ctx.trace.tool_calls)
    what = f"{name or 'a tool'}({_short(args)})"
    ok = count >= least and (most is None or count <= most)
    bounds = f">= {least}" + (f" and <= {most}" if most is not None else "")
    verdict = "" if ok else "not "
    return Outcome(ok, metric=count, message=f"{count} of {len(ctx.trace.tool_calls)} call(s) match {what}: {verdict}{bounds}")


# --- include_context ----------------------------------------------------------------------------


def _falsy(value: Any) -> bool:
    """JavaScript falsiness for JSON values: null, false, 0, ""."""
    return value is None or value is False or value == "" or (isinstance(value, int | float) and not isinstance(value, bool) and value == 0)


@assertion(
    "include_context",
    layer=Layer.FACT,
    schema={
        "required": ["path"],
        "properties": {"path": {"type": "string", "minLength": 1}, "context": {"type": "object"}},
    },
)
def include_context(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output contains the value at dot-path `path` of the context (case-sensitive)."""
    path = spec.get("path")
    context = spec.get("context")
    if context is None:
        context = ctx.sample.variables or {}
    value = lookup(context, path)
    if _falsy(value):
        return Outcome(False, message=f"context {path} is missing or empty")
    needle = js_string(value)
    ok = needle in ctx.output
    return Outcome(ok, message=f"output {'contains' if ok else 'does not contain'} context {path} = {needle[:80]!r}")


# --- compare_content (judge) --------------------------------------------------------------------


def empty_texts(spec: AssertionSpec, ctx: CheckContext) -> Outcome | None:
    """Big Sky's verdict when a text is empty, which needs no judge: both empty → similar, one
    empty → different. None when both have text (the judge decides)."""
    expected, actual = spec.get("reference") or "", ctx.output or ""
    if expected and actual:
        return None
    same = not expected and not actual
    why = "both texts are empty" if same else ("the output is empty" if not actual else "the expected text is empty")
    return Outcome(same, metric=float(same), message=f"{'similar' if same else 'different'}: {why} (no judge call made)")


@assertion(
    "compare_content",
    layer=Layer.FACT,
    kind="judge",
    schema={"required": ["reference"], "properties": {"reference": {"type": "string"}}},
    decides_alone=lambda spec, ctx: empty_texts(spec, ctx) is not None,
)
async def compare_content(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge finds the output similar to `reference`; both empty passes, one empty fails."""
    decided = empty_texts(spec, ctx)
    return decided if decided is not None else await ctx.require_judge().check_assertion(spec, ctx)
