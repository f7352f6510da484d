"""Reading and writing omk's own JSON files through msgspec: a record is a `msgspec.Struct`,
written with `msgspec.json.encode` and read with `msgspec.json.decode(type=...)`, which checks
every field's type in C as it parses.

A wrong field is the one-line `InputError` omk has always printed, naming the file and the field:
`run/report.json: results[3].scores.fact: expected a number or null, found "high"`. msgspec says
where with a path (`$.results[3].scores.fact`) and what with type names (`float | null`); `located`
turns that into omk's words, and shows the value found when the path leads to it (an object's
member under a key of a mapping is `[...]` in msgspec's path: there the kind of value is shown).
A missing field that has no default is named where it should be: `results[0].sample_id: missing`.

A reader may take a null as a missing field (`nulls=True`: the results and the report's own
records, whose readers always have): the typed read runs as it is, and only when it fails is the
text read again with every null member left out where its field has a default and no null in its
type (so `"passed": null` is `passed`'s default, and a wrong value's error says `or null`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Self, TypeVar

import msgspec
import msgspec.inspect as mi

from omk.core.errors import InputError

T = TypeVar("T")
Number = int | float  # a number kept as written: a `float` field would read 4 as 4.0
HINT = "; was report.json edited by hand?"  # what a wrong field's error in a run's own file adds

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
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def decode(raw: bytes | str, kind: type[T], origin: str, hint: str = "", at: str = "", nulls: bool = False) -> T:
    """`raw` (JSON text omk wrote, found at `at` of `origin`) read as `kind`; a wrong field or bad
    JSON is an InputError naming `origin` and the field (`hint` is added to a wrong field's
    message). `nulls`: a null is read as a missing field, where the field has a default."""
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        return _again(exc, kind, origin, lambda: msgspec.json.decode(raw), hint, at, nulls)
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


def convert(data: Any, kind: type[T], origin: str, at: str = "", hint: str = "", nulls: bool = False) -> T:
    """`data` (JSON values already parsed, found at `at` of `origin`) read as `kind`, as `decode` reads."""
    try:
        return msgspec.convert(data, type=kind)
    except msgspec.ValidationError as exc:
        return _again(exc, kind, origin, lambda: data, hint, at, nulls)


def _again(exc: msgspec.ValidationError, kind: type[T], origin: str, data: Any, hint: str, at: str, nulls: bool) -> T:
    """The record whose typed read failed: read again with its nulls left out (`nulls`), or the
    first error, located."""
    info = mi.type_info(kind) if nulls else None
    if info is not None:
        try:
            value = data()
        except (msgspec.DecodeError, RecursionError):
            value = None
        else:
            kept = _without_nulls(value, info)
            if kept is not value:
                try:
                    return msgspec.convert(kept, type=kind)
                except msgspec.ValidationError as again:
                    exc, data = again, lambda: kept
    raise located(exc, origin, data, hint, at, info) from None


def _without_nulls(value: Any, info: mi.Type) -> Any:
    """`value` with the null members left out where the field has a default and takes no null; the
    same object when there are none."""
    info = _member(info, value)
    if isinstance(info, mi.StructType) and isinstance(value, dict):
        fields = {f.encode_name: f for f in info.fields}
        out: dict[str, Any] = {}
        for key, item in value.items():
            field = fields.get(key)
            if field is None:
                out[key] = item
            elif item is not None:
                out[key] = _without_nulls(item, field.type)
            elif field.required or _takes_null(field.type):
                out[key] = item
        same = len(out) == len(value) and all(out[k] is v for k, v in value.items())
        return value if same else out
    if isinstance(info, mi.ListType | mi.VarTupleType) and isinstance(value, list):
        items = [_without_nulls(v, info.item_type) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(info, mi.DictType) and isinstance(value, dict):
        members = {k: _without_nulls(v, info.value_type) for k, v in value.items()}
        return value if all(members[k] is v for k, v in value.items()) else members
    return value


def _member(info: mi.Type, value: Any) -> mi.Type:
    """The member of a union that a value of this kind is read as (an object's, a list's)."""
    if not isinstance(info, mi.UnionType):
        return info
    wanted = (mi.StructType, mi.DictType) if isinstance(value, dict) else (mi.ListType, mi.VarTupleType)
    return next((t for t in info.types if isinstance(t, wanted)), info)


def _takes_null(info: mi.Type) -> bool:
    return isinstance(info, mi.NoneType | mi.AnyType) or (isinstance(info, mi.UnionType) and any(isinstance(t, mi.NoneType) for t in info.types))


def located(exc: msgspec.ValidationError, origin: str, data: Any, hint: str = "", at: str = "", info: mi.Type | None = None) -> InputError:
    """msgspec's error as omk's one line: `origin: field.path: expected …, found …`. `data` gives
    the parsed document (called only here, on the error), to show the value found; `info`, the
    type read when nulls are read as missing fields: a field with a default then takes null too,
    and a value outside a fixed set names the set."""
    match = _MESSAGE.match(str(exc))
    what, path = (match["what"], match["path"] or "") if match else (str(exc), "")
    where = joined(at, path.lstrip("."))
    field = _field_at(info, path) if info is not None else None
    expected = _EXPECTED.match(what)
    if expected is not None:
        nullable = field is not None and not field.required and not _takes_null(field.type)
        types = expected["expected"] + (" | null" if nullable else "")
        text = f"expected {_expected(types)}, found {_found(data, path, expected['found'])}"
    elif missing := _MISSING.match(what):  # named where it should be, as a wrong field is
        where, text = joined(where, missing["name"]), "missing"
    elif what.startswith("Invalid enum value") and field is not None and _choices(field.type):
        text = f"expected {' or '.join(map(repr, _choices(field.type)))}, found {_found(data, path, 'str')}"
    else:  # a value its record refused: msgspec's own words
        text = what[:1].lower() + what[1:]
    return InputError(f"{origin}: {where or '(top)'}: {text}{hint}")


def _field_at(info: mi.Type, path: str) -> mi.Field | None:
    """The field of a record that `path` (msgspec's, `.results[3].scores.fact`) ends at; None
    when it ends at a list's item or a mapping's value."""
    field = None
    for key, index in _STEP.findall(path):
        kind = _member(info, {} if key or index == "..." else [])
        field = None
        if key and isinstance(kind, mi.StructType):
            field = next((f for f in kind.fields if f.encode_name == key), None)
            if field is None:
                return None
            info = field.type
        elif index == "..." and isinstance(kind, mi.DictType):
            info = kind.value_type
        elif index and isinstance(kind, mi.ListType | mi.VarTupleType):
            info = kind.item_type
        else:
            return None
    return field


def _choices(info: mi.Type) -> tuple[Any, ...]:
    """The values a fixed set (a `Literal`, an enumeration) allows, as written."""
    for t in info.types if isinstance(info, mi.UnionType) else (info,):
        if isinstance(t, mi.LiteralType):
            return tuple(t.values)
        if isinstance(t, mi.EnumType):
            return tuple(m.value for m in t.cls)
    return ()


def joined(at: str, path: str) -> str:
    """`path` (`scores.fact`, `[3]`) under `at` (`results[3]`): where a field sits in its file."""
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
    return shown(value)


def shown(value: Any) -> str:
    """A value as an error shows what it found: a string's start, else its kind."""
    if isinstance(value, str):
        return repr(value[:40])
    return {dict: "an object", list: "a list", bool: "a boolean"}.get(type(value), type(value).__name__)


def plain(record: Any) -> Any:
    """`record` (a struct, or plain values holding some) as the plain JSON values `json.loads`
    gives back: its tuples as lists, numbers as they are; a value msgspec has no JSON for (a
    `Path` in what a Python target describes) as its `str`, as `json.dumps(default=str)` writes it."""
    return _lists(msgspec.to_builtins(record, enc_hook=str))


class JsonRecord(msgspec.Struct, frozen=True):
    """A record of report.json or a run folder's files on msgspec: its fields, in the order they
    are written, are the JSON object (`to_json` gives it as plain JSON values, for the writer that
    puts the whole file together; numbers stay as they are, so the text is as before), and
    `read` reads one back with every field's type checked."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data

    @classmethod
    def read(cls, data: Any, origin: str = "report", at: str = "") -> Self:
        """The record in `data`, found at `at` of `origin` (a block of a report being read)."""
        return convert(data, cls, origin, at, HINT, nulls=True)


def _lists(value: Any) -> Any:
    """`value` with its tuples as lists (what `json.loads` gives back: a record's several items
    are a tuple, and `msgspec.to_builtins` keeps them one)."""
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    return value
