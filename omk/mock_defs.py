"""What a sample's `mocks` declare, as the loader checks them, the mock sandbox answers from them
and the response cache keys them: each mock's key and where its `return_file` is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def mock_keys(mocks: Sequence[dict[str, Any]]) -> list[str]:
    """`<tool>:<ordinal among mocks with the same literal tool string>`, one per mock, in order."""
    seen: dict[str, int] = {}
    keys = []
    for mock in mocks:
        tool = str(mock.get("tool", ""))
        seen[tool] = seen.get(tool, 0) + 1
        keys.append(f"{tool}:{seen[tool]}")
    return keys


def return_file_path(name: str, base_dir: Path) -> Path:
    """Where a mock's `return_file` is read: `~` expanded, relative to the samples file's folder.
    The loader checks the file is there (omk/loader/files.py); a file gone by run time is a marked error."""
    from omk.safe_files import sample_path

    return sample_path(name, base_dir)
