"""The agent CLIs the tests run, of the versions `.ci/run` pins: where each is looked for
(`OMK_CLAUDE` / `OMK_CODEX`, then `.ci/node`, then every one of that name on PATH whose
`--version` names the pinned version), and the exact command that installs it when none is."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / ".ci" / "node" / "node_modules" / ".bin"


@dataclass(frozen=True)
class Pin:
    name: str  # the command: claude, codex
    package: str  # the npm package
    variable: str  # the line of .ci/run that pins its version
    env: str  # the variable that names a CLI to use as it is
    title: str

    @property
    def version(self) -> str:
        found = re.search(rf"^{self.variable}=(\S+)$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
        if found is None:
            raise RuntimeError(f".ci/run names no {self.variable}")
        return found.group(1)

    @property
    def install(self) -> str:
        return f"npm install --no-audit --no-fund --prefix .ci/node {self.package}@{self.version}"

    @property
    def local(self) -> Path:
        return NODE_BIN / self.name


CLAUDE = Pin("claude", "@anthropic-ai/claude-code", "CLAUDE_CODE_VERSION", "OMK_CLAUDE", "Claude Code")
CODEX = Pin("codex", "@openai/codex", "CODEX_VERSION", "OMK_CODEX", "Codex")


def _runnable(path: str | Path | None) -> bool:
    return bool(path) and Path(str(path)).is_file() and os.access(str(path), os.X_OK)


@functools.cache
def version_of(path: str) -> str | None:
    """The version `PATH --version` prints (`2.1.331 (Claude Code)`, `codex-cli 0.171.0`)."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"\d+\.\d+\.\d+\S*", done.stdout)
    return found.group(0) if found else None


def on_path(name: str) -> list[str]:
    """Every executable called `name` on PATH, in PATH's order."""
    found = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = shutil.which(name, path=folder) if folder else None
        if candidate and candidate not in found:
            found.append(candidate)
    return found


def find(pin: Pin) -> str | None:
    """The CLI to test with: the one the user named, the one `.ci/run` installed, or one on PATH
    of the pinned version."""
    for candidate in (os.environ.get(pin.env), str(pin.local)):
        if _runnable(candidate):
            return candidate
    return next((c for c in on_path(pin.name) if version_of(c) == pin.version), None)


def missing(pin: Pin) -> str:
    """Why no CLI was found, with the exact version and the exact command to install it."""
    others = [f"{c} is {version_of(c) or 'of an unknown version'}" for c in on_path(pin.name)]
    seen = f"; on PATH {', '.join(others)}, not {pin.version}" if others else ""
    return (
        f"the {pin.title} CLI {pin.version} (the version .ci/run pins) is not installed "
        f"({pin.env}, {pin.local}, PATH){seen}; install it with: {pin.install} "
        f"(or set {pin.env} to a {pin.name} of that version)"
    )
