"""Every Python example of docs/python-api.md runs as written, from the repository's root."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_examples_and_lists_all_of_omk_all():
    import omk

    assert len(BLOCKS) >= 6
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in omk.__all__ if name != "__version__" and f"`{name}" not in text]
    assert missing == []


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int, tmp_path: Path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", BLOCKS[index]], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), "every example prints what it shows"
