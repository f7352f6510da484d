"""What the foreign-format readers share: problems placed on lines, ids unique across files,
assertion specs built the loader's way (so `prepare` runs and sources point at the file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.core.errors import Problem
from omk.loader.build import SourceInfo, build_spec
from omk.loader.document import Document, Path_
from omk.loader.messages import field_label, kind_of
from omk.samples.model import AssertionSpec, SourceRef


class Reader:
    def __init__(self, doc: Document, file: str, base_dir: Path, first_ids: dict[str, tuple[str, int | None]]):
        self.doc = doc
        self.file = file
        self.base_dir = base_dir
        self.first_ids = first_ids
        self.problems: list[Problem] = []
        self._src = SourceInfo(file, "", doc.line, ())

    # --- problems -------------------------------------------------------------------------

    def line(self, path: Path_) -> int | None:
        return self.doc.line(path)

    def problem(self, path: Path_, message: str, where: str = "", rel: Path_ | None = None) -> None:
        """A problem at document `path`; `rel` is the part shown as the field (default: all of it)."""
        label = field_label(path if rel is None else rel)
        self.problems.append(Problem(self.file, self.line(path), where, label, message))

    def parse_issues(self) -> None:
        """What the parser objected to (duplicate keys…), as problems."""
        for issue in self.doc.issues:
            self.problems.append(Problem(self.file, issue.line, "", field_label(issue.path), issue.message))

    def need(self, value: Any, kind: type | tuple[type, ...], path: Path_, what: str, where: str = "", rel: Path_ | None = None) -> bool:
        """Is `value` of `kind` (booleans are never numbers)? Else a problem saying what was expected."""
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)))
        if not ok:
            self.problem(path, f"must be {what} (got {kind_of(value)})", where, rel)
        return ok

    # --- ids --------------------------------------------------------------------------------

    def claim_id(self, given: str | None, fallbacks: list[str], path: Path_, where: str, rel: Path_) -> str:
        """`given` (an explicit id: a duplicate is a problem) or the first free fallback (made
        unique with a suffix when every fallback is taken)."""
        line = self.line(path)
        if given is not None:
            first = self.first_ids.get(given)
            if first is not None:
                at = f"line {first[1]}" if first[0] == self.file else f"{first[0]}:{first[1]}"
                self.problem(path + rel, f'duplicate id "{given}" (first defined at {at})', where, rel)
            else:
                self.first_ids[given] = (self.file, self.line(path + rel))
            return given
        for candidate in fallbacks:
            if candidate and candidate not in self.first_ids:
                self.first_ids[candidate] = (self.file, line)
                return candidate
        base, n = fallbacks[-1], 2
        while f"{base}-{n}" in self.first_ids:
            n += 1
        self.first_ids[f"{base}-{n}"] = (self.file, line)
        return f"{base}-{n}"

    # --- specs ------------------------------------------------------------------------------

    def spec(self, raw: dict[str, Any], path: Path_, label: str, where: str, rel: Path_) -> AssertionSpec:
        """An assertion spec whose source is `path` in this file; a `prepare` problem (a regex that
        does not compile) is reported on `rel`, the field as the user wrote it."""
        found: list[tuple[Path_, str]] = []
        spec = build_spec(raw, path, self._src, found, label)
        for _, message in found:
            self.problem(path, message, where, rel)
        return spec

    def ref(self, path: Path_, label: str) -> SourceRef:
        return SourceRef(self.file, self.line(path), label)
