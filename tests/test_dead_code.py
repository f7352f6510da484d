"""No dead code in omk: vulture, at the confidence where what it reports is certain (a variable
assigned and never read, code after a return, an import never used), finds nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_vulture_finds_no_dead_code_in_omk() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vulture", "omk", "--min-confidence", "80"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.stdout == "", proc.stdout
    assert proc.returncode == 0, proc.stderr
