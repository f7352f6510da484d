"""A parsed samples file: its data, where each part was written, and what the parser objected to.

Paths are JSON paths as tuples of keys and indexes from the document root, e.g.
`("samples", 3, "assertions", 1, "value")`. `line(path)` gives the 1-based line of the nearest
part of the path that has one (a missing field is reported at the line of its parent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

Path_ = tuple[str | int, ...]


class LineLookup(Protocol):
    def line(self, path: Path_) -> int | None: ...


class Issue(msgspec.Struct, frozen=True, gc=False):
    """Something wrong found while parsing (a duplicate key, an unsupported tag), with its place."""

    path: Path_
    line: int | None
    message: str


class ParseFailure(Exception):
    """The file cannot be read as data at all (syntax error, bad encoding)."""

    def __init__(self, message: str, line: int | None = None):
        self.line = line
        super().__init__(message)


class LineTable:
    """Lines recorded while parsing: one entry per mapping key and sequence item."""

    __slots__ = ("lines", "__weakref__")

    def __init__(self, lines: dict[Path_, int] | None = None):
        self.lines = lines if lines is not None else {}

    def line(self, path: Path_) -> int | None:
        lines = self.lines
        while path:
            found = lines.get(path)
            if found is not None:
                return found
            path = path[:-1]
        return lines.get((), 1)


@dataclass(slots=True, weakref_slot=True)  # a test checks it is gone once loading returns
class Document:
    data: Any
    lines: LineLookup
    issues: list[Issue] = field(default_factory=list)
    shared: bool = False  # its samples went through the load's Sharer already (omk.loader.record_memo)

    def line(self, path: Path_) -> int | None:
        return self.lines.line(path)


class NoLines:
    """Data built in memory has no lines: problems name the item and field only."""

    def line(self, path: Path_) -> int | None:
        return None
