"""Shared by the Codex tests: where the real CLI is, and `omk eval` run as a subprocess.

The CLI is looked for in `OMK_CODEX`, then in `.ci/node` (where `.ci/run` installs the pinned npm
package), then on PATH (one that prints the pinned version, tests/cli_pins.py). Without it the tests that need it skip and say why, except under `CI`,
where they fail: CI must never pass by skipping them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import cli_pins
import pytest
from cli_support import run_omk

ROOT = Path(__file__).resolve().parent.parent
LOCAL_INSTALL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "codex"
INSTALL = cli_pins.CODEX.install


def find_codex() -> str | None:
    return cli_pins.find(cli_pins.CODEX)


def require_codex() -> str:
    found = find_codex()
    if found is not None:
        return found
    reason = cli_pins.missing(cli_pins.CODEX)
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Codex tests: {reason}")
    pytest.skip(reason)


def omk_eval(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    """`omk eval … --quiet --no-judge` with none of the caller's OPENAI_, OMK_ or CODEX_ variables."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OMK_", "CODEX_"))}
    full.update(env)
    return run_omk(
        "eval", *args, "--quiet", "--no-judge",
        cwd=cwd, base=full, drop=(), columns=None, timeout=timeout,
    )  # fmt: skip
