"""A JSON Lines record (or a JSON file's sample) read through a memo of the text of its parts.

Most lines of a large JSON Lines suite repeat the same parts word for word: the same
assertions, the same JSON Schema, the same capability list. msgspec's decoder (C) splits a line
into its fields, each with its own text (`msgspec.Raw`: the exact bytes, already checked to be
well-formed JSON), and a part whose text was read before in this load is the object read then:
it is neither parsed, nor checked for duplicate keys, nor keyed for sharing again. A mapping
read for the first time is split the same way, field by field (its keys checked as a line's
are, its parts read through the memo), and then shared by the `Sharer`'s content key, so
equal content written differently is still one object; a number, true, false or null is read
the careful way once per text of the load, and a list of plain values whole the careful way
(`json` with the duplicate-key hook, as `parse_record` reads a line, then the `Sharer`). What
a record becomes is thus exactly what `Sharer.sample(parse_record(line))` makes of it: the same
values, the same shared objects, the same key order.

`RecordMemo.record` answers None, and the loader reads the line the careful way, whenever the
line is not plainly a valid record: it is not one JSON object, an object in it repeats a key
(or may: see `_keys_once`), a number is out of range, a string holds a lone surrogate, it nests
more than `DEEP` containers deep. Every
message about a line therefore comes from the careful way, unchanged.

Equal text is equal content, so sharing by text never shares what the `Sharer` would keep apart
(`1` and `1.0`, key order). The memo is bounded: it starts over when the texts it keeps pass
`BUDGET` bytes or its entries the `Sharer`'s limit.

A JSON file of samples (`json_document`) is split the same way into its samples, each read as a
record; the file is read the careful way (`parse_json`) unless every sample is plainly valid and
the file holds nothing but its samples.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from omk.loader.document import Document, Path_
from omk.loader.json_lines import JsonLocator, QuietDecoder
from omk.loader.share import DEEP, LIMIT, Sharer

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_ITEMS = msgspec.json.Decoder(list[msgspec.Raw]).decode
_FILE = msgspec.json.Decoder(dict[str, msgspec.Raw] | list[msgspec.Raw]).decode
_STRING = msgspec.json.Decoder(str).decode
_QUOTE, _BRACE, _BRACKET = b'"{['
_GAP = re.compile(r"[ \t\r\n]*,?[ \t\r\n]*")  # between two items of a JSON list
_HEAD = re.compile(rb'[ \t\r\n]*\{[ \t\r\n]*"samples"[ \t\r\n]*:[ \t\r\n]*')  # before `{"samples": [`'s bracket
_TAIL = re.compile(rb"[ \t\r\n]*\}[ \t\r\n]*")  # after its list
_CONTAINERS = (_BRACE, _BRACKET)
BUDGET = 1 << 18  # bytes of part texts kept as keys (what a load holds at its peak: docs/benchmarks.md)
_MISSING = object()
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError)


class _Refused(Exception):
    """The line is not plainly valid: the careful way reads it."""


class RecordMemo:
    """One per load, next to (and feeding) the load's `Sharer`."""

    __slots__ = ("shared", "limit", "_parts", "_scalars", "_kept", "_decode", "_known")

    def __init__(self, shared: Sharer, limit: int = LIMIT):
        self.shared = shared
        self.limit = limit
        self._parts: list[dict[bytes, Any]] = [{} for _ in range(DEEP)]  # by depth: text → the shared value
        self._scalars: dict[bytes, Any] = {}  # text of a number, true, false, null → its value
        self._kept = 0  # bytes of text in `_parts`
        self._decode = QuietDecoder()
        self._known = shared.known_text  # a string the load has already: its one object, else None

    def record(self, line: bytes) -> dict[str, Any] | None:
        """The record of `line` as `Sharer.sample(parse_record(line))` makes it, or None when
        the line is not plainly valid (the careful way then reads it, and words its problems)."""
        try:
            return self._mapping(line, 0)
        except (_Refused, *_DECODE_ERRORS):
            return None

    def _value(self, raw: bytes, depth: int) -> Any:
        first = raw[0]
        if first == _QUOTE:
            text = _STRING(raw)
            return self._known(text) or self.shared.text(text)
        if first != _BRACE and first != _BRACKET:
            return self._scalar(raw, depth)
        if depth >= DEEP:
            # Nested this deep, far from where the careful way's parse stops ("nesting too deep",
            # at Python's recursion limit), the line is read the careful way: the memo's own parse
            # never goes deeper than this, so it never succeeds where that one would stop.
            raise _Refused
        memo = self._parts[depth]
        if first == _BRACKET and raw[1] in _CONTAINERS:
            # A list that holds a container is not shared as a whole (omk.loader.share), only
            # its items; nor kept whole here, so it is not looked up.
            return self._items(raw, depth)
        found = memo.get(raw)
        if found is not None:
            return found
        if first == _BRACE:
            value = self.shared.adopt(self._mapping(raw, depth))
        else:
            items = [bytes(item) for item in _ITEMS(raw)]
            if any(item[0] == _BRACE or item[0] == _BRACKET for item in items):
                return self._items(raw, depth)
            value = self._careful(raw, depth)
        self._keep(memo, raw, value)
        return value

    def _mapping(self, raw: bytes, depth: int) -> dict[str, Any]:
        """A mapping split by msgspec field by field (a record is one at depth 0), its keys
        and values shared; `_Refused` when it may repeat a key."""
        fields = _FIELDS(raw)
        parts = list(map(bytes, fields.values()))
        if not _keys_once(raw, parts):
            raise _Refused
        known, text, value, depth = self._known, self.shared.text, self._value, depth + 1
        return {known(key) or text(key): value(part, depth) for key, part in zip(fields, parts, strict=True)}

    def _items(self, raw: bytes, depth: int) -> list[Any]:
        """A list that holds a container: each item read (a kept one found by its text)."""
        depth += 1
        if depth >= DEEP:
            raise _Refused  # as in `_value`
        get, value = self._parts[depth].get, self._value
        return [get(item) or value(item, depth) for item in map(bytes, _ITEMS(raw))]

    def _scalar(self, raw: bytes, depth: int) -> Any:
        """A number, true, false or null, read the careful way once per text of the load."""
        found = self._scalars.get(raw, _MISSING)
        if found is _MISSING:
            if len(self._scalars) >= self.limit:
                self._scalars.clear()
            found = self._scalars[raw] = self._careful(raw, depth)
        return found

    def _keep(self, memo: dict[bytes, Any], raw: bytes, value: Any) -> None:
        if len(memo) >= self.limit or self._kept > BUDGET:
            for table in self._parts:
                table.clear()  # what repeats is kept again from its next reading
            self._kept = 0
        memo[raw] = value
        self._kept += len(raw)

    def _careful(self, raw: bytes, depth: int) -> Any:
        """The part read as `parse_record` reads a line, shared as `Sharer.sample` shares it:
        content the `Sharer` has seen (in this memo's text or another) is that object."""
        parsed = self._decode(raw.decode("utf-8"))
        if parsed is None or parsed[1]:  # not JSON omk reads, or an object repeats a key
            raise _Refused
        return self.shared.value(parsed[0], depth)


def json_document(text: str, memo: RecordMemo) -> Document | None:
    """A JSON samples file, `{"samples": [...]}` or `[...]`, read sample by sample through
    `memo` (the samples already shared: `Document.shared`), each sample placed where its text
    is; None when anything in it is not plainly a valid sample (the careful way then reads the
    whole file, and words its problems)."""
    prefix: Path_ = ()
    whole = text.encode("utf-8")
    try:
        top = _FILE(whole)
        if isinstance(top, dict):
            if list(top) != ["samples"] or not _only_member(whole, top["samples"]):
                return None  # other top-level fields are checked the careful way
            items, prefix = _ITEMS(top["samples"]), ("samples",)
        else:
            items = top
    except _DECODE_ERRORS:
        return None
    if not items:
        return None
    samples = [memo.record(bytes(raw)) for raw in items]
    if any(sample is None for sample in samples):
        return None
    locator = JsonLocator(text, unique_keys=True)
    at, places = locator.start(prefix) + 1, []  # just inside the list's "["
    for raw in items:  # each sample's text comes next, past white space and a comma
        written = str(raw, "utf-8")
        at = _GAP.match(text, at).end()  # type: ignore[union-attr]  # matches anywhere: all of it is optional
        if not text.startswith(written, at) and (at := text.find(written, at)) < 0:
            return None
        places.append(at)
        locator.place_first(at)  # the sample_id, usually: its line is asked for every sample
        at += len(written)
    locator.place_items(prefix, places)
    return Document({"samples": samples} if prefix else samples, locator, shared=True)


def _only_member(whole: bytes, value: msgspec.Raw) -> bool:
    """True when the object written in `whole` certainly has one member, `"samples"`, whose
    value is `value` (the last one written under that key): its text opens with that key and
    closes right after a value of that length, so no other member (a repeated key) is between."""
    start = whole.find(b"[")
    head = _HEAD.fullmatch(whole, 0, start) if start >= 0 else None
    return head is not None and _TAIL.fullmatch(whole, start + len(value)) is not None


def _keys_once(raw: bytes, parts: list[bytes]) -> bool:
    """True when the object written in `raw`, whose values are written in `parts`, certainly
    writes each of its keys once (its values are checked where they are read). Each member of
    the object has one colon of its own; every other colon of it is inside a string: in a key,
    or in a value. So the members are at most its colons less those in the values kept: when
    that is the number of keys kept, no member was dropped for repeating a key. Otherwise there
    may be one (a key with a colon, or a repeated key): the careful way decides."""
    return raw.count(b":") - b"".join(parts).count(b":") == len(parts)
