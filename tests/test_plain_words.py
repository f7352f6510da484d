"""The docs, the code's comments and the tests say things in plain words: no decision numbers
("D12") and no section marks into a spec a reader does not have."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = (".md", ".py", ".js", ".css", ".html", ".json", ".toml", ".yaml", ".yml")
# "D7", "(D12)", "D1–D12": a decision number; the section sign, written here as an escape.
MARKS = re.compile(r"\bD\d{1,3}\b|\u00a7")


def checked_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in ("omk", "bench", "tests"):
        files += sorted(
            p for p in (ROOT / folder).rglob("*")
            if p.suffix in TEXT and p.is_file() and not {"fixtures", "__pycache__", ".work"} & set(p.relative_to(ROOT).parts)
        )  # fmt: skip  (bench/.work: the benchmarks' scratch folder, with the peers' node_modules)
    return [p for p in files if p != Path(__file__).resolve()]  # this file shows what it looks for


def test_no_decision_numbers_or_section_marks():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
        for path in checked_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if MARKS.search(line)
    ]
    assert not found, "say it in plain words instead:\n" + "\n".join(found)


def test_the_check_sees_what_it_is_for():
    assert all(MARKS.search(s) for s in ("## Layers (D8)", "decisions D1–D12 of the spec", "(spec \u00a77: a target"))
    assert not any(MARKS.search(s) for s in ("color: #D3D3D3", "3D chart", "ID12", "omk 0.23's rule"))
    files = checked_files()
    assert {ROOT / "README.md", ROOT / "docs" / "assertions.md", ROOT / "omk" / "api.py", ROOT / "tests" / "conftest.py"} <= set(files)
