"""The embedded data of a large `report.html`: each result as plain JSON, compressed as it is read.

A large page cannot hold a row and a detail panel of HTML for every result, so it carries the
results as data instead and its script draws the table one page at a time and a detail panel
when one is asked for. The data is text, never markup: every value here is a string, a number or
a list of them, shown by the page's script through `textContent`, so nothing from the run can
become HTML. A panel is the tree a small page renders (omk/report/html_panel.py), so a panel
drawn in the browser reads like one rendered in Python, with one difference: the page carries at
most `TEXT_SHOWN` characters of any one text (a prompt, an output, a tool call's input or output,
a fetched page) and says how much more report.json holds, so a run of long outputs still makes
a page a browser can open.

Two kinds of block, each `<script type="application/octet-stream">` holding base64 of gzip of
JSON (not a script to run; the page's policy never has to allow it):

- `omk-rows`: one JSON array, a `row()` per result in run order; the table reads it once.
- `omk-details-K`: a JSON array of the `panel()` of results K*CHUNK .. K*CHUNK+CHUNK-1; the page
  decompresses one such block only when a panel of it is opened.

Both are compressed incrementally (`zlib.compressobj`) into temporary files while the results are
read, so neither the results nor their text are ever all in memory at once.
"""

from __future__ import annotations

import base64
import contextlib
import json
import tempfile
import zlib
from collections.abc import Iterator
from typing import IO, Any

from omk.records.result import SampleResult
from omk.report.html_panel import panel, state
from omk.report.i18n import t

CHUNK = 100  # results per details block: a panel decompresses this many results' details
GZIP = 31  # zlib's wbits for a gzip stream, which the browser's DecompressionStream("gzip") reads
B64_READ = 3 * 64 * 1024  # a multiple of 3, so the base64 of each piece joins into one valid text
TEXT_SHOWN = 20_000  # characters of one text a large page carries; report.json keeps all of it


def row(i: int, r: SampleResult) -> dict[str, Any]:
    """What the table shows of one result (and searches and sorts by); `index` is its place in the run."""
    sc = r.scores
    return {
        "index": i,
        "id": r.sample_id,
        "repeat": r.repeat,
        "state": state(r),
        "fact": sc.fact,
        "behavior": sc.behavior,
        "judge": sc.judge,
        "composite": sc.composite if r.status == "ok" else None,
        "cost": r.trace.cost_usd,
        "latency": r.trace.latency_ms,
        "capability": list(r.capability),
        "difficulty": r.difficulty,
    }


def cut(value: Any, lang: str) -> Any:
    """`value` (a panel's tree) with each text longer than `TEXT_SHOWN` characters cut there, followed
    by how many more characters report.json holds."""
    if isinstance(value, str):
        if len(value) <= TEXT_SHOWN:
            return value
        more = t("… {n} more characters: see report.json", lang).format(n=f"{len(value) - TEXT_SHOWN:,}")
        return f"{value[:TEXT_SHOWN]}\n{more}"
    if isinstance(value, dict):
        return {k: cut(v, lang) for k, v in value.items()}
    if isinstance(value, list):
        return [cut(v, lang) for v in value]
    return value


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class JsonArrayStream:
    """A JSON array written one item at a time through one gzip stream into `sink`."""

    def __init__(self, sink: IO[bytes]) -> None:
        self.sink = sink
        self.z = zlib.compressobj(6, zlib.DEFLATED, GZIP)
        self.count = 0
        self.raw_bytes = 0

    def add(self, item_json: bytes) -> None:
        piece = (b"," if self.count else b"[") + item_json
        self.count += 1
        self.raw_bytes += len(piece)
        self.sink.write(self.z.compress(piece))

    def close(self) -> None:
        self.sink.write(self.z.compress(b"]" if self.count else b"[]"))
        self.sink.write(self.z.flush())


class EmbeddedData:
    """The rows stream and the detail chunks of a large page, built while the results are read."""

    def __init__(self, lang: str, rows_file: IO[bytes], details_file: IO[bytes], chunk_file: IO[bytes]) -> None:
        self.lang = lang
        self.rows_file = rows_file
        self.details_file = details_file  # the finished details blocks
        self.chunk_file = chunk_file  # the compressed details of the chunk being read
        self.rows = JsonArrayStream(self.rows_file)
        self.chunk = JsonArrayStream(self.chunk_file)
        self.chunks = 0
        self.raw_bytes = 0

    def add(self, i: int, r: SampleResult) -> None:
        self.rows.add(dumps(row(i, r)))
        tree = panel(i, r, self.lang)
        data = dumps(tree)
        if len(data) > TEXT_SHOWN:  # else no text in it can be longer (its JSON is at least as long)
            data = dumps(cut(tree, self.lang))
        self.chunk.add(data)
        if self.chunk.count == CHUNK:
            self._end_chunk()

    def _end_chunk(self) -> None:
        self.chunk.close()
        self.raw_bytes += self.chunk.raw_bytes
        self.details_file.write(f'<script type="application/octet-stream" id="omk-details-{self.chunks}">'.encode())
        self.chunk_file.seek(0)
        self.details_file.writelines(_base64(self.chunk_file))
        self.details_file.write(b"</script>\n")
        self.chunks += 1
        self.chunk_file.seek(0)
        self.chunk_file.truncate()
        self.chunk = JsonArrayStream(self.chunk_file)

    def blocks(self) -> Iterator[str]:
        """The page's data blocks as text, in pieces (after the last result was added)."""
        if self.chunk.count:
            self._end_chunk()
        self.rows.close()
        self.raw_bytes += self.rows.raw_bytes
        self.rows_file.seek(0)
        yield f'<script type="application/octet-stream" id="omk-rows" data-chunk="{CHUNK}">'
        yield from (piece.decode("ascii") for piece in _base64(self.rows_file))
        yield "</script>\n"
        self.details_file.seek(0)
        while piece := self.details_file.read(B64_READ):
            yield piece.decode("ascii")

    @classmethod
    @contextlib.contextmanager
    def open(cls, lang: str) -> Iterator[EmbeddedData]:
        """Data backed by temporary files, removed when the block ends."""
        with (
            tempfile.TemporaryFile() as rows,
            tempfile.TemporaryFile() as details,
            tempfile.SpooledTemporaryFile(max_size=4 * 1024 * 1024) as chunk,
        ):
            yield cls(lang, rows, details, chunk)


def _base64(f: IO[bytes]) -> Iterator[bytes]:
    while piece := f.read(B64_READ):
        yield base64.b64encode(piece)
