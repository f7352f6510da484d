"""Reading and writing omk's own JSON files through msgspec: a record is a `msgspec.Struct`,
written with `msgspec.json.encode` and read with `msgspec.json.decode(type=...)`, which checks
every field's type in C as it parses.

A wrong field is the one-line `InputError` omk has always printed, naming the file and the field:
`run/report.json: results[3].scores.fact: expected a number or null, found "high"`. msgspec says
where with a path (`$.results[3].scores.fact`) and what with type names (`float | null`); `located`
turns that into omk's words, and shows the value found when the path leads to it (an object's
member under a key of a mapping is `[...]` in msgspec's path: there the kind of value is shown).
"""

from __future__ import annotations

import json
import re
from typing import Any, Self, TypeVar

import msgspec

from omk.core.errors import InputError
from omk.records.fields import Fields

T = TypeVar("T")

_WORDS = {
    "float": "a number",
    "int": "an integer",
    "str": "a string",
    "bool": "true, false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_FOUND = {
    "str": "a string",
    "object": "an object",
    "array": "a list",
    "bool": "a boolean",
    "null": "NoneType",
}
_MESSAGE = re.compile(r"(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_EXPECTED = re.compile(r"Expected `(?P<expected>[^`]*)`, got `(?P<found>[^`]*)`")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def decode(raw: bytes | str, kind: type[T], origin: str, hint: str = "") -> T:
    """`raw` (JSON text omk wrote) read as `kind`; a wrong field or bad JSON is an InputError
    naming `origin` and the field (`hint` is added to a wrong field's message)."""
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        raise located(exc, origin, lambda: msgspec.json.decode(raw), hint) from None
    except msgspec.DecodeError as exc:
        raise InputError(f"{origin}: not valid JSON: {exc}") from None


def parsed(raw: bytes | str) -> Any:
    """JSON text as plain values, as `json.loads` gives them, parsed by msgspec (several times
    faster: a run reads every result line back). Text msgspec refuses (`NaN`, a number past a
    float's range, a lone surrogate) is parsed by `json`, which reads or refuses it as before."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return json.loads(raw)


def convert(data: Any, kind: type[T], origin: str, at: str = "", hint: str = "") -> T:
    """`data` (JSON values already parsed, found at `at` of `origin`) read as `kind`, as `decode` reads."""
    try:
        return msgspec.convert(data, type=kind)
    except msgspec.ValidationError as exc:
        raise located(exc, origin, lambda: data, hint, at) from None


def located(exc: msgspec.ValidationError, origin: str, data: Any, hint: str = "", at: str = "") -> InputError:
    """msgspec's error as omk's one line: `origin: field.path: expected …, found …`. `data` gives
    the parsed document (called only here, on the error), to show the value found."""
    match = _MESSAGE.match(str(exc))
    what, path = (match["what"], match["path"] or "") if match else (str(exc), "")
    where = _joined(at, path.lstrip("."))
    expected = _EXPECTED.match(what)
    if expected is None:  # a missing field, a value its record refused: msgspec's own words
        text = what[:1].lower() + what[1:]
    else:
        text = f"expected {_expected(expected['expected'])}, found {_found(data, path, expected['found'])}"
    return InputError(f"{origin}: {where or '(top)'}: {text}{hint}")


def _joined(at: str, path: str) -> str:
    if not at or not path:
        return at or path
    return at + path if path.startswith("[") else f"{at}.{path}"


def _expected(types: str) -> str:
    kinds = [t.strip() for t in types.split("|")]
    if "int" in kinds and "float" in kinds:  # a number kept as written: an integer stays one
        kinds.remove("int")
    names = [_WORDS.get(t, t) for t in kinds]
    if names == ["true, false"]:
        return "true or false"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _found(data: Any, path: str, kind: str) -> str:
    """The value at `path` as an error shows it (a string's start, else its kind)."""
    try:
        value = data()
    except (msgspec.DecodeError, RecursionError):
        return _FOUND.get(kind, kind)
    for key, index in _STEP.findall(path):
        if index == "...":
            return _FOUND.get(kind, kind)
        try:
            value = value[int(index)] if index else value[key]
        except (KeyError, IndexError, TypeError):
            return _FOUND.get(kind, kind)
    if isinstance(value, str):
        return repr(value[:40])
    return {dict: "an object", list: "a list", bool: "a boolean"}.get(type(value), type(value).__name__)


class JsonRecord(msgspec.Struct, frozen=True):
    """A record of report.json or a run folder's files on msgspec: its fields, in the order they
    are written, are the JSON object (`to_json` gives it as plain JSON values, for the writer that
    puts the whole file together; numbers stay as they are, so the text is as before), and
    `from_json` reads one back with every field's type checked."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _lists(msgspec.to_builtins(self))
        return data

    @classmethod
    def from_json(cls, f: Fields | None) -> Self | None:
        """The record in `f` (an object of a report being read); None when the report has none."""
        if f is None:
            return None
        return convert(f.data, cls, f.origin, f.path, "; was report.json edited by hand?")


def _lists(value: Any) -> Any:
    """`value` with its tuples as lists (what `json.loads` gives back: a record's several items
    are a tuple, and `msgspec.to_builtins` keeps them one)."""
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    return value
