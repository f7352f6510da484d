"""The git commit a samples file belongs to, for a run's record (`omk view` shows it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def commit_of(path: Path) -> str | None:
    """The HEAD commit of the repository holding `path` (a file or folder), or None: not in a
    repository, no git, or git slower than two seconds."""
    from omk.io.process import may_start

    if not may_start("the samples' git commit"):
        return None
    git = shutil.which("git")
    folder = path if path.is_dir() else path.parent
    if git is None or not folder.is_dir():
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None
