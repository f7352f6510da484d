"""A fresh copy of the repository, as a new user has it after the README's install: the docs'
commands run in it as written (tests/test_readme_first_hour.py, tests/test_authoring_docs_first_hour.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", ".venv", ".omk", "node_modules", ".ci", "__pycache__", ".pytest_cache", ".ruff_cache"}
ACTIVATE = "source .venv/bin/activate"  # the README's one convention for the docs' bare `omk`


def copy_repo(tmp_path: Path) -> Path:
    """The repository copied to `tmp_path/repo`, its `.venv` a link to the virtual environment
    running the tests (omk installed from this tree), so the README's pip step need not download."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=lambda _dir, names: [n for n in names if n in SKIP or n.endswith(".egg-info")])
    (repo / ".venv").symlink_to(Path(sys.prefix))
    return repo
