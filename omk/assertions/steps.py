"""Step matchers: which tool calls a trajectory assertion means.

A step is a tool name (`Read`, or an alias such as `read_file`; names compare as `omk.domain.toolnames`
says) or `{tool: NAME, input: {...}}`, whose `input` is matched against the call's input:

* a string is a glob (`*`, `?`, `[abc]`; case-sensitive) on a string value; a number or a
  boolean in the call compares as its text;
* `{pattern: ..., flags: ...}` (an object with just those keys) is a regular expression, searched
  in the value as the `regex` type does (JS-style flags, default "i");
* any other object is a subset: each of its keys must be in the call's object and match there;
* a list matches a list of the same length, item by item; a number, boolean or null is equal.

`tool_sequence`, `tools_called` and `tools_only` share these matchers. Regular expressions are
compiled at load (`prepare_steps`), so a bad one is a load error naming the step.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import msgspec

from omk.assertions.registry import PrepareError
from omk.assertions.text import CompiledRegex, compile_regex, js_text
from omk.domain.toolnames import canonical_tool, tool_key
from omk.records import ToolCall

NAME: dict[str, Any] = {"type": "string", "minLength": 1}
# A name or a `{tool, input}` object; one schema for both (minLength constrains strings only,
# the object keywords objects only), so a mistake gets a plain message.
STEP: dict[str, Any] = {
    "type": ["string", "object"],
    "minLength": 1,
    "required": ["tool"],
    "properties": {"tool": NAME, "input": {"type": "object"}},
    "additionalProperties": False,
}
STEPS: dict[str, Any] = {"type": "array", "minItems": 1, "items": STEP}
REGEX_KEYS = {"pattern", "flags"}
REGEX_TIMEOUT_S = 2.0  # a pattern that backtracks longer on one value makes the check an error
SHOWN_INPUT = 60  # characters of a call's input shown beside its name in a message


class Step(msgspec.Struct, frozen=True, gc=False):
    """One step: the tool it names and, when given, what its input must match (regexes compiled)."""

    tool: str
    input: Any = None  # the `input` as written, with each `{pattern, flags}` replaced by a CompiledRegex

    def matches(self, call: ToolCall) -> bool:
        if tool_key(call.tool) != tool_key(self.tool):
            return False
        return self.input is None or value_matches(self.input, _input_object(call.input))

    def label(self) -> str:
        if self.input is None:
            return canonical_tool(self.tool)
        return f"{canonical_tool(self.tool)} {_clip(json.dumps(_shown(self.input), ensure_ascii=False, separators=(',', ':')))}"


def _input_object(value: Any) -> Any:
    """A call's input; a JSON object given as text (some runtimes send arguments so) is parsed."""
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _is_regex(value: Any) -> bool:
    return isinstance(value, dict) and "pattern" in value and set(value) <= REGEX_KEYS


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether `actual` (from a call's input) matches `expected` (prepared, see the module)."""
    if isinstance(expected, CompiledRegex | str):
        if isinstance(actual, bool | int | float):
            actual = js_text(actual)
        if not isinstance(actual, str):
            return False
        if isinstance(expected, str):
            return fnmatch.fnmatchcase(actual, expected)
        return expected.pattern.search(actual, timeout=REGEX_TIMEOUT_S) is not None
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and value_matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(map(value_matches, expected, actual))
    if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
        return type(expected) is type(actual) and expected == actual
    return isinstance(actual, int | float) and expected == actual


def _prepare_value(value: Any, where: str) -> Any:
    if _is_regex(value):
        pattern, flags = value.get("pattern"), value.get("flags")
        if not isinstance(pattern, str) or not pattern or (flags is not None and not isinstance(flags, str)):
            raise PrepareError("steps", f"{where}: a regex is {{pattern: TEXT, flags: TEXT}}")
        try:
            return compile_regex(pattern, flags or "i")
        except PrepareError as exc:
            raise PrepareError("steps", f"{where}: {exc}") from None
    if isinstance(value, dict):
        return {k: _prepare_value(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_prepare_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def parse_steps(items: Any, field: str = "steps") -> tuple[Step, ...]:
    """The steps of a `steps:` (or `values:`) list; PrepareError for a bad regex inside one."""
    steps = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, str):
            steps.append(Step(item))
        elif isinstance(item, dict) and isinstance(item.get("tool"), str):
            given = item.get("input")
            try:
                steps.append(Step(item["tool"], None if given is None else _prepare_value(given, f"{field}[{i}].input")))
            except PrepareError as exc:
                raise PrepareError(field, str(exc)) from None
    return tuple(steps)


def _shown(value: Any) -> Any:
    """A prepared input as written again (a regex back to `/pattern/flags`), for messages."""
    if isinstance(value, CompiledRegex):
        return f"/{value.pattern.pattern}/{value.flags}"
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return value


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_INPUT else text[: SHOWN_INPUT - 1] + "…"


def call_label(call: ToolCall) -> str:
    """A call as a message shows it: its canonical name and the start of its input."""
    value = call.input
    if value is None or value == {} or value == "":
        return canonical_tool(call.tool)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return f"{canonical_tool(call.tool)} {_clip(text)}"
