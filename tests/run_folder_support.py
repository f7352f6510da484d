"""What the run-folder trust tests and the hint tests share: a small `cmd:` agent and its samples,
a samples file with a custom hook, and `omk` in a child bounded in memory (a file read whole
that should not be is a MemoryError there, not a machine out of memory)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from cli_support import run_omk

AGENT = """\
import json, sys
sys.stdin.read()
print(json.dumps({"response": "hi there"}))
"""
SAMPLES = """\
samples:
  - { sample_id: a, prompt: hi, assertions: [{ type: contains, value: hi }] }
  - { sample_id: b, prompt: hi, assertions: [{ type: contains, value: hi }] }
"""
TARGET = f"cmd:{sys.executable} agent.py"
MEMORY = 1 << 30  # enough for omk; /dev/zero read whole would pass it in a second


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE", "OPENAI_API_KEY")}
    return {**clean, "NO_COLOR": "1", "COLUMNS": "160"}


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def omk(*args: str, cwd: Path, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, base={**env(), **(extra or {})}, drop=(), columns=None, timeout=60, preexec_fn=_bounded)


HOOKED_SAMPLES = """\
samples:
  - { sample_id: a, prompt: hi, assertions: [{ type: custom, fn: hook.py }] }
"""
HOOK = "import pathlib\n\ndef check(output, ctx):\n    pathlib.Path('hook-ran').touch()\n    return True\n"
