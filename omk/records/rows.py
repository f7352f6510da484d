"""A report.json's results read one at a time, so a format can render a run of any size.

omk writes report.json with its top level indented and each result compact on a line of its own
(omk/report/json_report.py). `read_lazily` reads such a file once, line by line: the top level is
parsed, the results are not; it notes where each result's line starts. `ResultRows` then parses
one result each time a format asks for it. A report.json in any other layout (edited by hand,
written by another tool) is read whole by the caller instead.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, overload

from omk.core.errors import InputError
from omk.records.result import SampleResult

START = b'  "results": [\n'
ITEM = b"    {"
END = b"  ]"


class LazyResults(Sequence[SampleResult]):
    """Results read one at a time, by position, when they are reached: iterating holds one result
    at a time; `list(...)` holds them all. A subclass says how many there are and reads the ones at
    given positions, in order (`_read`), and gives each one's JSON text (`texts`)."""

    def __len__(self) -> int:
        raise NotImplementedError

    def _read(self, positions: range) -> Iterator[SampleResult]:
        raise NotImplementedError

    def texts(self) -> Iterator[str]:
        """Each result's JSON text, as report.json holds it."""
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> SampleResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[SampleResult]: ...
    def __getitem__(self, index: int | slice) -> SampleResult | list[SampleResult]:
        if isinstance(index, slice):
            return list(self._read(range(len(self))[index]))
        i = range(len(self))[index]
        return next(self._read(range(i, i + 1)))

    def __iter__(self) -> Iterator[SampleResult]:
        return self._read(range(len(self)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} results>"


class ResultRows(LazyResults):
    """The results of a report.json, each parsed (and checked) when it is reached."""

    def __init__(self, path: Path, spans: list[tuple[int, int]]):
        self.path = path
        self.spans = spans  # where each result's JSON text starts in the file, and its length

    def __len__(self) -> int:
        return len(self.spans)

    def _read(self, positions: range) -> Iterator[SampleResult]:
        for i, text in zip(positions, self._texts([self.spans[i] for i in positions]), strict=True):
            yield self._parse(i, text)

    def texts(self) -> Iterator[str]:
        """Each result's JSON text, as the file holds it."""
        return self._texts(self.spans)

    def _texts(self, spans: list[tuple[int, int]]) -> Iterator[str]:
        from omk.io.safe_files import open_run_file

        with open_run_file(self.path) as f:
            for offset, length in spans:
                f.seek(offset)
                yield f.read(length).decode("utf-8")

    def _parse(self, i: int, text: str) -> SampleResult:
        origin = str(self.path)
        try:
            return SampleResult.decode(text, origin, f"results[{i}]")
        except json.JSONDecodeError as exc:
            raise InputError(f"{origin}: results[{i}]: not valid JSON: {exc.msg}") from None


def read_lazily(path: Path) -> tuple[dict[str, Any], ResultRows] | None:
    """(the report without its results, the results to read) for a report.json in omk's own
    layout; None for any other (then read it whole). OSError, UnicodeDecodeError and
    JSONDecodeError come through for the caller to report (UnsafeFile, an OSError, for a FIFO,
    a device or a line over the run-file cap)."""
    from omk.io.safe_files import open_run_file

    with open_run_file(path) as f:
        if _line(f, path) != b"{\n":
            return None
        found = _scan(f, path)
        if found is None:
            return None
        head, spans, tail = found
    data = json.loads(head + b'  "results": []' + tail)
    return (data, ResultRows(path, spans)) if isinstance(data, dict) else None


def _line(f: BinaryIO, path: Path) -> bytes:
    from omk.io.safe_files import read_capped_line

    return read_capped_line(f, path)


def _scan(f: BinaryIO, path: Path) -> tuple[bytes, list[tuple[int, int]], bytes] | None:
    """The text before the results, each result's place, and the text after them."""
    head = [b"{\n"]
    for line in iter(lambda: _line(f, path), b""):
        if line == START:
            break
        head.append(line)
    else:
        return None  # no results on lines of their own (none at all, or another layout)
    spans: list[tuple[int, int]] = []
    offset = f.tell()
    for line in iter(lambda: _line(f, path), b""):
        if line.startswith(END) and not line.startswith(ITEM):
            return b"".join(head), spans, line[len(END) :] + _rest(f, path)
        if not line.startswith(ITEM):
            return None
        body = line.rstrip(b"\n")
        body = body[:-1] if body.endswith(b",") else body
        spans.append((offset + 4, len(body) - 4))
        offset += len(line)
    return None


def _rest(f: BinaryIO, path: Path) -> bytes:
    """What follows the results (the summary and the rest), at most the run-file cap."""
    from omk.io.safe_files import UnsafeFile, run_file_cap

    cap = run_file_cap()
    rest = f.read(cap + 1)
    if len(rest) > cap:
        raise UnsafeFile(errno.EFBIG, f"{path}: the part after the results is longer than the {cap} bytes omk reads")
    return rest
