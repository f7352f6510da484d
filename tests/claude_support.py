"""Shared by the Claude Code tests: where the real CLI is, and what a scripted run needs.

The CLI is looked for in `OMK_CLAUDE`, then in `.ci/node` (where `.ci/run` installs the pinned
npm package), then on PATH (one that prints the pinned version, tests/cli_pins.py). Without it the tests that need it skip and say why, except under
`CI`, where they fail: CI must never pass by skipping them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import cli_pins
import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCAL_INSTALL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "claude"


def pinned_version() -> str:
    """The Claude Code version `.ci/run` installs (its `CLAUDE_CODE_VERSION=` line)."""
    return cli_pins.CLAUDE.version


INSTALL = cli_pins.CLAUDE.install


def find_claude() -> str | None:
    return cli_pins.find(cli_pins.CLAUDE)


def require_claude() -> str:
    found = find_claude()
    if found is not None:
        return found
    reason = cli_pins.missing(cli_pins.CLAUDE)
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Claude Code tests: {reason}")
    pytest.skip(reason)


def write_skill(folder: Path, name: str, description: str, body: str) -> Path:
    skill = folder / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", encoding="utf-8"
    )
    return skill


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that never reaps it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def processes_in(folder: Path) -> list[int]:
    """Processes whose working folder is inside `folder` (the CLI, its hooks and tools)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd.startswith(str(folder)) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_until(check, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()
