"""Where a run's results are: `results.jsonl` on disk, or memory for a run without a folder.

Every finished result is appended to `results.jsonl` (one line of strict JSON, flushed before
anyone is told it finished) and dropped: what stays in memory is its `Digest`, the few figures the summary
needs, and where its line starts. The report reads the results back from the file in plan order,
one at a time, so memory does not grow with the size of the run. A resumed run reads the file
once, line by line, to learn what it had finished; the last line of a (sample, repeat) wins.

A line is encoded by msgspec (`msgspec.json.encode`, laid out by `msgspec.json.format` with the
spaces `json.dumps` puts after `,` and `:`, so the text is the one omk always wrote, numbers aside:
msgspec writes them without a `+` or a leading zero in the exponent and small ones in plain decimals,
docs/report-format.md). msgspec writes a NaN or an infinity as `null` without a word, so a result
is first looked over where such a number can be (its numbers and the plain JSON it carries); one
that holds any is written by omk's strict encoder (omk/io/jsontext.py), which says where.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from omk.core.secrets import Masker
from omk.io.jsontext import CheckedJson, dumps
from omk.records import AssertionResult, SampleResult, TurnResult
from omk.records.result import EMPTY_TRACE
from omk.records.rows import LazyResults
from omk.samples.model import Sample
from omk.scoring.digest import Digest

Key = tuple[str, int]  # (sample_id, repeat)
READ_BUFFER = 1 << 20  # the results are read back in the order they were mostly written: in long runs of lines


class ResultLog:
    """The results of one run, by (sample_id, repeat): lines of `results.jsonl` when the run has a
    folder (`path`), else the result objects themselves."""

    def __init__(self, samples: Iterable[Sample], path: Path | None = None, mask: Masker | None = None):
        self.samples = {s.sample_id: s for s in samples}
        self.path = path
        self.mask = mask or Masker()  # the run's secrets, kept out of every line whatever brought them
        self.spans: dict[Key, tuple[int, int]] = {}  # where each line starts, and its length
        self.kept: dict[Key, SampleResult] = {}  # a run without a folder keeps its results
        self.digests: dict[Key, Digest] = {}
        self.dropped = 0  # stored lines that could not be used (torn, unreadable, not planned)
        self.nonfinite: list[str] = []  # where a NaN or an infinity was written as null
        self.skipped: list[str] = []  # a resumed run's broken lines, `FILE:LINE: field: what` each
        self._out: BinaryIO | None = None
        self._end = 0
        self._fresh = -1  # where the lines this process writes start (-1: it writes none)
        self._checks: dict[int, tuple[AssertionResult, bytes]] = {}  # check records written lately, and their JSON

    def __contains__(self, key: object) -> bool:
        return key in self.digests

    def __len__(self) -> int:
        return len(self.digests)

    def restore(self, repeat: int) -> None:
        """Learn what `results.jsonl` holds (a resumed run): positions and digests, line by line."""
        from omk.runner.resume import scan_finished

        assert self.path is not None
        for key, offset, length, result in scan_finished(self.path, self.samples, repeat, self):
            self.spans[key] = (offset, length)
            self.digests[key] = Digest.of(result)

    def open(self, fresh: bool) -> None:
        """Open `results.jsonl` to append to (`fresh`: start it empty)."""
        if self.path is None:
            return
        from omk.runner.folder_lock import cannot_write

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = _open_log(self.path, fresh)  # each line goes out whole, or fails
            self._end = self._fresh = self._out.seek(0, 2)
        except OSError as exc:
            raise cannot_write(self.path, exc, self.path.parent) from None

    def add(self, result: SampleResult) -> None:
        """Record a finished result: its line is written and flushed before this returns."""
        key = (result.sample_id, result.repeat)
        if self._out is None:
            self.kept[key] = result
        else:
            line = self._line(result)
            self._write(line)
            self.spans[key] = (self._end, len(line) - 1)
            self._end += len(line)
        self.digests[key] = Digest.of(result)

    def _line(self, result: SampleResult) -> bytes:
        """The result's line, newline included: strict JSON, with the run's secrets masked. The
        line is encoded once, straight to UTF-8; only a line that needs it (a number that is no
        number, a lone surrogate, a secret that shows) is built again by the strict encoder."""
        try:
            line = self._quick_line(result)
        except RecursionError:  # nested past Python's stack (a recorded tool input): the strict encoder copes
            line = None
        if line is not None and not self.mask:  # most lines: no secret to look for
            return line
        at = result.sample_id if result.repeat <= 1 else f"{result.sample_id} (repeat {result.repeat})"
        text = line[:-1].decode("utf-8") if line is not None else dumps(result.to_json(), where=self.nonfinite, at=at)
        if self.mask.may_be_in_json(text):
            text = dumps(self.mask.value(result.to_json()), at=at)
        return _encode(text)

    def _quick_line(self, result: SampleResult) -> bytes | None:
        """The line as msgspec writes it (`wire_line`), its checks' JSON made once per check record
        (records repeat: omk.assertions.evaluate makes one for every sample with the same verdict
        and words); None when a number in it is no number, or for what msgspec cannot write as
        `json` does (a lone surrogate in a model's output, a value that is not JSON)."""
        if not _finite_result(result, with_checks=False):
            return None
        written = self._checks
        checks = []
        try:
            for check in result.assertions:
                made = written.get(id(check))
                if made is None:
                    if not math.isfinite(_checks_total((check,))):
                        return None
                    if len(written) >= CHECKS_KEPT:
                        written.clear()
                    # the record is kept with its text, so its id is not another's while the entry lives
                    made = written[id(check)] = (check, msgspec.json.format(msgspec.json.encode(check), indent=0))
                checks.append(made[1])
            return wire_line(result, checks)
        except (UnicodeEncodeError, TypeError, OverflowError):
            return None

    def _write(self, line: bytes) -> None:
        """Append one line; a folder that stopped taking writes (a full disk) stops the run with
        `RunFolderError`, the line cut off so a resume starts on a whole line."""
        assert self._out is not None and self.path is not None
        try:
            written = self._out.write(line)
            if written != len(line):  # a file that is filling up can take part of a line: the rest goes after it
                view = memoryview(line)
                while True:
                    if not written:
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    view = view[written:]
                    if not view:
                        break
                    written = self._out.write(view)
        except OSError as exc:
            from omk.runner.folder_lock import cannot_write

            self._abandon()
            raise cannot_write(self.path, exc, self.path.parent) from None

    def _abandon(self) -> None:
        """Close the file and cut it back to its last whole line."""
        out, self._out = self._out, None
        assert out is not None and self.path is not None
        out.close()  # unbuffered: nothing is left to flush
        with contextlib.suppress(OSError):  # if not, a resume cuts a torn last line off
            os.truncate(self.path, self._end)

    def close(self) -> None:
        if self._out is not None:
            with contextlib.suppress(OSError):  # the run is over; a resume sees what reached the disk
                self._out.close()
            self._out = None

    def text(self, key: Key, reader: BinaryIO | None = None) -> str:
        """The JSON text of one result, as report.json holds it."""
        if self.path is None or key in self.kept:
            return dumps(self.kept[key].to_json())
        line = self._line_of(key, reader)
        # a line this process wrote is strict as written; one from before (a resumed run's) is looked over
        return CheckedJson(line, "utf-8") if 0 <= self._fresh <= self.spans[key][0] else line.decode("utf-8")

    def result(self, key: Key, reader: BinaryIO | None = None) -> SampleResult:
        """One result as an object: the one kept, or rebuilt from its line."""
        if key in self.kept:
            return self.kept[key]
        from omk.runner.resume import restore_result

        return restore_result(self._line_of(key, reader), str(self.path))

    def _line_of(self, key: Key, reader: BinaryIO | None) -> bytes:
        """The stored line of one result (read with `reader`, or the file opened for it)."""
        assert self.path is not None
        offset, length = self.spans[key]
        if reader is None:
            with self.path.open("rb") as f:
                return self._line_of(key, f)
        reader.seek(offset)
        return reader.read(length)

    def lines(self, keys: Iterable[Key]) -> Iterator[tuple[bytes, int] | str]:
        """What report.json holds of `keys`, in that order: lines this process wrote as they are
        in the file (UTF-8 bytes, strict as written, each ending with its newline), several in one
        piece when they follow each other there (up to `READ_BUFFER` bytes), with their number;
        any other as its text (`text`), one at a time."""
        if self.path is None or self._fresh < 0 or not self.spans:
            yield from self.texts(keys)
            return
        with self._reader() as reader:
            assert reader is not None  # it has spans
            start = end = -1  # the piece of the file not yet read: [start, end)
            count = 0  # its lines
            spans, kept, fresh = self.spans, self.kept, self._fresh  # read once: this runs for every result
            for key in keys:
                offset, length = spans[key]
                if offset < fresh or key in kept:
                    if count:
                        yield _read_at(reader, start, end), count
                        count = 0
                    yield self.text(key, reader)
                    continue
                if count and (offset != end or end - start > READ_BUFFER):
                    yield _read_at(reader, start, end), count
                    count = 0
                if not count:
                    start = offset
                end = offset + length + 1  # its newline too
                count += 1
            if count:
                yield _read_at(reader, start, end), count

    def texts(self, keys: Iterable[Key]) -> Iterator[str]:
        """The JSON texts of `keys`, in that order, read one at a time."""
        with self._reader() as reader:
            for key in keys:
                yield self.text(key, reader)

    def results(self, keys: Iterable[Key]) -> Iterator[SampleResult]:
        with self._reader() as reader:
            for key in keys:
                yield self.result(key, reader)

    def _reader(self) -> AbstractContextManager[BinaryIO | None]:
        """The results file opened for reading; nothing for results kept in memory."""
        if self.path is None or not self.spans:
            return nullcontext()
        return open(self.path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - the caller's `with` closes it


def _read_at(reader: BinaryIO, start: int, end: int) -> bytes:
    reader.seek(start)
    return reader.read(end - start)


CHECKS_KEPT = 256  # check records whose JSON is kept: those that repeat are written again and again

_ENCODE, _FORMAT = msgspec.json.encode, msgspec.json.format
_TRUE, _FALSE, _NULL = b"true", b"false", b"null"
_EMPTY_TRACE_LINE = msgspec.json.format(msgspec.json.encode(EMPTY_TRACE.to_json()), indent=0)


def _formatted(value: Any) -> bytes:
    """A container as `json.dumps` lays it out (`, ` and `: `), written by msgspec."""
    return msgspec.json.format(_ENCODE(value), indent=0)


def wire_line(r: SampleResult, checks: list[bytes]) -> bytes:
    """`r`'s line (newline included) as `msgspec.json.format(msgspec.json.encode(r.to_wire()), indent=0)`
    writes it, made piece by piece: each value is encoded alone and laid out only when it is a
    container (the big strings, its prompt and output, are not gone over again to lay them out),
    and its checks come written (`checks`). A result with turns or gold labels, rare, is written
    whole. tests/test_results_streaming.py holds this to `to_wire`'s object, key for key."""
    if r.turns or r.gold:
        return _formatted(r.to_wire()) + b"\n"
    enc = _ENCODE
    source = _NULL if r.source_file is None else b'{"file": ' + enc(r.source_file) + b', "line": ' + enc(r.source_line) + b"}"
    trace = _EMPTY_TRACE_LINE if r.trace is EMPTY_TRACE else _formatted(r.trace.to_json())
    return b"".join((
        b'{"sample_id": ', enc(r.sample_id), b', "status": ', enc(r.status),
        b', "error": ', _NULL if r.error is None else enc(r.error),
        b', "source": ', source, b', "capability": ', _FORMAT(enc(r.capability), indent=0) if r.capability else b"[]",
        b', "difficulty": ', _NULL if r.difficulty is None else enc(r.difficulty), b', "tripwire": ', _TRUE if r.tripwire else _FALSE,
        b', "category": ', _NULL if r.category is None else enc(r.category), b', "prompt": ', enc(r.prompt), b', "output": ', enc(r.output),
        b', "trace": ', trace, b', "assertions": [', b", ".join(checks),
        b'], "judge": ', _NULL if r.judge is None else _formatted(r.judge.to_json()),
        b', "judge_skipped": ', _NULL if r.judge_skipped is None else enc(r.judge_skipped),
        b', "urls": ', _formatted(r.urls) if r.urls else b"[]",
        b', "scores": ', _FORMAT(enc(r.scores), indent=0), b', "passed": ', _TRUE if r.passed else _FALSE,
        b', "duration_ms": ', enc(round(r.duration_ms, 1)), b', "repeat": ', enc(r.repeat),
        b', "attempts": ', enc(r.attempts), b', "cached": ', _TRUE if r.cached else _FALSE, b"}\n",
    ))


def _finite_result(r: SampleResult | TurnResult, *, with_checks: bool = True) -> bool:
    """No NaN or infinity in `r`: its numbers, its trace, its checks (unless not `with_checks`) and
    the plain JSON it carries (a check's value, the judge block, the inlined URLs, the gold labels);
    its turns likewise.
    Numbers are added up: a sum is finite only when every number in it is (a sum too large to be
    finite, or a value that is no number, answers no, and the strict encoder looks closer)."""
    s, t = r.scores, r.trace
    k = t.tokens
    try:
        total = (s.fact or 0) + (s.behavior or 0) + (s.judge or 0) + s.composite + getattr(r, "duration_ms", 0.0)
        total += (t.turns or 0) + (t.cost_usd or 0) + (t.latency_ms or 0) + (t.api_latency_ms or 0)
        total += (k.input or 0) + (k.output or 0) + (k.cache_read or 0) + (k.cache_creation or 0)
        checks = _checks_total(r.assertions) if with_checks else 0.0
    except (TypeError, OverflowError):
        return False
    if not math.isfinite(total + checks):
        return False
    urls, gold = getattr(r, "urls", ()), getattr(r, "gold", ())  # a turn has neither
    return (
        (not t.tool_calls or all(_finite_value(c.input) and _finite_value(c.output) for c in t.tool_calls))
        and (r.judge is None or _finite_value(r.judge.to_json()))
        and (not urls or _finite_value(urls))
        and (not gold or _finite_value(gold))
        and (not r.turns or all(_finite_result(turn) for turn in r.turns))
    )


def _checks_total(checks: tuple[AssertionResult, ...]) -> float:
    """The sum of the checks' numbers (their children's too); NaN when a value they show holds a
    NaN or an infinity."""
    total = 0.0
    for a in checks:
        total += a.weight + (a.metric or 0) + (a.score or 0)
        value = a.value
        if not (value is None or value.__class__ is str or value.__class__ is int or _finite_value(value)):
            return math.nan
        if a.children:
            total += _checks_total(a.children)
    return total


def _finite_value(value: Any) -> bool:
    """No NaN or infinity in plain JSON values (dicts, lists and tuples looked into)."""
    kind = value.__class__
    if kind is float:
        return math.isfinite(value)
    if kind is str or kind is int or value is None:
        return True
    if isinstance(value, dict):
        return all(_finite_value(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite_value(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


def _encode(text: str) -> bytes:
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a model's output
        from omk.io.textsafe import scrub

        return (scrub(text) + "\n").encode("utf-8")


class Results(LazyResults):
    """A run's results in plan order, read from the run's `ResultLog` when asked for."""

    def __init__(self, log: ResultLog, keys: list[Key]):
        self.log = log
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def _read(self, positions: range) -> Iterator[SampleResult]:
        return self.log.results(self.keys[i] for i in positions)

    def get(self, key: Key) -> SampleResult | None:
        """The result of (sample_id, repeat), or None."""
        return self.log.result(key) if key in self.log else None

    def texts(self) -> Iterator[str]:
        """Each result's JSON text, as report.json holds it."""
        return self.log.texts(self.keys)

    def lines(self) -> Iterator[tuple[bytes, int] | str]:
        """The results as report.json holds them: lines this run wrote as their UTF-8 bytes (one
        or more in a piece, each ending with its newline, with their number), else each one's text."""
        return self.log.lines(self.keys)


def _open_log(path: Path, fresh: bool) -> BinaryIO:
    """results.jsonl opened to append to, never through a link: a fresh run replaces whatever is
    at the path (a link to `~/.bashrc` in a reused folder is removed, not written through), and a
    resumed one refuses a link (the file rules refused it when it was read, too)."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    if fresh:
        path.unlink(missing_ok=True)
        flags |= os.O_EXCL
    else:
        flags |= os.O_APPEND
    return os.fdopen(os.open(path, flags, 0o666), "ab" if not fresh else "wb", buffering=0)
