"""Shared by the tests of the checks before the run: `omk eval` as a subprocess on five samples,
a loopback port nothing listens on, and the one line a failed check prints."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from cli_support import run_omk

SAMPLES = "samples:\n" + "".join(f"  - {{ sample_id: s{i}, prompt: hi }}\n" for i in range(5))


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def omk_eval(cwd: Path, target: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    (cwd / "eval-samples.yaml").write_text(SAMPLES, encoding="utf-8")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "OMK_", "CLAUDE_", "CODEX_"))}
    full.update(env or {})
    return run_omk(
        "eval", "--target", target, "--no-judge", "--out", str(cwd / "run"),
        cwd=cwd, base=full, drop=(), columns=None, timeout=timeout,
    )  # fmt: skip


def one_problem(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]
