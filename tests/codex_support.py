"""Shared by the Codex tests: where the real CLI is.

The CLI is looked for in `OMK_CODEX`, then in `.ci/node` (where `.ci/run` installs the pinned npm
package), then on PATH. Without it the tests that need it skip and say why, except under `CI`,
where they fail: CI must never pass by skipping them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCAL_INSTALL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "codex"
INSTALL = "npm install --no-audit --no-fund --prefix .ci/node @openai/codex@<version in .ci/run>"


def find_codex() -> str | None:
    for candidate in (os.environ.get("OMK_CODEX"), str(LOCAL_INSTALL), shutil.which("codex")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def require_codex() -> str:
    found = find_codex()
    if found is not None:
        return found
    reason = f"the Codex CLI is not installed (OMK_CODEX, {LOCAL_INSTALL}, PATH); install it with: {INSTALL}"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Codex tests: {reason}")
    pytest.skip(reason)
