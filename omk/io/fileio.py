"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

WRITE_BUFFER = 1 << 20  # a report written piece by piece (a result at a time) goes out in large writes
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new file beside `path`, with the mode `open()` would give it (0o666 less the umask:
    reports are for sharing), opened for writing."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free name for a temporary file")


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary file in the same folder, then rename: readers never see half a file."""
    with open_atomic(path) as f:
        f.write(text)


@contextmanager
def open_atomic(path: Path) -> Iterator[TextIO]:
    """`with open_atomic(path) as f`: a text file (UTF-8) written piece by piece into a temporary
    file beside `path`, renamed onto it when the block ends without an error (removed otherwise)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", buffering=WRITE_BUFFER) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
