"""Wording: JSON Schema errors and values turned into messages a person can act on.

jsonschema's own messages (`'x' is not one of ['easy', ...]`, `1 is not of type 'string'`) are
precise but read like a stack trace; these say what is wrong, what was found and, where a
near name exists, what was probably meant.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from omk.loader.document import Path_

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

TOOL_NEEDLE_PATTERN = "^[^:]+:"
MOCK_KEY_PATTERN = "^[^:]+:[1-9][0-9]*$"
_IDENTIFIER = re.compile(r"[\w-]+")

_TYPE_WORDS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


def field_label(path: Path_) -> str:
    """`("assertions", 2, "value")` → `assertions[2].value`."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _IDENTIFIER.fullmatch(step):
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step, ensure_ascii=False)}]"
    return out


def show(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it, short: `"extreme"`, `5`, `true`, `null`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 4] + '…"'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def kind_of(value: Any) -> str:
    """`string "x"`, `number 5`, `boolean true`, `null`, `a list`, `a mapping`."""
    if isinstance(value, bool):
        return f"boolean {show(value)}"
    if isinstance(value, int | float):
        return f"number {show(value)}"
    if isinstance(value, str):
        return f"string {show(value)}"
    return show(value)


def one_of(names: Iterable[str], conj: str = "or") -> str:
    quoted = [f'"{n}"' for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} {conj} {quoted[-1]}"


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    names = list(candidates)
    match = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    if not match and len(word) >= 3:  # `cli` for `cli_available`
        match = [n for n in names if n.lower().startswith(word.lower())][:2]
        match = match if len(match) == 1 else []
    return f' (did you mean "{match[0]}"?)' if match else ""


def unknown_type(name: Any, known: Iterable[str]) -> str:
    if not isinstance(name, str):
        return f'"type" must be a string naming an assertion type (got {kind_of(name)})'
    return f'unknown assertion type "{name}"{did_you_mean(name, known)}'


def _expected(types: Any) -> str:
    names = types if isinstance(types, list) else [types]
    return " or ".join(_TYPE_WORDS.get(n, str(n)) for n in names)


def _allowed_keys(schema: dict[str, Any]) -> list[str]:
    return list(schema.get("properties", {}))


def _extra_keys(error: ValidationError) -> list[str]:
    schema, instance = error.schema, error.instance
    allowed = set(_allowed_keys(schema))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [k for k in instance if k not in allowed and not any(p.search(k) for p in patterns)]


def translate(error: ValidationError, owner: str | None = None) -> list[tuple[Path_, str]]:
    """(path inside the validated value, message) for one jsonschema error.

    `owner` is the assertion type when an assertion is validated, for "... for type X" wording.
    """
    path: Path_ = tuple(error.absolute_path)
    keyword, expected, value = error.validator, error.validator_value, error.instance
    for_type = f' for type "{owner}"' if owner and len(path) == 0 else ""

    if keyword == "required":
        missing = [name for name in expected if isinstance(value, dict) and name not in value]
        return [(path, f'"{name}" is required{for_type}') for name in missing]
    if keyword == "additionalProperties" and isinstance(value, dict):
        allowed = _allowed_keys(error.schema)
        return [
            (path + (key,), f'unknown field "{key}"{for_type}{did_you_mean(key, allowed)}')
            for key in _extra_keys(error)
        ]
    if keyword == "type":
        hint = " (quote it to make it text)" if "string" in str(expected) and isinstance(value, int | float) else ""
        return [(path, f"must be {_expected(expected)} (got {kind_of(value)}){hint}")]
    if keyword == "enum":
        return [(path, f"must be one of {one_of(expected)} (got {show(value)})")]
    if keyword == "const":
        return [(path, f"must be {show(expected)} (got {show(value)})")]
    if keyword == "minLength":
        return [(path, "must not be empty" if expected == 1 else f"must be at least {expected} characters long")]
    if keyword == "maxLength":
        return [(path, f"must be at most {expected} characters long")]
    if keyword == "pattern":
        return [(path, _pattern_message(expected, value))]
    if keyword == "minItems":
        return [(path, "must not be empty" if expected == 1 else f"needs at least {expected} items")]
    if keyword == "minProperties":
        return [(path, "must not be empty")]
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sign = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[keyword]
        return [(path, f"must be {sign} {show(expected)} (got {show(value)})")]
    if keyword == "propertyNames":
        return [(path, f"names must not be empty (got {show(value)})")]
    if keyword in ("anyOf", "oneOf"):
        alternatives = [b.get("required") for b in expected if isinstance(b, dict)]
        names = [a[0] for a in alternatives if isinstance(a, list) and len(a) == 1]
        if alternatives and len(names) == len(alternatives):
            return [(path, f"needs {one_of(names)}{for_type}")]
        best = min(error.context or [], key=lambda e: len(e.absolute_path), default=None)
        if best is not None:
            return [(path + tuple(best.absolute_path), msg) for _, msg in translate(best, owner)]
    return [(path, error.message)]


def _pattern_message(pattern: str, value: Any) -> str:
    if pattern == r"\S":
        return "must not be empty or blank"
    if pattern == TOOL_NEEDLE_PATTERN:
        return f'must be "Tool:text": a tool name, a colon, then the text to look for (got {show(value)})'
    if pattern == MOCK_KEY_PATTERN:
        return f'must be a mock key "Tool:N" with a 1-based ordinal, e.g. "Read:1" (got {show(value)})'
    return f"must match the pattern {json.dumps(pattern)} (got {show(value)})"
