"""What a recorded run's workspace held, carried over into the samples `omk sample --from-run`
writes: the files of the sample's `workspace:` folder that the agent's recorded calls named (read,
edited), copied beside the samples file, so that a replay starts from them.

Why: Claude Code checks an Edit (the file exists, it was read) before any hook. In a replay where
the Read is a mock's answer the CLI never read the file and refuses the Edit. With the file carried
over, the mock of a recorded Read of a file a later call edits says `run: true`: the real Read
runs on the carried copy (the hook counts it as the mock's hit), and the recorded Edit after it
reaches its mock as in the recording. Every other call stays a mock's answer.

The files are taken from the sample's workspace folder as it is now (found through the result's
source file, loaded again); the run itself keeps no copy of them. A file modified after the run
started may not be what the agent saw: it is carried as it is now, and the comment above the
sample and a line on stderr say so (`changed`), never silently. A file that is gone, changed into
a link or special file, or lies outside the folder is not carried. A text file is written with the
secrets this machine knows masked, as the samples' own text is (omk/authoring/from_run.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from omk.domain.tool_input import FRESH_FOLDER, path_of
from omk.io.safe_files import MAX_MOCK_FILE_BYTES, special_reason
from omk.records import SampleResult, ToolCall

READ_TOOLS = frozenset({"Read"})  # Claude Code's read: what a later Edit of the same file needs to have run
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})  # what Claude Code refuses on a file not read
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(slots=True)
class Carried:
    """The files of one sample's workspace the recorded calls named (path inside it → bytes),
    and why the rest were not carried."""

    files: dict[str, bytes] = field(default_factory=dict)
    why_not: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (path, when) carried, but modified after the run started


def inside_path(call: ToolCall) -> str | None:
    """The path inside the fresh folder the agent worked in that a call names (`src/app.py`), or None."""
    named = path_of(call.input)
    found = FRESH_FOLDER.match(named) if named else None
    inside = found.string[found.end() :].lstrip("/\\") if found else ""
    return inside or None


def calls_of(result: SampleResult) -> list[ToolCall]:
    return [c for turn in result.turns for c in turn.trace.tool_calls] if result.turns else list(result.trace.tool_calls)


def folder_name(sample_id: str) -> str:
    """A sample id as one safe folder name."""
    return _UNSAFE.sub("_", sample_id).strip("._") or "sample"


def carried_files(result: SampleResult, run_dir: Path, run_started: str | None = None) -> Carried:
    """The files of the result's sample workspace its recorded calls named (see the module text);
    `run_started` (the run's ISO start time) tells which were modified since."""
    wanted = list(dict.fromkeys(p for p in map(inside_path, calls_of(result)) if p is not None))
    if not wanted:
        return Carried()
    source, why = _workspace_folder(result, run_dir)
    if source is None:
        return Carried(why_not=[why] if why else [])
    carried = Carried()
    for inside in wanted:
        data = _read_inside(source, inside)
        if isinstance(data, bytes):
            carried.files[inside] = data
            if (since := _modified_since(source / inside, run_started)) is not None:
                carried.changed.append((inside, since))
        elif data:
            carried.why_not.append(data)
    return carried


def _read_inside(source: Path, inside: str) -> bytes | str | None:
    """The bytes of `inside` under `source`; why not as text; None when it is not there (a file
    the agent created)."""
    relative = PurePosixPath(inside.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts:
        return f"{inside}: outside the workspace folder"
    path = source.joinpath(*relative.parts)
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not Path(os.path.realpath(path)).is_relative_to(source):
        return f"{inside}: a link; not carried"
    if (reason := special_reason(path)) is not None or not path.is_file():
        return f"{inside}: {reason or 'not a regular file'}; not carried"
    if path.stat().st_size > MAX_MOCK_FILE_BYTES:
        return f"{inside}: over {MAX_MOCK_FILE_BYTES} bytes; not carried"
    return path.read_bytes()


def _modified_since(path: Path, run_started: str | None) -> str | None:
    """The file's modification time (ISO, UTC, to the second) when it is after `run_started`."""
    from datetime import UTC, datetime

    if not run_started:
        return None
    try:
        started = datetime.fromisoformat(run_started)
        modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except (ValueError, OSError):
        return None
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return modified.isoformat(timespec="seconds") if modified > started else None


def _samples_file(result: SampleResult, run_dir: Path) -> Path | None:
    """The samples file a result came from: its path as the run named it, from the current folder
    or from a folder above the run's."""
    if not result.source_file:
        return None
    named = Path(result.source_file)
    if named.is_absolute():
        return named if named.is_file() else None
    run = run_dir.resolve() if run_dir.is_dir() else run_dir.resolve().parent
    for base in (Path.cwd(), *run.parents[:4]):
        if (base / named).is_file():
            return base / named
    return None


def _workspace_folder(result: SampleResult, run_dir: Path) -> tuple[Path | None, str | None]:
    """The sample's `workspace:` folder (resolved), or None and why (None: it has none)."""
    from omk.core.errors import InputError
    from omk.domain.workspace import workspace_source
    from omk.loader import load_samples

    found = _samples_file(result, run_dir)
    if found is None:
        return None, f"workspace not carried: the samples file {result.source_file or '?'} was not found"
    try:
        loaded = load_samples([found])
    except (InputError, OSError) as exc:
        return None, f"workspace not carried: {found} does not load ({str(exc).splitlines()[0]})"
    sample = next((s for s in loaded.samples if s.sample_id == result.sample_id), None)
    source = workspace_source(sample) if sample is not None else None
    if source is None:
        return None, None
    real = Path(os.path.realpath(source))
    return (real, None) if real.is_dir() else (None, f"workspace not carried: {source} is not a folder")


def write_carried(folder: Path, files: dict[str, bytes]) -> None:
    """Write carried files under `folder` (made if missing)."""
    for inside, data in files.items():
        path = folder.joinpath(*PurePosixPath(inside.replace("\\", "/")).parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def reads_to_run(calls: Sequence[ToolCall], carried: dict[str, bytes]) -> set[str]:
    """The carried files (by path inside the folder) a recorded Read read and a later recorded
    call edited: the mocks of those Reads say `run: true`. Any other Read stays a mock's answer."""
    read: set[str] = set()
    edited: set[str] = set()
    for call in calls:
        path = inside_path(call)
        if path is None or path not in carried:
            continue
        if call.tool in READ_TOOLS:
            read.add(path)
        elif call.tool in EDIT_TOOLS and path in read:
            edited.add(path)
    return edited
