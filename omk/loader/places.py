"""Where a sample and its parts were written, without keeping the parsed file after loading.

A sample's own line is found while loading: every result carries it. The line of one of its
parts (an assertion, a turn) is asked for rarely, by a message about that part; keeping it for
every part of every sample, or keeping the parsed file with its line maps, would cost memory on
every run for the sake of a few messages. So a part's line is found when first asked:

* in a JSON Lines file it is the sample's own line (a record is one line);
* in a JSON or YAML file the file is read again, once: its line map is then kept for the next
  question (whoever asks for one part's line tends to ask for more). The file must be unchanged
  since loading (same size and modification time); otherwise the line is unknown (None), never
  a wrong one.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from omk.loader.document import LineLookup, ParseFailure, Path_
from omk.samples.model import Part, SourceRef, part_label


class _Unknown:
    def line(self, path: Path_) -> int | None:
        return None


class PartLines:
    """Places the parts of the samples of one JSON or YAML file, reading it again when asked."""

    __slots__ = ("path", "prefix", "stamp", "_lines")

    def __init__(self, path: Path, prefix: Path_):
        self.path = path.resolve()
        self.prefix = prefix  # where the samples list is in the file: ("samples",) or ()
        self.stamp = _stamp(self.path)
        self._lines: LineLookup | None = None

    def line(self, index: int, rel: Path_) -> int | None:
        if self._lines is None:
            self._lines = self._read_again()
        return self._lines.line((*self.prefix, index, *rel))

    def _read_again(self) -> LineLookup:
        from omk.loader.json_lines import JsonLocator
        from omk.loader.read import YAML_SUFFIXES, parse_text, read_text

        if self.stamp is None or _stamp(self.path) != self.stamp:
            return _Unknown()
        try:
            text = read_text(self.path)
            if self.path.suffix.lower() in YAML_SUFFIXES:
                return parse_text(text, self.path.suffix).lines
            return JsonLocator(text, unique_keys=True)  # it loaded: no object repeats a key
        except (ParseFailure, RecursionError):
            return _Unknown()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


class SampleRef(SourceRef):
    """The place of `samples[index]`, which places its parts: through `parts` when given, else
    on the sample's line. Its `path` is written out when asked for, not kept."""

    __slots__ = ("_index", "_parts")

    def __init__(self, file: str, line: int | None, index: int, parts: PartLines | None):
        self.file = file
        self._line = line
        self._index = index
        self._parts = parts

    @property
    def path(self) -> str:  # type: ignore[override]  # worked out from the index; nothing sets a place's path once made
        return f"samples[{self._index}]"

    def part(self, rel: Part) -> SourceRef:
        if self._parts is None:
            return super().part(rel)
        return SourceRef(self.file, functools.partial(self._parts.line, self._index, rel), f"{self.path}.{part_label(rel)}")
