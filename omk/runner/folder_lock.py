"""One run at a time in a run folder, and a run folder that can be written before the run starts.

Two `omk eval` writing the same `--out` would interleave results.jsonl and each read back what the
other rewrote. A run (new or resumed) holds an exclusive `flock` on `.lock` in its folder from
before it writes anything until its reports are written; a second one is refused with one line
naming the folder. Creating the folder and the lock file is also the check that the folder can be
written at all (under a file, read-only): that is known before the run, so it is an InputError.
A write that fails later (a full disk) is a `RunFolderError`: the run stops, what was written
stays, and `omk eval --resume` finishes it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from omk.core.errors import InputError, OmkError

LOCK_FILE = ".lock"


class RunFolderError(OmkError):
    """The run folder could not be written mid-run: the run stops and can be resumed (exit 2)."""


class FolderLock:
    """The run folder's lock, held until `release` (or the process ends)."""

    def __init__(self, folder: Path, fd: int):
        self.folder = folder
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __del__(self) -> None:
        self.release()


def claim_folder(folder: Path) -> FolderLock:
    """Create `folder` if need be and lock it for this run; InputError when it cannot be written
    or another omk run holds it."""
    import fcntl

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        raise InputError(f"{folder}: cannot write the run folder: {exc.strerror or exc}; give another --out") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(f"{folder}: another omk run is using this run folder; wait for it to end or give another --out") from None
    return FolderLock(folder, fd)


def cannot_write(path: Path, exc: OSError, folder: Path | None) -> RunFolderError:
    """The error that stops a run whose folder stopped taking writes."""
    where = folder or path.parent
    return RunFolderError(
        f"{path}: cannot write: {exc.strerror or exc}; the run stopped, what finished is kept: "
        f"make room and finish it with omk eval --resume {shlex.quote(str(where))}"
    )
