"""Every Python example of docs/python-api.md runs as written in an empty folder after `omk init`
(what a newcomer has after `pip install omk`), never from the repository's root: an example that
needs a file of the repository fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def exported_in_the_table() -> list[str]:
    """The names the page's "What `omk` exports" table lists in its first column (`load(path)`
    is `load`; a cell may name several, each in backquotes)."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## What `omk` exports", 1)[1].split("\n\n| ", 1)[1].split("\n\n", 1)[0]
    cells = [line.split("|")[1] for line in table.splitlines()[2:]]
    return [re.match(r"[A-Za-z_]\w*", name).group(0) for cell in cells for name in re.findall(r"`([^`]+)`", cell)]  # type: ignore[union-attr]


def test_the_page_lists_exactly_omk_all():
    """Every export documented, and nothing documented as exported that is not."""
    import omk

    listed = exported_in_the_table()
    assert len(listed) == len(set(listed)), listed  # each name once
    assert sorted(set(omk.__all__) - set(listed)) == []  # exported, not documented
    assert sorted(set(listed) - set(omk.__all__)) == []  # documented, not exported


def test_the_page_explains_every_keyword_of_run_options():
    """RunOptions' keys are written from the settings spec: each one added there is explained here."""
    from omk.api import RunOptions

    text = DOC.read_text(encoding="utf-8")
    keywords = text.split("The keyword arguments:", 1)[1].split("\n\n", 2)[1]  # the table after the heading line
    assert [k for k in RunOptions.__annotations__ if f"`{k}`" not in keywords] == []


def test_the_page_has_examples_run_from_an_empty_folder():
    assert len(BLOCKS) >= 6
    assert "omk init" in DOC.read_text(encoding="utf-8")
    assert "samples/" not in "".join(BLOCKS)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs_in_an_empty_folder_after_omk_init(index: int, tmp_path: Path):
    folder = tmp_path / "first-evals"
    folder.mkdir()
    # omk as installed: importable from anywhere, the repository is not the working folder
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    init = run_omk("init", cwd=folder, base=env, drop=(), columns=None, timeout=120)
    assert init.returncode == 0, init.stderr
    assert sorted(p.name for p in folder.iterdir()) == [".gitignore", "eval-samples.schema.json", "eval-samples.yaml", "omk.yaml", "responses.jsonl"]
    proc = subprocess.run([sys.executable, "-c", BLOCKS[index]], cwd=folder, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), "every example prints what it shows"
