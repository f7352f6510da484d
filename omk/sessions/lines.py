"""A session file read line by line by the file rules: a regular file (never a FIFO, a device or
a link leading out of its folder), at most `MAX_SESSION_BYTES`, each line at most
`MAX_LINE_BYTES`. A line that is not a JSON object, nests too deep or is too long is left out
with a warning naming the file and the line; nothing in a session file is fatal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.io.safe_files import MAX_MOCK_FILE_BYTES, UnsafeFile, link_out_reason, open_regular, special_reason
from omk.io.textsafe import SURROGATE_ESCAPE, scrub_value
from omk.loader.depth import MAX_DEPTH, deeper_than

MAX_SESSION_BYTES = 1024 * 1024 * 1024  # one session file; a longer one is read up to here, and says so
MAX_LINE_BYTES = MAX_MOCK_FILE_BYTES  # one record
_CHUNK = 1024 * 1024


@dataclass(slots=True)
class Lines:
    """The JSON objects of one session file, with their line numbers, and what was wrong."""

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_lines(path: Path) -> Lines:
    """Every line of `path` that is a JSON object; a file omk may not read gives one warning."""
    found = Lines()
    if (why := special_reason(path) or link_out_reason(path)) is not None:
        found.warnings.append(f"{path}: not read: {why}")
        return found
    try:
        with open_regular(path) as handle:
            for number, raw in _raw_lines(handle, path, found.warnings):
                _add(found, path, number, raw)
    except (UnsafeFile, OSError) as exc:
        found.warnings.append(f"{path}: not read: {exc.strerror or exc}")
    return found


def _raw_lines(handle: Any, path: Path, warnings: list[str]) -> Iterator[tuple[int, bytes]]:
    """The file's lines up to the caps; a longer line is skipped to its end and named."""
    total, number = 0, 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > MAX_LINE_BYTES:
            while not line.endswith(b"\n"):
                line = handle.readline(_CHUNK)
                total += len(line)
                if not line:
                    break
            warnings.append(f"{path}:{number}: line longer than {MAX_LINE_BYTES} bytes, skipped")
        else:
            yield number, line
        if total > MAX_SESSION_BYTES:
            warnings.append(f"{path}:{number}: the file is longer than {MAX_SESSION_BYTES} bytes; the rest is not read")
            return


def _add(found: Lines, path: Path, number: int, raw: bytes) -> None:
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return
    try:
        value = json.loads(text)
    except RecursionError:
        found.warnings.append(f"{path}:{number}: nested deeper than {MAX_DEPTH} levels, skipped")
        return
    except ValueError as exc:
        found.warnings.append(f"{path}:{number}: not JSON ({str(exc).split(':')[0]}), skipped")
        return
    if not isinstance(value, dict):
        found.warnings.append(f"{path}:{number}: not a JSON object, skipped")
        return
    if deeper_than(value, MAX_DEPTH) is not None:
        found.warnings.append(f"{path}:{number}: nested deeper than {MAX_DEPTH} levels, skipped")
        return
    if SURROGATE_ESCAPE.search(text):  # a lone surrogate (`"\ud800"`) cannot be written as UTF-8: U+FFFD
        value = scrub_value(value)
    found.records.append((number, value))


