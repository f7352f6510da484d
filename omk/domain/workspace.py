"""A sample's workspace: the folder an agent works in, and what it left there.

A sample's `workspace:` names a folder (relative to the samples file, inside the project, as
omk.io.safe_files rules) that is copied into a fresh folder before the agent starts; the user's
folder itself is never touched. Before the agent runs, the fresh folder is listed (`snapshot`);
after it, the two listings give the files it created, changed and deleted (`diff`), with the
start of each new text masked. The folder then stays (`WorkFolder`) until the sample's checks
(`file_contains`, `command_passes`…) have looked at it, and is removed.

Used by the agent targets (`claude:`, and `cmd:` when the sample has `workspace:`) and by the
run engine; below both.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omk.io.safe_files import copy_confined, open_regular, sample_path, special_reason
from omk.records import FileChange, WorkspaceChanges
from omk.samples.model import Sample

CONTENT_CHARS = 2000  # the start of a created or changed text file kept in the report
READ_BYTES = 256 * 1024  # read of such a file to mask it whole before it is cut
MAX_FILES = 5000  # files listed at most; a workspace with more is listed up to this many
# A listing reads a file to hash it only up to this size, and at most LISTING_BYTES in all; a file
# past either is compared by its size and modification time instead (an agent can leave a sparse
# file of gigabytes: it is never read whole, and the sample's notes say it was not compared by content).
HASH_BYTES = 64 * 1024 * 1024
LISTING_BYTES = 512 * 1024 * 1024
UNREAD = "unread:"  # the start of the digest of a file compared by size and time
Snapshot = dict[str, tuple[int, str]]  # relative path -> (size, sha256, or UNREAD with size and time)
# The assertion types that look at the folder an agent leaves (omk.assertions.workspace).
WORKSPACE_TYPES = frozenset({"file_exists", "file_contains", "file_json_schema", "files_changed", "command_passes"})


def checks_workspace(sample: Sample) -> bool:
    """Whether any of the sample's checks (a turn's, or one inside an assert-set) looks at the
    workspace: only then does a target keep the folder for the run engine, and the response cache
    is not used (the folder is not cached)."""

    def walk(specs: Any) -> bool:  # only an assert-set has children: a leaf's are not asked for
        for spec in specs:  # a plain loop: this runs for every sample, and most look at no folder
            kind = spec.type
            if kind in WORKSPACE_TYPES or (kind == "assert-set" and walk(spec.children)):
                return True
        return False

    if walk(sample.assertions):
        return True
    return any(walk(turn.assertions) for turn in sample.turns)


def workspace_source(sample: Sample) -> Path | None:
    """The folder the sample's `workspace:` names, or None when it has none."""
    name = sample.workspace
    return sample_path(name, sample.base_dir) if name else None


def copy_workspace(sample: Sample, dest: Path) -> list[str]:
    """Copy the sample's workspace folder into `dest`; notes on what was left out (a symlink that
    leads outside it, a special file), as `files_available` copies do."""
    source = workspace_source(sample)
    if source is None:
        return []
    real = Path(os.path.realpath(source))
    if (why := special_reason(real)) is not None:
        return [f"workspace: not copied: {why}"]
    if not real.is_dir():
        return [f"workspace: {sample.workspace!r} is not a folder; nothing copied"]
    dest.mkdir(parents=True, exist_ok=True)
    skipped: list[str] = []
    for child in sorted(real.iterdir()):
        skipped += copy_confined(child, dest / child.name, real)
    return [f"workspace: {s!r} leads outside {real} or is not a regular file; not copied" for s in skipped]


def snapshot(folder: Path) -> Snapshot:
    """Every regular file under `folder` (symlinks are not followed): its size and digest, read in
    pieces within HASH_BYTES a file and LISTING_BYTES in all (past them: its size and time)."""
    found: Snapshot = {}
    budget = LISTING_BYTES
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(root, name)
            try:
                info = path.lstat()
                if not stat.S_ISREG(info.st_mode):
                    continue
                digest = _digest(path, info, budget)
            except OSError:
                continue
            budget -= 0 if digest.startswith(UNREAD) else info.st_size
            found[path.relative_to(folder).as_posix()] = (info.st_size, digest)
            if len(found) >= MAX_FILES:
                return found
    return found


def _digest(path: Path, info: os.stat_result, budget: int) -> str:
    """The file's sha256, read in pieces; its size and time when it is over either bound (or
    grows past it while being read)."""
    unread = f"{UNREAD}{info.st_size}:{info.st_mtime_ns}"
    cap = min(HASH_BYTES, budget)
    if info.st_size > cap:
        return unread
    digest, total = hashlib.sha256(), 0
    with open_regular(path) as f:
        while chunk := f.read(1 << 20):
            total += len(chunk)
            if total > cap:
                return unread
            digest.update(chunk)
    return digest.hexdigest()


def unread_notes(listing: Snapshot) -> list[str]:
    """The sample's notes on the files a listing compared by size and time, not by content."""
    return [
        f"workspace: {rel} ({size} bytes) was compared by its size and modification time, not read (over {HASH_BYTES} bytes)"
        for rel, (size, digest) in listing.items()
        if digest.startswith(UNREAD)
    ]


def _text(path: Path, mask: Callable[[str], str]) -> tuple[str | None, bool]:
    """The start of a text file, masked in full before it is cut; (None, False) for binary."""
    try:
        with open_regular(path) as f:
            data = f.read(READ_BYTES)
    except OSError:
        return None, False
    if b"\x00" in data[:8192]:
        return None, False
    text = mask(data.decode("utf-8", errors="replace"))
    return (text[:CONTENT_CHARS], True) if len(text) > CONTENT_CHARS else (text, False)


def diff(before: Snapshot, after: Snapshot, folder: Path, mask: Callable[[str], str]) -> WorkspaceChanges:
    """The files created, changed and deleted between two listings of `folder`, by path."""

    def change(rel: str, size: int) -> FileChange:
        content, cut = _text(folder / rel, mask)
        return FileChange(rel, size, content, cut)

    created = tuple(change(p, after[p][0]) for p in sorted(after) if p not in before)
    changed = tuple(change(p, after[p][0]) for p in sorted(after) if p in before and before[p] != after[p])
    deleted = tuple(FileChange(p, before[p][0]) for p in sorted(before) if p not in after)
    return WorkspaceChanges(created, changed, deleted)


class WorkFolder:
    """The folder an agent worked in, kept after its run for the sample's checks; `remove()`
    deletes it (and whatever the target kept beside it). A plain class: every run imports this
    module, and only agent targets make one."""

    __slots__ = ("changes", "folder", "remove")

    def __init__(self, folder: Path, changes: WorkspaceChanges | None = None, remove: Callable[[], None] | None = None):
        self.folder = folder
        self.changes = changes if changes is not None else WorkspaceChanges()
        self.remove: Callable[[], None] = remove if remove is not None else _keep


def _keep() -> None:
    """A folder nobody removes (a target that keeps nothing beside it)."""


class FreshFolder:
    """A new temporary folder with the sample's workspace copied in and listed: where an agent
    target runs a sample that has `workspace:`. `hand_over` gives it to the run's checks."""

    def __init__(self, sample: Sample, prefix: str = "omk-work-"):
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.root), True)  # also at exit
        self.work = self.root / "work"
        self.work.mkdir()
        self.notes = copy_workspace(sample, self.work)
        self.baseline = snapshot(self.work)

    def changes(self, mask: Callable[[str], str]) -> tuple[WorkspaceChanges, list[str]]:
        """What the agent changed, and notes on files too large to compare by content."""
        after = snapshot(self.work)
        return diff(self.baseline, after, self.work, mask), unread_notes(after)

    def hand_over(self, changes: WorkspaceChanges) -> WorkFolder:
        return WorkFolder(self.work, changes, self.remove)

    def remove(self) -> None:
        self._cleanup()
