"""Reading files a sample file names, safely: only regular files, inside the project, size-capped.

Sample files come from other people. A mock's `return_file` or a custom hook's `fn` must stay
inside the project folder (the samples file's folder) or a folder omk.yaml allows with
`allow_paths`; `../`, an absolute path or a symlink that leads out is refused. Special files
(`/proc/…`, `/sys/…`, `/dev/…`, FIFOs, sockets, devices) are never read, as sample input or mock
output: a FIFO would block the run forever, `/dev/zero` would fill memory, and `/proc/self/environ`
holds the API keys.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import BinaryIO

# A JSON or YAML samples file larger than this is refused, and so is one line of a JSON Lines
# file, which is read one line at a time and has no limit on its size (OMK_MAX_SAMPLE_FILE_BYTES).
MAX_SAMPLE_FILE_BYTES = 64 * 1024 * 1024
MAX_MOCK_FILE_BYTES = 16 * 1024 * 1024  # a return_file larger than this is refused
SPECIAL_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))


class UnsafeFile(OSError):
    """A file omk will not read; the message says why in plain words."""


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def special_reason(path: Path) -> str | None:
    """Why `path` (resolved) is a special file omk never reads, or None."""
    real = Path(os.path.realpath(path))
    if any(_under(real, root) for root in SPECIAL_ROOTS):
        return f"{real} is a system file (/proc, /sys, /dev), not a project file"
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return None  # missing: the caller says "not found"
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a directory is "not found" to the callers
        return f"{real} is not a regular file (a FIFO, socket or device)"
    return None


def escape_reason(path: Path, roots: list[Path]) -> str | None:
    """Why `path` is outside every root (after following symlinks), or None when it is inside one."""
    real = Path(os.path.realpath(path))
    if any(_under(real, Path(os.path.realpath(root))) for root in roots):
        return None
    where = Path(os.path.realpath(roots[0])) if roots else Path.cwd()
    return f"{real} is outside the project folder {where}; allow its folder with allow_paths in omk.yaml"


def open_regular(path: Path, *, update: bool = False, buffering: int = -1) -> BinaryIO:
    """A regular file opened for reading in binary (`update`: for reading and writing, as "r+b");
    UnsafeFile for anything else. `buffering` as for `open` (a large buffer for a file read line
    by line from start to end).

    Opened without blocking (a FIFO swapped in after a check cannot hang the run) and checked
    with fstat on the open descriptor, so what is read is what was checked."""
    if (why := special_reason(path)) is not None:
        raise UnsafeFile(errno.EINVAL, why)
    flags = (os.O_RDWR if update else os.O_RDONLY) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(errno.EINVAL, f"{path} is not a regular file (a FIFO, socket or device)")
    except BaseException:
        os.close(fd)
        raise
    if update:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r+b", buffering)
    return os.fdopen(fd, "rb", buffering)


def read_regular_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file (`open_regular`), at most `max_bytes`; UnsafeFile for anything else."""
    with open_regular(path) as f:
        if os.fstat(f.fileno()).st_size > max_bytes:
            raise UnsafeFile(errno.EFBIG, f"{path} is larger than the {max_bytes} bytes omk reads")
        chunks, total = [], 0
        while chunk := f.read(1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew while being read
                raise UnsafeFile(errno.EFBIG, f"{path} is larger than the {max_bytes} bytes omk reads")
        return b"".join(chunks)


def read_text_file(path: Path, max_bytes: int | None = None) -> str:
    """A file a user or a sample names (omk.yaml, a skill, a script, a replay file), read by the
    file rules: a regular file (never a FIFO, a device or a file in /proc, /sys or /dev), at most
    `max_bytes` (default: the samples file cap), decoded as UTF-8 with or without a BOM. OSError
    (UnsafeFile, whose `strerror` says why) and UnicodeDecodeError come through to the caller."""
    raw = read_regular_bytes(path, sample_file_cap() if max_bytes is None else max_bytes)
    return raw.decode("utf-8-sig")


def file_sha256(path: Path, max_bytes: int | None = None) -> str:
    """The sha256 of a file by the file rules (`open_regular`), read in pieces: a file of
    gigabytes is never held whole, and one over `max_bytes` (default: the samples file cap) is
    UnsafeFile, like a FIFO or a device."""
    import hashlib

    cap = sample_file_cap() if max_bytes is None else max_bytes
    digest, total = hashlib.sha256(), 0
    with open_regular(path) as f:
        while chunk := f.read(1 << 20):
            total += len(chunk)
            if total > cap:
                raise UnsafeFile(errno.EFBIG, f"{path} is larger than the {cap} bytes omk reads")
            digest.update(chunk)
    return digest.hexdigest()


def regular_files(root: Path) -> list[Path]:
    """The regular files under the folder `root`, sorted, without following a link out of it or
    into a special file: what omk hashes or reads of a skill folder."""
    real_root = Path(os.path.realpath(root))
    found = []
    for path in sorted(root.rglob("*")):
        real = Path(os.path.realpath(path))
        if _under(real, real_root) and special_reason(path) is None and real.is_file():
            found.append(path)
    return found


def sample_file_cap() -> int:
    raw = os.environ.get("OMK_MAX_SAMPLE_FILE_BYTES", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_SAMPLE_FILE_BYTES


def sample_path(name: str, base_dir: Path) -> Path:
    """Where a path a sample names points: `~` expanded, relative to the samples file's folder.
    A mock's `return_file` and a sample's `cwd` are resolved so."""
    path = Path(os.path.expanduser(name))
    return path if path.is_absolute() else base_dir / path


def refusal(path: Path, roots: list[Path]) -> str | None:
    """Why omk will not use `path`: a special file, or outside every root; None when it may."""
    return special_reason(path) or escape_reason(path, roots)


def copy_confined(origin: Path, dest: Path, root: Path) -> list[str]:
    """Copy the file or folder `origin` to `dest`, leaving out whatever is not a regular file or
    a folder, or whose real path leaves `root` (a symlink out, to `~/.ssh` or `/proc/self/environ`).
    Returns the paths left out, relative to `root`'s real path where they are inside it."""
    real_root = Path(os.path.realpath(root))
    skipped: list[str] = []
    seen: set[Path] = set()  # folders copied already: a symlink back up a level is not followed twice

    def walk(source: Path, target: Path) -> None:
        real = Path(os.path.realpath(source))
        if not _under(real, real_root) or special_reason(source) is not None:
            skipped.append(os.path.relpath(os.path.abspath(source), real_root))
        elif real.is_dir() and real not in seen:
            seen.add(real)
            target.mkdir(parents=True, exist_ok=True)
            for child in sorted(source.iterdir()):
                walk(child, target / child.name)
        elif real.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            with open_regular(real) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            shutil.copystat(real, target)  # an executable script stays executable

    walk(origin, dest)
    return skipped


def skill_notes(skipped: list[str]) -> list[str]:
    """The sample's notes on what `copy_confined` left out of a skill folder it installed."""
    return [f"skill file left out (not a regular file of the skill folder): {name}" for name in skipped]


def run_file_cap() -> int:
    """The most omk reads of one run-folder file read whole (run.json, experiment.json, a report.json
    in another layout) or of one line of one read a line at a time: the samples file cap."""
    return sample_file_cap()


def link_out_reason(path: Path) -> str | None:
    """Why a run-folder file is refused for leading out of its folder (a symlink to `~/.ssh/id_rsa`
    or to another run's file), or None. The folder itself may be a link (`.omk/runs/latest`): what
    counts is that the file, followed, lands in the folder it is listed in."""
    folder = os.path.realpath(path.parent)
    real = os.path.realpath(path)
    if os.path.dirname(real) != folder:
        return f"{path} links outside its run folder (to {real}); omk reads a run folder's own files only"
    return None


def open_run_file(path: Path, *, update: bool = False) -> BinaryIO:
    """A run-folder file opened by the file rules (`open_regular`), refused with UnsafeFile when it
    links outside its folder. A run folder can come from anywhere (a download, a pull request),
    like a samples file."""
    if (why := special_reason(path) or link_out_reason(path)) is not None:
        raise UnsafeFile(errno.EPERM, why)
    return open_regular(path, update=update)


def read_run_file(path: Path) -> bytes:
    """A run-folder file read whole by the file rules: a regular file of the folder itself (never
    a link out of it, a FIFO, a device or a file in /proc, /sys or /dev), at most `run_file_cap()`
    bytes."""
    if (why := special_reason(path) or link_out_reason(path)) is not None:
        raise UnsafeFile(errno.EPERM, why)
    return read_regular_bytes(path, run_file_cap())


def read_capped_line(f: BinaryIO, path: Path) -> bytes:
    """One line of a run-folder file opened with `open_regular`, at most `run_file_cap()` bytes;
    UnsafeFile for a longer one (a file of gigabytes with no line break is not read whole)."""
    cap = run_file_cap()
    line = f.readline(cap + 1)
    if len(line) > cap:
        raise UnsafeFile(errno.EFBIG, f"{path} has a line longer than the {cap} bytes omk reads")
    return line
