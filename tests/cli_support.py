"""The one way tests run the `omk` command: `python -m omk ARGS` in a subprocess, as a user would.

    proc = run_omk("eval", "s.yaml", "--target", spec, cwd=tmp_path)

The child starts from this process's environment (or from `base`, when a test builds the whole
environment itself), without the variables that would choose a target or judge behind the test's
back (`OMK_TARGET`, `OMK_JUDGE`, or every name starting with one of `drop`), with colour off and
the terminal `columns` wide, and then `env` on top. A traceback on stderr fails the test unless
`traceback_ok` says the test looks at it itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DROPPED = ("OMK_TARGET", "OMK_JUDGE")


def omk_env(
    env: Mapping[str, str] | None = None,
    *,
    base: Mapping[str, str] | None = None,
    drop: tuple[str, ...] = DROPPED,
    columns: int | None = 160,
) -> dict[str, str]:
    """The environment `run_omk` gives the child (see the module's docstring)."""
    start = os.environ if base is None else base
    full = {k: v for k, v in start.items() if not k.startswith(drop)}
    full["NO_COLOR"] = "1"
    if columns is not None:
        full["COLUMNS"] = str(columns)
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), full.get("PYTHONPATH", "")) if p)
    return {**full, **(env or {})}


def run_omk(
    *args: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
    drop: tuple[str, ...] = DROPPED,
    columns: int | None = 160,
    timeout: float = 300,
    stdin: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
    traceback_ok: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`python -m omk ARGS` in `cwd` (the project root when not given); its output as text."""
    proc = subprocess.run(
        [sys.executable, "-m", "omk", *args],
        cwd=cwd or ROOT,
        env=omk_env(env, base=base, drop=drop, columns=columns),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )
    if not traceback_ok:
        assert "Traceback (most recent call last)" not in proc.stderr, proc.stderr
    return proc
