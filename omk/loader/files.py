"""Files a sample names must be there, and be safe to open, when it loads, not fail one by one
at run time.

* a `custom` assertion's `fn` (a hook, relative to the samples file's folder), wherever the
  assertion is: the sample's list, a turn's, or nested in an assert-set;
* a mock's `return_file` (same folder; `~` expanded, as the mock sandbox reads it);
* the sample's `workspace` (same folder, `~` expanded: the folder an agent target copies in and
  works on), which must also exist;
* the sample's `cwd` (same folder, `~` expanded: where a `cmd:` program runs and where the
  `claude:` target copies `environment.files_available` from) and each `files_available` entry
  (inside that folder).

Each must be inside the project folder (the samples file's folder) or a folder omk.yaml allows
with `allow_paths` (omk.io.safe_files): `../`, an absolute path, `~` or a symlink that leads out is
refused, and so is a special file (`/proc/self`, `/dev/zero`, a FIFO). Hooks and mock files must
also exist; a `cwd` or a `files_available` entry that does not exist is left to run time and
`omk doctor`, as before. Each path is resolved by the code that uses it at run time (`hook_file`,
`return_file_path`, `sample_path`), so the loader checks the very file the run would open.
Values of the wrong shape are left to the schema checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omk.assertions.custom import hook_file
from omk.domain.mock_defs import return_file_path
from omk.io.safe_files import escape_reason, refusal, sample_path, special_reason
from omk.loader.document import Path_

Found = list[tuple[Path_, str]]
MAX_DEPTH = 32


def missing_files(raw: Any, base_dir: Path, allowed: list[Path] | None = None) -> Found:
    """(path inside the sample, message) for every hook or mock file that is not there, not a
    regular file, or outside `base_dir` and the `allowed` folders."""
    if not isinstance(raw, dict):
        return []
    roots = [base_dir, *(allowed or [])]
    found: Found = []
    _assertions(raw.get("assertions"), ("assertions",), roots, found)
    turns = raw.get("turns")
    for j, turn in enumerate(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict):
            _assertions(turn.get("assertions"), ("turns", j, "assertions"), roots, found)
    mocks = raw.get("mocks")
    for i, mock in enumerate(mocks if isinstance(mocks, list) else []):
        name = mock.get("return_file") if isinstance(mock, dict) else None
        if isinstance(name, str) and name.strip() and (why := _unusable(return_file_path, name, roots, "file")):
            found.append((("mocks", i, "return_file"), why))
    _folders(raw, roots, found)
    return found


def _folders(raw: dict[str, Any], roots: list[Path], found: Found) -> None:
    """The sample's `cwd` and its `environment.files_available` entries (see the module's docstring)."""
    _workspace(raw.get("workspace"), roots, found)
    cwd = raw.get("cwd")
    source = roots[0]
    if isinstance(cwd, str) and cwd.strip():
        try:
            source = sample_path(cwd, roots[0])
            why = refusal(source, roots)
        except (OSError, ValueError):  # a name the OS refuses (a NUL byte) names no folder
            why = f"{cwd!r} is not a folder name"
        if why is not None:
            found.append((("cwd",), f"refused: {why}"))
            return  # its files_available entries would only repeat it
    environment = raw.get("environment")
    entries = environment.get("files_available") if isinstance(environment, dict) else None
    for j, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, str) and entry.strip() and (why := _outside(source, entry.strip())):
            found.append((("environment", "files_available", j), f"refused: {why}"))


def _workspace(name: object, roots: list[Path], found: Found) -> None:
    """The sample's `workspace:` must be a folder inside the project (or an allowed folder)."""
    if not isinstance(name, str) or not name.strip():
        return
    try:
        path = sample_path(name, roots[0])
        why = refusal(path, roots)
        if why is None and not path.is_dir():
            why = f"workspace folder not found: {path}"
    except (OSError, ValueError):
        why = f"{name!r} is not a folder name"
    if why is not None:
        found.append((("workspace",), why if why.startswith("workspace folder") else f"refused: {why}"))


def _outside(source: Path, name: str) -> str | None:
    """Why `files_available` entry `name` may not be copied from `source`, or None."""
    try:
        path = source / name
        if (why := special_reason(path)) is not None:
            return why
    except (OSError, ValueError):
        return f"{name!r} is not a file name"
    if Path(name).is_absolute() or escape_reason(path, [source]) is not None:
        return f"{name} is outside the sample's folder {os.path.realpath(source)}; files_available names files inside it"
    return None


def _assertions(items: Any, base: Path_, roots: list[Path], found: Found, depth: int = 0) -> None:
    if depth > MAX_DEPTH:  # deeper than any valid set: the validator says so
        return
    for k, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        fn = item.get("fn") if "fn" in item else None
        if isinstance(fn, str) and item.get("type") == "custom" and fn.strip() and (why := _unusable(hook_file, fn, roots, "hook file")):
            found.append((base + (k, "fn"), why))
        if "children" in item:
            _assertions(item["children"], base + (k, "children"), roots, found, depth + 1)


def _unusable(resolve: Callable[[str, Path], Path], name: str, roots: list[Path], what: str) -> str | None:
    """Why the file `name` cannot be used (outside the project, special, missing), or None."""
    try:
        path = resolve(name, roots[0])
        if (why := special_reason(path)) is not None:
            return f"refused: {why}"
        if (why := escape_reason(path, roots)) is not None:
            return f"refused: {why}"
        return None if path.is_file() else f"{what} not found: {path}"
    except (OSError, ValueError):  # a name the OS refuses (too long, a NUL byte) names no file
        return f"{what} not found: {name}"
