"""Files a sample names must be there when it loads, not fail one by one at run time.

* a `custom` assertion's `fn` (a hook, relative to the samples file's folder), wherever the
  assertion is: the sample's list, a turn's, or nested in an assert-set;
* a mock's `return_file` (same folder; `~` expanded, as the mock sandbox reads it).

Each path is resolved by the code that uses it at run time (`hook_file`, `return_file_path`), so
the loader checks the very file the run would open. Values of the wrong shape are left to the
schema checks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from omk.assertions.custom import hook_file
from omk.loader.document import Path_
from omk.targets.mocks import return_file_path

Found = list[tuple[Path_, str]]
MAX_DEPTH = 32


def missing_files(raw: Any, base_dir: Path) -> Found:
    """(path inside the sample, message) for every hook or mock file that is not there."""
    if not isinstance(raw, dict):
        return []
    found: Found = []
    _assertions(raw.get("assertions"), ("assertions",), base_dir, found)
    turns = raw.get("turns")
    for j, turn in enumerate(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict):
            _assertions(turn.get("assertions"), ("turns", j, "assertions"), base_dir, found)
    mocks = raw.get("mocks")
    for i, mock in enumerate(mocks if isinstance(mocks, list) else []):
        name = mock.get("return_file") if isinstance(mock, dict) else None
        if isinstance(name, str) and name.strip() and (path := _absent(return_file_path, name, base_dir)):
            found.append((("mocks", i, "return_file"), f"file not found: {path}"))
    return found


def _assertions(items: Any, base: Path_, base_dir: Path, found: Found, depth: int = 0) -> None:
    if depth > MAX_DEPTH:  # deeper than any valid set: the validator says so
        return
    for k, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        fn = item.get("fn")
        if item.get("type") == "custom" and isinstance(fn, str) and fn.strip() and (path := _absent(hook_file, fn, base_dir)):
            found.append((base + (k, "fn"), f"hook file not found: {path}"))
        _assertions(item.get("children"), base + (k, "children"), base_dir, found, depth + 1)


def _absent(resolve: Callable[[str, Path], Path], name: str, base_dir: Path) -> Path | str | None:
    """Where the file should be when it is not there; None when it is."""
    try:
        path = resolve(name, base_dir)
        return None if path.is_file() else path
    except (OSError, ValueError):  # a name the OS refuses (too long, a NUL byte) names no file
        return name
