"""Read one samples file into a `Document`: decode it, then parse by extension.

`.yaml` / `.yml` are YAML (1.2 core schema), `.jsonl` is JSON Lines (one sample per line), and
everything else is JSON (as omk 0.54). Text must be UTF-8; a leading BOM is accepted.

A JSON Lines samples file is not read whole: `jsonl_records` reads it one line at a time, so
its size has no limit (one line has the limit a JSON or YAML file has).
"""

from __future__ import annotations

import codecs
import errno
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from omk.loader.document import Document, Issue, ParseFailure
from omk.loader.json_lines import parse_json, parse_jsonl, parse_record

YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIX = ".jsonl"
READ_BUFFER = 1 << 17  # a JSON Lines file is read line by line from start to end: fewer, larger reads

_OTHER_BOMS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def _other_bom(raw: bytes) -> None:
    for bom, name in _OTHER_BOMS.items():  # UTF-32 first: its LE BOM starts like UTF-16's
        if raw.startswith(bom):
            raise ParseFailure(f"the file is {name} text; save it as UTF-8")


def decode(raw: bytes, first_line: int = 1) -> str:
    _other_bom(raw)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + first_line
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = raw[exc.start]
        raise ParseFailure(
            f"not valid UTF-8 text (byte 0x{byte:02x} at column {column}); save the file as UTF-8", line
        ) from None


EMPTY_FILE = 'the file is empty; expected an array of samples or an object with a "samples" field'
NO_SIZE_LIMIT = "a JSON Lines file (*.jsonl, one sample per line) has no file-size limit"


def _unreadable(exc: OSError) -> ParseFailure:
    from omk.io.safe_files import UnsafeFile

    if isinstance(exc, UnsafeFile):
        hint = f"; {NO_SIZE_LIMIT}" if exc.errno == errno.EFBIG else ""
        return ParseFailure(f"cannot read the file: {exc.strerror}{hint}")
    if isinstance(exc, FileNotFoundError):
        return ParseFailure("file not found")
    if isinstance(exc, IsADirectoryError):
        return ParseFailure("is a directory, not a file")
    return ParseFailure(f"cannot read the file: {exc.strerror or exc}")


def read_text(path: Path) -> str:
    from omk.io.safe_files import read_regular_bytes, sample_file_cap

    try:
        raw = read_regular_bytes(path, sample_file_cap())
    except OSError as exc:
        raise _unreadable(exc) from None
    return decode(raw)


def parse_text(text: str, suffix: str) -> Document:
    suffix = suffix.lower()
    if suffix in YAML_SUFFIXES:
        from omk.loader.yaml_memo import read_yaml  # PyYAML is imported only for YAML files

        return read_yaml(text)
    if suffix == JSONL_SUFFIX:
        return parse_jsonl(text)
    return parse_json(text)


def read_file(path: Path, quick: Callable[[str], Document | None] | None = None) -> Document:
    """Raises `ParseFailure` for a file that cannot be read or parsed at all. `quick` reads a
    JSON file (omk.loader.record_memo) or a YAML file (omk.loader.yaml_memo) first; when it
    answers None the file is parsed here."""
    from omk.io.textsafe import SURROGATE_ESCAPE, scrub_value

    text = read_text(path)
    if not text or text.isspace():
        raise ParseFailure(EMPTY_FILE)
    suffix = path.suffix.lower()
    escapes = "\\u" in text  # a lone surrogate can only be written as an escape
    plain = quick is not None and suffix != JSONL_SUFFIX and not (escapes and SURROGATE_ESCAPE.search(text))
    if plain and quick is not None and (doc := quick(text)) is not None:
        return doc
    doc = parse_text(text, path.suffix)

    if escapes and SURROGATE_ESCAPE.search(text):  # "\ud800": a lone surrogate could not be written out later
        doc.data = scrub_value(doc.data)
    return doc


class LineRecord(msgspec.Struct, gc=False):
    """One non-blank line of a JSON Lines file: the `index`-th record, on line `line`.

    `value` is None when it did not parse (`issues` says why, on paths from the file's root:
    `(index, ...)`) or was too long to read (`too_long`). Not tracked by the garbage collector:
    nothing it holds refers back to it."""

    line: int
    index: int
    value: Any = None
    issues: Sequence[Issue] = ()
    too_long: bool = False
    shared: bool = False  # `value` is already shared with the load's other samples (omk.loader.record_memo)
    size: int = 0  # the line's bytes


def jsonl_records(path: Path, quick: Callable[[bytes], Any] | None = None) -> Iterator[LineRecord]:
    """The records of a JSON Lines file, read one line at a time: what one line holds is all
    that is in memory. Raises `ParseFailure` when the file cannot be read as UTF-8 text, at
    the first line that is not (as for a JSON or YAML file: the file must be saved again).
    `quick` (omk.loader.record_memo) reads a line first, its value already shared; when it
    answers None the line is read here, the careful way, which words every problem."""
    from omk.io.safe_files import open_regular, sample_file_cap
    from omk.io.textsafe import SURROGATE_ESCAPE, scrub_value

    index = 0
    try:
        f = open_regular(path, buffering=READ_BUFFER)
    except OSError as exc:
        raise _unreadable(exc) from None
    with f:
        for number, raw in _lines(f, sample_file_cap()):
            if raw is None:
                yield LineRecord(number, index, too_long=True)
                index += 1
                continue
            # Most lines: read by the memo from the bytes as they are. A line it reads is UTF-8
            # (every string in it was decoded by msgspec, which checks) without an escape, so
            # without a lone surrogate; any other line is decoded here first.
            tried = number > 1 and b"\\u" not in raw
            if tried and quick is not None and (value := quick(raw)) is not None:
                yield LineRecord(number, index, value, shared=True, size=len(raw))
                index += 1
                continue
            text = decode(raw, number) if number == 1 else _decode_line(raw, number)
            if not text.strip():
                continue
            escapes = "\\u" in text  # a lone surrogate can only be written as an escape
            if quick is not None and not tried and (not escapes or SURROGATE_ESCAPE.search(text) is None):
                value = quick(text.encode("utf-8") if number == 1 else raw)  # line 1 may start with a BOM
                if value is not None:
                    yield LineRecord(number, index, value, shared=True, size=len(raw))
                    index += 1
                    continue
            value, issues = parse_record(text, number, index)
            if escapes and SURROGATE_ESCAPE.search(text):  # "\ud800": a lone surrogate could not be written out later
                value = scrub_value(value)
            yield LineRecord(number, index, value, issues, size=len(raw))
            index += 1


def _decode_line(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return decode(raw, number)  # raises, saying where


def _lines(f: BinaryIO, cap: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, its bytes without the newline) for each line; None for a line longer than
    `cap` bytes (the rest of it is skipped, never held in memory)."""
    number = 0
    try:
        while raw := f.readline(cap + 1):
            number += 1
            if len(raw) - raw.endswith(b"\n") <= cap:
                yield number, raw[:-1] if raw.endswith(b"\n") else raw  # a parse error's column stays on its line
                continue
            while not raw.endswith(b"\n") and (raw := f.readline(1 << 20)):
                pass
            yield number, None
    except OSError as exc:
        raise _unreadable(exc) from None
