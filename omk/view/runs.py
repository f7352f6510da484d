"""The run folders `omk view` shows, read by their headers: report.json's top level (its results
are read only when a run is opened) and run.json's commit.

A folder is a run when it holds a report.json omk wrote; folders given that are not runs are
searched one level down (`.omk/runs` holds one folder per run). A folder whose report.json is an
`omk evolve` report (`.omk/evolve/<id>/`) is an evolve run, listed apart and read by its own record. Every file goes through the same
rules as `omk report` (regular files only, a size cap), so a hostile folder cannot hang the view.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from omk.core.errors import InputError
from omk.records.document import ReportDocument, read_document

if TYPE_CHECKING:
    from omk.evolve.report import EvolveReport

REPORT = "report.json"
EVOLVE_MARK = b'"format": "omk-evolve/'  # how an evolve report.json opens (its first key)


class RunEntry(msgspec.Struct, frozen=True):
    """One run as the list shows it; `key` names it in the view's addresses."""

    key: str
    folder: Path
    document: ReportDocument
    commit: str | None

    @property
    def started_at(self) -> str:
        return self.document.started_at or ""

    @property
    def target(self) -> str:
        if self.document.experiment is not None:
            return " vs ".join(v.name for v in self.document.experiment.variants)
        return self.document.target.name or "?"

    @property
    def suite(self) -> str:
        """The sample set: its files' names (runs of the same set and target form one trend)."""
        return ", ".join(Path(f).name for f in self.document.samples_files) or "?"

    @property
    def pass_rate(self) -> float | None:
        s = self.document.summary
        return s.passed / s.total if s.total else None

    @property
    def composite(self) -> float | None:
        return self.document.summary.scores.composite

    @property
    def verdict(self) -> str | None:
        exp = self.document.experiment
        return exp.verdict.headline if exp is not None else None


class EvolveEntry(msgspec.Struct, frozen=True):
    """One `omk evolve` output folder as the list shows it; its page is drawn from `report`."""

    key: str
    folder: Path
    report: EvolveReport


def _is_evolve(folder: Path) -> bool:
    """Whether the folder's report.json opens as an evolve report does (its first bytes, read by
    the file rules: a FIFO, a device or a link out of the folder is not opened)."""
    from omk.io.safe_files import link_out_reason, special_reason

    path = folder / REPORT
    if special_reason(path) or link_out_reason(path):
        return False
    try:
        with path.open("rb") as f:
            return EVOLVE_MARK in f.read(64)
    except OSError:
        return False


def find_evolve_runs(roots: list[Path]) -> tuple[list[EvolveEntry], list[str]]:
    """The evolve runs under `roots` (by folder name, which starts with the time it was made),
    and one line per folder that could not be read."""
    from omk.evolve.report import read_report
    from omk.io.safe_files import read_run_file

    found: list[EvolveEntry] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for folder in _candidates(roots):
        if folder.resolve() in seen or not _is_evolve(folder):
            continue
        seen.add(folder.resolve())
        try:
            found.append(EvolveEntry("", folder, read_report(read_run_file(folder / REPORT), str(folder / REPORT))))
        except OSError as exc:
            problems.append(f"{folder / REPORT}: {exc.strerror or exc}")
        except InputError as exc:
            problems.append(str(exc))
    found.sort(key=lambda e: e.folder.name)
    keys = _unique(["".join(c if c.isalnum() or c in "-_." else "-" for c in e.folder.name) or "evolve" for e in found])
    return [EvolveEntry(k, e.folder, e.report) for k, e in zip(keys, found, strict=True)], problems


def find_runs(roots: list[Path]) -> tuple[list[RunEntry], list[str]]:
    """The runs under `roots`, oldest first, and one line per folder that could not be read."""
    found: list[RunEntry] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for folder in _candidates(roots):
        real = folder.resolve()
        if real in seen or _is_evolve(folder):
            continue
        seen.add(real)
        try:
            document = read_document(folder / REPORT)
        except InputError as exc:
            problems.append(str(exc))
            continue
        found.append(RunEntry("", folder, document, _commit(folder)))
    # oldest first; runs started in the same second by when they finished, then by folder name
    found.sort(key=lambda r: (r.started_at, r.document.finished_at or "", r.folder.name))
    keys = _keys(found)
    return [RunEntry(k, r.folder, r.document, r.commit) for k, r in zip(keys, found, strict=True)], problems


def _candidates(roots: list[Path]) -> list[Path]:
    out = []
    for root in roots:
        if (root / REPORT).is_file():
            out.append(root)
        elif root.is_dir():
            out += sorted(p for p in root.iterdir() if p.is_dir() and (p / REPORT).is_file())
    return out


def _keys(runs: list[RunEntry]) -> list[str]:
    """A short, unique, URL-safe name per run: its run id, else its folder's name."""
    return _unique(["".join(c if c.isalnum() or c in "-_." else "-" for c in (r.document.run_id or r.folder.name)) or "run" for r in runs])


def _unique(bases: list[str]) -> list[str]:
    keys: list[str] = []
    for base in bases:
        key, n = base, 2
        while key in keys:
            key, n = f"{base}-{n}", n + 1
        keys.append(key)
    return keys


def _commit(folder: Path) -> str | None:
    from omk.core.errors import InputError
    from omk.io.safe_files import read_run_file
    from omk.records.manifest import RunManifest

    try:
        commit = RunManifest.read(read_run_file(folder / "run.json"), str(folder / "run.json")).git
    except (OSError, InputError):
        return None
    return commit if commit is not None and len(commit) == 40 else None
