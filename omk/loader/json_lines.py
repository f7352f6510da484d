"""JSON and JSON Lines → data, with lines found lazily only when a problem needs one.

`json.loads` (C) parses; a valid file never pays for line numbers. When a problem must be
placed, `JsonLocator` walks the text to the path, skipping every value it does not descend
into with the C decoder (`raw_decode`), so even a problem at the end of a 10,000-sample file
costs a few tens of milliseconds. Duplicate keys (which `json.loads` silently collapses) are
noticed by a cheap `object_pairs_hook` and then located with the same walker.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]  # json's own string scanner; the stubs leave it out
from typing import Any

from omk.loader.document import Document, Issue, ParseFailure, Path_

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Hook:
    """object_pairs_hook that notices duplicate keys at almost no cost."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            self.found = True
        return result


MAX_INT_DIGITS = 4300  # Python's own limit for turning digits into an int


class _Unsupported(ValueError):
    def __init__(self, message: str, token: str):
        super().__init__(message)
        self.token = token


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Unsupported(f"a number with {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})", digits)
    return int(digits)


def _constant(name: str) -> Any:
    raise _Unsupported(f"{name} is not valid JSON (write null or a number)", name)


def loads_checked(text: str) -> tuple[Any, bool]:
    """(the value, whether an object in it repeats a key); `ParseFailure` saying where, when
    the text is not JSON omk reads."""
    hook = _Hook()
    try:
        return json.loads(text, object_pairs_hook=hook, parse_int=_int, parse_constant=_constant), hook.found
    except json.JSONDecodeError as exc:
        if (comma := _trailing_comma(text, exc.pos)) is not None:
            line, column = text.count("\n", 0, comma) + 1, comma - text.rfind("\n", 0, comma)
            closer = "}" if text[exc.pos] == "}" else "]"
            raise ParseFailure(
                f"JSON parse error: a trailing comma at column {column} before '{closer}': JSON allows none, remove it", line
            ) from None
        raise ParseFailure(f"JSON parse error: {exc.msg} (column {exc.colno})", exc.lineno) from None
    except _Unsupported as exc:
        at = text.find(exc.token)
        raise ParseFailure(f"JSON parse error: {exc}", text.count("\n", 0, at) + 1 if at >= 0 else None) from None
    except RecursionError:
        raise ParseFailure("JSON parse error: nesting too deep") from None


class QuietDecoder:
    """`loads_checked` made once for many texts, without the wording: (the value, whether an
    object in it repeats a key), or None when the text is not JSON omk reads. The text must be
    one value with no white space around it (as msgspec's `Raw` gives it): the C scanner is
    called on it directly."""

    __slots__ = ("_hook", "_scan")

    def __init__(self) -> None:
        self._hook = _Hook()
        decoder = json.JSONDecoder(object_pairs_hook=self._hook, parse_int=_int, parse_constant=_constant)
        self._scan = decoder.scan_once  # type: ignore[attr-defined]  # set in JSONDecoder.__init__; the stubs leave it out

    def __call__(self, text: str) -> tuple[Any, bool] | None:
        self._hook.found = False
        try:
            value, end = self._scan(text, 0)
        except (StopIteration, ValueError, RecursionError):  # json.JSONDecodeError and _Unsupported are ValueErrors
            return None
        return (value, self._hook.found) if end == len(text) else None


def _trailing_comma(text: str, pos: int) -> int | None:
    """Where the comma is when the parser stopped at a `}` or `]` right after one (`[1, 2,]`)."""
    if pos >= len(text) or text[pos] not in "}]":
        return None
    before = text[:pos].rstrip()
    return len(before) - 1 if before.endswith(",") else None


class JsonLocator:
    """Positions and lines of paths in a JSON text, computed on demand and cached."""

    def __init__(self, text: str, first_line: int = 1, unique_keys: bool = False):
        self.text = text
        self.first_line = first_line
        # No object repeats a key (json.loads saw none): a member lookup may stop at the first
        # match instead of reading the whole object, which matters for 10,000 samples.
        self.unique_keys = unique_keys
        self._marks: list[int] = [0]  # positions placed, in increasing order, and their lines
        self._mark_lines: list[int] = [first_line]
        self._members: dict[int, list[tuple[str, int, int]]] = {}
        self._member_maps: dict[int, dict[str, tuple[int, int]]] = {}
        self._items: dict[int, list[int]] = {}
        self._values: dict[Path_, int | None] = {}
        self._first: dict[int, tuple[str, int, int]] = {}  # an object's first member, found by the caller

    def line(self, path: Path_) -> int | None:
        try:
            return self.line_at(self.position(path))
        except (ValueError, IndexError, RecursionError):  # cannot happen on text json.loads accepted
            return self.first_line

    def line_at(self, pos: int) -> int:
        """Newlines are counted from the nearest position placed before (the loader asks in
        about file order), so no table of every line's offset is built."""
        marks = self._marks
        k = bisect.bisect_right(marks, pos) - 1
        line = self._mark_lines[k] + self.text.count("\n", marks[k], pos)
        if k == len(marks) - 1 and pos > marks[k]:
            marks.append(pos)
            self._mark_lines.append(line)
        return line

    def position(self, path: Path_) -> int:
        """Where `path` is written: the key of an object member, the start of an item.

        A path that does not exist resolves to its nearest existing parent."""
        for cut in range(len(path), 0, -1):
            parent = self._value(path[: cut - 1])
            if parent is None:
                continue
            step = path[cut - 1]
            if isinstance(step, str) and self.text[parent] == "{":
                found = self._member(parent, step)
                if found is not None:
                    return found[0]
            elif isinstance(step, int) and self.text[parent] == "[":
                items = self.items(parent)
                if 0 <= step < len(items):
                    return items[step]
        return self._value(()) or 0  # the document itself: always found

    def _value(self, path: Path_) -> int | None:
        """Start of the value at `path`, or None when the path does not exist."""
        if path in self._values:
            return self._values[path]
        if not path:
            pos: int | None = _WS.match(self.text, 0).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
        else:
            parent = self._value(path[:-1])
            step = path[-1]
            pos = None
            if parent is not None:
                char = self.text[parent]
                if char == "{" and isinstance(step, str):
                    found = self._member(parent, step)
                    pos = found[1] if found else None
                elif char == "[" and isinstance(step, int):
                    items = self.items(parent)
                    # found again as cheaply in its list's positions: not kept (a sample each)
                    return items[step] if 0 <= step < len(items) else None
        self._values[path] = pos
        return pos

    def _member(self, pos: int, key: str) -> tuple[int, int] | None:
        """(key position, value position) of `key` in the object at `pos`, or None."""
        first = self._first.get(pos)
        if first is not None and first[0] == key:
            return first[1], first[2]
        found = self._member_maps.get(pos)
        if found is None and self.unique_keys:
            for k, key_pos, value_pos in self._scan_members(pos):
                if k == key:
                    return key_pos, value_pos
            return None
        return (found if found is not None else self._member_map(pos)).get(key)

    def _member_map(self, pos: int) -> dict[str, tuple[int, int]]:
        found = self._member_maps.get(pos)
        if found is None:
            found = {key: (key_pos, value_pos) for key, key_pos, value_pos in self.members(pos)}  # last one wins
            self._member_maps[pos] = found
        return found

    def start(self, path: Path_) -> int:
        """Where the value at `path` is written (the path must exist)."""
        pos = self._value(path)
        if pos is None:
            raise ValueError(f"no value at {path}")
        return pos

    def place_items(self, path: Path_, places: list[int]) -> None:
        """The positions of the items of the list at `path` (which exists), found by the caller."""
        self._items[self.start(path)] = places

    def place_first(self, pos: int) -> None:
        """Find the first member of the object written at `pos` now, by its text alone (a key
        is the first string after the brace), so a path through it needs no scan later."""
        text, ws = self.text, _WS.match
        key_pos = ws(text, pos + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
        if text[key_pos] == '"':
            key, end = scanstring(text, key_pos + 1)
            value_pos = ws(text, ws(text, end).end() + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
            self._first[pos] = (key, key_pos, value_pos)

    def members(self, pos: int) -> list[tuple[str, int, int]]:
        """(key, key position, value position) of the object starting at `pos`."""
        cached = self._members.get(pos)
        if cached is None:
            cached = self._members[pos] = list(self._scan_members(pos))
        return cached

    def _scan_members(self, pos: int) -> Iterator[tuple[str, int, int]]:
        """Each member as it is reached; a value is skipped only when the next one is asked for."""
        text, ws, decode = self.text, _WS.match, _DECODER.raw_decode
        i = ws(text, pos + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
        if text[i] == "}":
            return
        while True:
            key, end = scanstring(text, i + 1)
            value_pos = ws(text, ws(text, end).end() + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
            yield key, i, value_pos
            _, end = decode(text, value_pos)
            i = ws(text, end).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
            if text[i] == "}":
                return
            i = ws(text, i + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None

    def items(self, pos: int) -> list[int]:
        cached = self._items.get(pos)
        if cached is not None:
            return cached
        text, out, ws, decode = self.text, [], _WS.match, _DECODER.raw_decode
        i = ws(text, pos + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
        if text[i] != "]":
            while True:
                out.append(i)
                _, end = decode(text, i)
                i = ws(text, end).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
                if text[i] == "]":
                    break
                i = ws(text, i + 1).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
        self._items[pos] = out
        return out

    def duplicates(self, pos: int | None = None, path: Path_ = ()) -> list[Issue]:
        """Every duplicate key in the value at `pos` (the whole document by default)."""
        text = self.text
        if pos is None:
            pos = _WS.match(text, 0).end()  # type: ignore[union-attr]  # _WS matches the empty string too: never None
        issues: list[Issue] = []
        char = text[pos : pos + 1]
        if char == "{":
            seen: dict[str, int] = {}
            for key, key_pos, value_pos in self.members(pos):
                if key in seen:
                    first = self.line_at(seen[key])
                    issues.append(
                        Issue(path + (key,), self.line_at(key_pos), f'duplicate key "{key}" (first defined at line {first})')
                    )
                else:
                    seen[key] = key_pos
                issues += self.duplicates(value_pos, path + (key,))
        elif char == "[":
            for index, item_pos in enumerate(self.items(pos)):
                issues += self.duplicates(item_pos, path + (index,))
        return issues


def parse_json(text: str) -> Document:
    data, has_duplicates = loads_checked(text)
    locator = JsonLocator(text, unique_keys=not has_duplicates)
    issues = locator.duplicates() if has_duplicates else []
    return Document(data, locator, issues)


class RecordLines:
    """JSON Lines: a path's line is the line of its record (`path[0]` is the record index)."""

    def __init__(self, lines: list[int]):
        self.lines = lines

    def line(self, path: Path_) -> int | None:
        if path and isinstance(path[0], int) and 0 <= path[0] < len(self.lines):
            return self.lines[path[0]]
        return 1


def parse_record(text: str, number: int, index: int) -> tuple[Any, list[Issue]]:
    """One JSON Lines record (line `number`, the `index`-th record): its value, or None and
    the issue that says why it did not parse; duplicate keys are issues on the record's line."""
    try:
        value, has_duplicates = loads_checked(text)
    except ParseFailure as exc:
        return None, [Issue((index,), number, str(exc))]
    issues = []
    if has_duplicates:
        for issue in JsonLocator(text, number).duplicates():
            issues.append(Issue((index, *issue.path), number, issue.message.split(" (first")[0]))
    return value, issues


def parse_jsonl(text: str) -> Document:
    """One sample per non-blank line. A line that does not parse is an issue; the others load.
    (The loader reads a JSON Lines samples file record by record instead: omk.loader.read.)"""
    records: list[Any] = []
    lines: list[int] = []
    issues: list[Issue] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        lines.append(number)
        value, found = parse_record(raw, number, len(records))
        records.append(value)
        issues += found
    return Document(records, RecordLines(lines), issues)
