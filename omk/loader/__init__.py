"""Load sample files: files or folders, JSON / YAML / JSON Lines, every problem reported at once.

    loaded = load_samples(["evals/"])        # raises InputError listing every problem
    loaded.samples, loaded.files, loaded.requires, loaded.warnings

An unknown field on a sample (or one of its turns) is a warning: the sample loads without it and
`loaded.warnings` says where (`strict=True` makes it an error). When there are errors, the
`InputError` lists the warnings among them, in file and line order (a misspelled `promt` explains
the missing `prompt`).

Each problem is one line, `FILE:LINE: samples[i] (id) FIELD: what is wrong` (`omk.core.errors.Problem`).
Module map: `discover` (which files), `read` (bytes → `Document` with lines: `yaml_lines`,
`json_lines`; a JSON Lines file record by record), `record_memo` (a JSON Lines record or a JSON
file's sample read through a memo of its parts' text, when plainly valid), `share` (equal
content of a load becomes one object), `validate` (JSON Schema, per assertion type) and `rules` (what a schema cannot say),
`files` (hook and mock files that must exist), `build` (dicts → `Sample`), `places` (where a
sample's parts were written, found after loading), `messages` (wording).

Nothing keeps the parsed file once `load_samples` returns: samples hold their own data (shared
where equal) and their line, not the document.

`load_data` (mappings, for `omk.evaluate` given dicts) and `load_text` (the text of a file not yet
written, for `omk sample`, which checks the YAML it is about to write with its problems located in
that text) serve omk's own commands. Like the rest of omk.loader they are not the public API: a
program loads samples with `omk.load` (files) or gives `omk.evaluate` mappings (docs/python-api.md).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import InputError, Problem
from omk.loader import formats
from omk.loader.build import SourceInfo, build_sample, build_spec
from omk.loader.discover import discover, expand
from omk.loader.document import Document, Issue, NoLines, ParseFailure, Path_
from omk.loader.files import missing_files
from omk.loader.messages import did_you_mean, field_label, kind_of, one_of, show
from omk.loader.paths import allowed_dirs
from omk.loader.places import PartLines, SampleRef
from omk.loader.read import EMPTY_FILE, JSONL_SUFFIX, LineRecord, jsonl_records, parse_text, read_file
from omk.loader.record_memo import RecordMemo, json_document
from omk.loader.share import Sharer
from omk.loader.validate import check_requires, check_sample, unknown_field_message, unknown_fields
from omk.samples.model import Sample
from omk.version import __version__

__all__ = ["LoadedSamples", "discover", "load_data", "load_samples", "load_text"]

FILE_KEYS = ("schemaVersion", "samples", "requires", "$schema")
LineOf = Callable[[Path_], int | None]
SHAPE = 'expected an array of samples or an object with a "samples" field'
# Samples are checked and built a block at a time (`_FileLoader._samples`); a JSON Lines file's
# block also ends at this many bytes of its lines, so a file of long lines is not held whole.
BLOCK = 1024
BLOCK_BYTES = 1 << 22


@dataclass(slots=True)
class LoadedSamples:
    samples: list[Sample] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # in load order
    requires: dict[str, list[str]] = field(default_factory=dict)  # union over the files
    warnings: list[Problem] = field(default_factory=list)  # unknown fields, ignored (severity "warning")


def load_samples(
    paths: Sequence[str | Path], *, strict: bool = False, allowed: Callable[[Path], list[Path]] = allowed_dirs
) -> LoadedSamples:
    """Load and validate every file; raise `InputError` with all problems if there is any.
    `strict`: an unknown field on a sample is an error instead of a warning; `allowed`: the
    folders outside its own a samples file may use (default: its omk.yaml's `allow_paths`)."""
    files, problems = expand(paths)
    loaded = LoadedSamples(files=files)
    first_ids: dict[str, tuple[str, int | None]] = {}
    shared = Sharer()  # equal content in any of the files is one object (omk.loader.share)
    # The collector is left as the caller set it: a library call does not change process-wide
    # state. `omk eval` raises its thresholds, which a program loading very large sets may do too.
    for number, file in enumerate(files, 1):
        loader = _FileLoader(file, loaded, first_ids, shared, allowed(file), strict=strict)
        problems += loader.run()
        if number < len(files):
            loader.settle()  # the next files may repeat its ids
    if problems:
        raise InputError(_with_warnings(problems, loaded.warnings))
    return loaded


def _with_warnings(problems: list[Problem], warnings: list[Problem]) -> list[Problem]:
    """Errors and warnings together, each file's in line order (files in the order they loaded)."""
    if not warnings:
        return problems
    order: dict[str, int] = {}
    for p in (*problems, *warnings):
        order.setdefault(p.file, len(order))
    return sorted([*problems, *warnings], key=lambda p: (order[p.file], p.line or 0))


def load_data(data: Any, *, name: str = "<samples>", base_dir: Path | None = None, strict: bool = False) -> LoadedSamples:
    """Validate and build samples given as data (a list of sample mappings, or a document with
    `samples`, an M365 or a Big Sky dataset) exactly as a file with that content would be.
    `base_dir` is where hook and mock files resolve (default: the current directory). Raises
    `InputError` with every problem, named `NAME: samples[i] (id) field: what is wrong`."""
    loaded = LoadedSamples()
    loader = _FileLoader(Path(name), loaded, {}, Sharer(data=False), base_dir=base_dir or Path.cwd(), strict=strict)
    problems = loader.load(Document(data, NoLines()), from_file=False)
    if problems:
        raise InputError(_with_warnings(problems, loaded.warnings))
    return loaded


def load_text(text: str, *, name: str, suffix: str = ".yaml", base_dir: Path | None = None, strict: bool = False) -> LoadedSamples:
    """Validate and build samples from the text of a samples file (YAML by default) exactly as the
    file would load: every problem is located, `NAME:LINE: samples[i] (id) field: what is wrong`,
    the lines counted in `text`. `base_dir` is where mock and hook files resolve (default: the
    current directory). Raises `InputError` with every problem."""
    loaded = LoadedSamples()
    if not text.strip():
        raise InputError([Problem(name, None, "", "", EMPTY_FILE)])
    try:
        doc = parse_text(text, suffix)
    except ParseFailure as exc:
        raise InputError([Problem(name, exc.line, "", "", str(exc))]) from None
    loader = _FileLoader(Path(name), loaded, {}, Sharer(data=False), base_dir=base_dir or Path.cwd(), strict=strict)
    problems = loader.load(doc, from_file=False)
    if problems:
        raise InputError(_with_warnings(problems, loaded.warnings))
    return loaded


class _FileLoader:
    def __init__(
        self,
        file: Path,
        loaded: LoadedSamples,
        first_ids: dict[str, tuple[str, int | None]],
        shared: Sharer,
        allowed: list[Path] | None = None,
        base_dir: Path | None = None,
        strict: bool = False,
    ):
        self.file = file
        self.strict = strict
        self.allowed = allowed or []  # folders outside the samples file's own that its files may use
        self.name = str(file)
        self.loaded = loaded
        self.first_ids = first_ids
        self.shared = shared
        self.base_dir = base_dir
        self.problems: list[Problem] = []
        self.claimed: list[str] = []  # the sample ids this file added to `first_ids`
        self._unplaced: dict[str, Path_] = {}  # claimed ids whose line is not found yet: their sample's path
        self._lines: LineOf | None = None  # the line of a path in this file's document

    def run(self) -> list[Problem]:
        if (why := formats.refuse(self.file)) is not None:
            return [Problem(self.name, None, "", "", why)]
        if self.file.suffix.lower() == JSONL_SUFFIX:
            return self._stream()
        quick = _quick(self.file, self.shared) if self.shared.data else None
        try:
            doc = read_file(self.file, quick)
            if doc.shared and formats.detect(doc.data, self.file) != formats.OMK:
                doc = read_file(self.file)  # an M365 or Big Sky file: its reader takes the data as parsed
        except ParseFailure as exc:
            return [Problem(self.name, exc.line, "", "", str(exc))]
        except RecursionError:
            return [Problem(self.name, None, "", "", "the file is nested too deeply to read")]
        return self.load(doc)

    def _stream(self) -> list[Problem]:
        """A JSON Lines file, a block of records at a time: each block is checked and built
        before the next lines are read, so the file is never in memory whole. A file that turns
        out not to be UTF-8 text is one problem, as a JSON or YAML file is: what it added is
        taken back."""
        before = len(self.loaded.samples), len(self.loaded.warnings)
        base_dir, seen = self._base_dir(), False
        block: list[_Pending] = []
        size = 0  # the bytes of the block's lines
        try:
            for record in jsonl_records(self.file, RecordMemo(self.shared).record if self.shared.data else None):
                seen = True
                if (pending := self._record(record)) is not None:
                    block.append(pending)
                    size += record.size
                if len(block) >= BLOCK or size >= BLOCK_BYTES:
                    self._samples(block, base_dir)
                    block, size = [], 0
            self._samples(block, base_dir)
        except ParseFailure as exc:
            del self.loaded.samples[before[0] :], self.loaded.warnings[before[1] :]
            for sample_id in self.claimed:
                del self.first_ids[sample_id]
            return [Problem(self.name, exc.line, "", "", str(exc))]
        if not seen:
            return [Problem(self.name, None, "", "", EMPTY_FILE)]
        self.problems.sort(key=lambda p: p.line or 0)
        return self.problems

    def _record(self, record: LineRecord) -> _Pending | None:
        if record.too_long:
            from omk.io.safe_files import sample_file_cap

            message = f"this line is longer than the {sample_file_cap()} bytes omk reads in one line (OMK_MAX_SAMPLE_FILE_BYTES)"
            self.problems.append(Problem(self.name, record.line, f"samples[{record.index}]", "", message))
            return None
        raw = record.value if record.shared else self.shared.sample(record.value)
        return _Pending.of(self.name, record.line, None, (record.index,), record.index, raw, record.issues, None)

    def _base_dir(self) -> Path:
        return self.base_dir if self.base_dir is not None else self.file.resolve().parent

    def load(self, doc: Document, from_file: bool = True) -> list[Problem]:
        """`from_file`: the lines of the samples' parts can be found again by reading the file."""
        if (shape := formats.detect(doc.data, self.file)) != formats.OMK:
            return self._foreign(shape, doc)  # M365 or Big Sky (omk.loader.formats)
        unwrapped = self._unwrap(doc)
        by_sample: dict[int, list[Issue]] = defaultdict(list)
        if unwrapped is not None:
            items, prefix = unwrapped
            for issue in doc.issues:
                inside = issue.path[: len(prefix)] == prefix and len(issue.path) > len(prefix)
                if inside and isinstance(step := issue.path[len(prefix)], int):
                    by_sample[step].append(issue)
                else:
                    self._file_problem(issue.line, field_label(issue.path), issue.message)
            base_dir = self._base_dir()
            parts = PartLines(self.file, prefix) if from_file else None
            line_of = doc.line  # one bound method for every sample
            for start in range(0, len(items), BLOCK):
                block: list[_Pending] = []
                for index in range(start, min(start + BLOCK, len(items))):
                    shared = items[index] if doc.shared else self.shared.sample(items[index])
                    block.append(_Pending.of(self.name, None, line_of, prefix + (index,), index, shared, by_sample.get(index, ()), parts))
                    if from_file:  # the sample holds its own (shared) copy: the parsed one can go now
                        items[index] = None
                self._samples(block, base_dir)
        else:
            for issue in doc.issues:
                self._file_problem(issue.line, field_label(issue.path), issue.message)
        self.problems.sort(key=lambda p: p.line or 0)
        return self.problems

    def _foreign(self, shape: str, doc: Document) -> list[Problem]:
        samples, problems = formats.read_foreign(shape, doc, self.name, self._base_dir(), self.first_ids)
        self.loaded.samples.extend(samples)
        return problems

    def _file_problem(self, line: int | None, label: str, message: str) -> None:
        self.problems.append(Problem(self.name, line, "", label, message))

    def _unwrap(self, doc: Document) -> tuple[list[Any], Path_] | None:
        data = doc.data
        if isinstance(data, list):
            if not data:
                self._file_problem(doc.line(()), "", f"the file has no samples (an empty list); {SHAPE}")
                return None
            return data, ()
        if not isinstance(data, dict):
            self._file_problem(doc.line(()), "", f"{SHAPE} (got {kind_of(data)})")
            return None
        if "schemaVersion" in data:
            self._version(doc, data["schemaVersion"])
        if "samples" not in data:
            hint = ""
            if "sample_id" in data or "prompt" in data:
                hint = " (a single sample must still be in a list: start it with '- ' in YAML, wrap it in [ ] in JSON)"
            self._file_problem(doc.line(()), "", SHAPE + hint)
            return None
        for key in data:
            if key not in FILE_KEYS:
                allowed = ", ".join(f'"{k}"' for k in FILE_KEYS)
                message = f'unknown top-level field "{key}"{did_you_mean(key, FILE_KEYS)}; allowed: {allowed}'
                self._file_problem(doc.line((key,)), key, message)
        if "requires" in data:
            self._requires(doc, data["requires"])
        samples = data["samples"]
        if not isinstance(samples, list):
            self._file_problem(doc.line(("samples",)), "samples", f"must be a list of samples (got {kind_of(samples)})")
            return None
        if not samples:
            self._file_problem(doc.line(("samples",)), "samples", "is empty: the file has no samples")
            return None
        return samples, ("samples",)

    def _version(self, doc: Document, version: Any) -> None:
        from omk.loader.formats.m365 import VERSION
        from omk.schema.parts import SAMPLE_SET_VERSIONS

        if version in SAMPLE_SET_VERSIONS:
            return
        reads = f"omk {__version__} reads {one_of(SAMPLE_SET_VERSIONS)} (omk samples) and M365 eval documents of schema 1.x"
        if isinstance(version, str) and VERSION.match(version):
            why = f'{show(version)} is an M365 eval document version, but the file has "samples"; {reads}'
        elif isinstance(version, str) and version.startswith("omk.eval-sample-set/"):
            why = f"{show(version)} is a newer sample-set format than this omk reads: {reads}; upgrade omk"
        else:
            why = f"{show(version)} is not a version omk knows: {reads}"
        self._file_problem(doc.line(("schemaVersion",)), "schemaVersion", why)

    def _requires(self, doc: Document, requires: Any) -> None:
        found = check_requires(requires)
        for path, message in found:
            self._file_problem(doc.line(("requires", *path)), field_label(("requires", *path)), message)
        if not found:
            for key, values in requires.items():
                merged = self.loaded.requires.setdefault(key, [])
                merged.extend(v for v in values if v not in merged)

    def _samples(self, block: list[_Pending], base_dir: Path) -> None:
        """Check and build a block of samples, one step for the whole block at a time (checking,
        then building, then looking for the files they name): each step's code and tables stay
        in the processor's caches, where one sample after another through every step evicts
        them. Each sample's problems keep the order they have for a sample alone."""
        checked = [pending for pending in block if self._check(pending)]
        for pending in checked:
            if pending.named:
                self._claim(pending)
            self._build(pending, base_dir)
        for pending in checked:
            self._files(pending, base_dir)
        for pending in block:
            if pending.problems:
                self.problems += pending.problems

    def _check(self, pending: _Pending) -> bool:
        """Report what is wrong with the sample; False when it did not even parse."""
        raw, spath, issues, add = pending.raw, pending.spath, pending.issues, pending.add
        for issue in issues:
            add(issue.path[len(spath) :], issue.message, issue.line)
        if raw is None and any(issue.path == spath for issue in issues):
            return False  # a JSON Lines record that did not parse
        parsed_badly = {issue.path[len(spath) :] for issue in issues} if issues else ()
        unknown = unknown_fields(raw)
        for rel, message in check_sample(raw, self.shared.checked, unknown, self.shared.fields):
            if rel not in parsed_badly:  # e.g. the null left by an undefined alias
                add(rel, message)
        for rel, name in unknown:
            message = unknown_field_message(name, rel, strict=self.strict)
            if self.strict:
                add(rel, message)
            else:
                line = pending.line_of(spath + rel)
                self.loaded.warnings.append(Problem(self.name, line, pending.where(), field_label(rel), message, "warning"))
        return True

    def _claim(self, pending: _Pending) -> None:
        sample_id = pending.named
        assert sample_id is not None  # only a named sample claims its id
        first = self.first_ids.get(sample_id)
        if first is None:
            # The id's line is found when a repeat asks for it, or before the next file loads
            # (`settle`): most are never shown. A JSON Lines record's is its line, known.
            if pending.lines is None:
                self.first_ids[sample_id] = (self.name, pending.line)
            else:
                self.first_ids[sample_id] = (self.name, None)
                self._lines, self._unplaced[sample_id] = pending.lines, pending.spath
            self.claimed.append(sample_id)
        else:
            line = self._place(sample_id) if first[0] == self.name and first[1] is None else first[1]
            at = f"line {line}" if first[0] == self.name else f"{first[0]}:{line}"
            pending.add(("sample_id",), f'duplicate sample_id "{sample_id}" (first defined at {at})')

    def _place(self, sample_id: str) -> int | None:
        """The line of a sample id this file claimed, found now."""
        spath = self._unplaced.pop(sample_id, None)
        if spath is None or self._lines is None:
            return self.first_ids[sample_id][1]
        line = self._lines(spath + ("sample_id",))
        self.first_ids[sample_id] = (self.name, line)
        return line

    def settle(self) -> None:
        """Find the lines of the ids this file claimed, for the files loaded after it to name
        in their duplicate messages."""
        for sample_id in list(self._unplaced):
            self._place(sample_id)

    def _build(self, pending: _Pending, base_dir: Path) -> None:
        """The sample (or, when it has problems, its assertions that are fine, compiled so a bad
        regex shows up in this round too); what building found goes to `pending.found`."""
        raw, spath = pending.raw, pending.spath
        origin = SampleRef(self.name, pending.line_of(spath), pending.index, pending.parts)
        src = SourceInfo(self.name, origin.path, pending.lines, spath, origin, self.shared)
        found: list[tuple[Path_, str]] = []
        if pending.problems:
            bad = {p.field for p in pending.problems}
            for base, items in _assertion_lists(raw):
                _compile_fine(items, base, src, found, bad)
        else:
            pending.sample = build_sample(raw, src, base_dir, found)
        if found:
            pending.found = found

    def _files(self, pending: _Pending, base_dir: Path) -> None:
        """Hook and mock files that are not there; the sample is added when nothing was found."""
        found = pending.found or []
        if absent := missing_files(pending.raw, base_dir, self.allowed):
            taken = {p.field for p in pending.problems or ()} | {field_label(rel) for rel, _ in found}
            found += [(rel, message) for rel, message in absent if field_label(rel) not in taken]
        if pending.sample is not None and not found:
            self.loaded.samples.append(pending.sample)
        for rel, message in found:
            pending.add(rel, message)


class _Pending(msgspec.Struct, gc=False):
    """A sample read from its file, on its way through the checks (`_FileLoader._samples`), with
    the problems found in it so far. Not tracked by the garbage collector (nothing it holds
    refers back to it): a block of them would otherwise set off collections while loading."""

    file: str
    line: int | None  # the sample's line, where `lines` is None (a JSON Lines record)
    lines: LineOf | None  # the line of each path in the document
    spath: Path_  # the sample's path in its document
    index: int
    raw: Any
    issues: Sequence[Issue]  # from parsing
    parts: PartLines | None
    named: str | None = None  # its sample_id, when one is written
    problems: list[Problem] | None = None
    found: list[tuple[Path_, str]] | None = None  # building's (path in the sample, message)
    sample: Sample | None = None

    @classmethod
    def of(cls, file: str, line: int | None, lines: LineOf | None, spath: Path_, index: int, raw: Any, issues: Sequence[Issue], parts: PartLines | None) -> _Pending:
        sample_id = raw.get("sample_id") if isinstance(raw, dict) else None
        named = sample_id if isinstance(sample_id, str) and sample_id != "" else None
        return cls(file, line, lines, spath, index, raw, issues, parts, named)

    def line_of(self, path: Path_) -> int | None:
        return self.lines(path) if self.lines is not None else self.line

    def where(self) -> str:
        return f"samples[{self.index}] ({self.named})" if self.named else f"samples[{self.index}]"

    def add(self, rel: Path_, message: str, line: int | None = None) -> None:
        """A problem at `rel` in the sample (on `line`, or on the line of that path)."""
        if self.problems is None:
            self.problems = []
        self.problems.append(Problem(self.file, line or self.line_of(self.spath + rel), self.where(), field_label(rel), message))


def _quick(file: Path, shared: Sharer) -> Callable[[str], Document | None]:
    """How a JSON or YAML file is read first, its samples shared through the load's `shared`."""
    from omk.loader.read import YAML_SUFFIXES

    if file.suffix.lower() in YAML_SUFFIXES:
        from omk.loader.yaml_memo import yaml_document  # PyYAML is imported only for YAML files

        return functools.partial(yaml_document, shared=shared)
    return functools.partial(json_document, memo=RecordMemo(shared))


def _compile_fine(items: list[Any], base: Path_, src: SourceInfo, found: list[tuple[Path_, str]], bad: set[str]) -> None:
    """Compile the assertions without a problem of their own; under a set that has one (an
    unknown mode), still its children, so their own errors show up in the same round."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        label = field_label(base + (i,))
        if not any(f == label or f.startswith((label + ".", label + "[")) for f in bad):
            build_spec(item, base + (i,), src, found)
        elif isinstance(item.get("children"), list):
            _compile_fine(item["children"], base + (i, "children"), src, found, bad)


def _assertion_lists(raw: Any) -> list[tuple[Path_, list[Any]]]:
    """The sample's assertion lists with their paths: its own, then each turn's."""
    if not isinstance(raw, dict):
        return []
    found: list[tuple[Path_, list[Any]]] = []
    if isinstance(raw.get("assertions"), list):
        found.append((("assertions",), raw["assertions"]))
    turns = raw.get("turns")
    for j, turn in enumerate(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict) and isinstance(turn.get("assertions"), list):
            found.append((("turns", j, "assertions"), turn["assertions"]))
    return found
