"""docs/architecture.md tells the truth: its table names every package under omk/ (and the root's
modules), in an order that imports follow (each one imports only packages listed before it), and
every import of omk's code is one its row allows. omk/'s root holds only the public face.

The imports are those tests/test_import_graph.py reads: every one counts, at module level, inside
a function or under `TYPE_CHECKING`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from import_graph import Edge, import_edges

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `(?P<package>[\w.]+)` \| (?P<layer>[^|]+) \| (?P<what>[^|]+) \| (?P<allowed>[^|]+) \|$")
PUBLIC_FACE = {"__init__.py", "__main__.py", "api.py", "pytest_plugin.py", "version.py", "py.typed"}


def table(text: str) -> dict[str, list[str]]:
    """Each package of the table, in its order, with the packages its row allows."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if (m := ROW.match(line.strip())) is not None:
            package = m["package"]
            assert package not in rows, f"{package} has two rows"
            allowed = m["allowed"].strip()
            rows[package] = [] if allowed == "—" else [a.strip().strip("`") for a in allowed.split(",")]
    return rows


def nodes(root: Path) -> set[str]:
    """The nodes of the import graph: each package and root module under `root`, and the root."""
    name = root.name
    found = {name}
    for path in root.iterdir():
        if path.is_dir() and (path / "__init__.py").is_file():
            found.add(f"{name}.{path.name}")
        elif path.suffix == ".py" and path.stem != "__init__":
            found.add(f"{name}.{path.stem}")
    return found


def problems(rows: dict[str, list[str]], edges: list[Edge], present: set[str]) -> list[str]:
    """What the table gets wrong about the packages and their imports."""
    order = {package: i for i, package in enumerate(rows)}
    found = [f"{p}: a package of the code with no row in the table" for p in sorted(present - set(rows))]
    found += [f"{p}: a row in the table, but no such package" for p in sorted(set(rows) - present)]
    for package, allowed in rows.items():
        found += [f"{package} may import {a}, which is not in the table" for a in allowed if a not in order]
        found += [
            f"{package} may import {a}, listed after it: imports go to packages listed before"
            for a in allowed
            if a in order and order[a] >= order[package]
        ]
    seen = set()
    for edge in edges:
        if edge.target not in rows.get(edge.source, [edge.target]) and (edge.source, edge.target) not in seen:
            seen.add((edge.source, edge.target))
            found.append(f"{edge}: not in the row of {edge.source}")
    return found


@pytest.fixture(scope="module")
def rows() -> dict[str, list[str]]:
    return table(DOC.read_text(encoding="utf-8"))


def test_the_architecture_table_matches_the_imports(rows):
    found = problems(rows, import_edges(ROOT / "omk"), nodes(ROOT / "omk"))
    assert not found, "docs/architecture.md is out of date:\n  " + "\n  ".join(found)


def test_the_root_keeps_only_the_public_face():
    loose = sorted(p.name for p in (ROOT / "omk").iterdir() if p.is_file() and p.name not in PUBLIC_FACE)
    assert not loose, f"omk/'s root keeps only {sorted(PUBLIC_FACE)}; move these into a package: {loose}"


# --- the check itself can fail --------------------------------------------------------------------

DOC_SAMPLE = """
| package | layer | what it is | may import |
|---|---|---|---|
| `pkg.io` | bottom | files | — |
| `pkg.core` | bottom | errors | `pkg.io` |
| `pkg.run` | top | running | `pkg.core`, `pkg.io` |
| `pkg` | top | the face | `pkg.run` |
"""


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_table_is_read_in_order():
    assert table(DOC_SAMPLE) == {"pkg.io": [], "pkg.core": ["pkg.io"], "pkg.run": ["pkg.core", "pkg.io"], "pkg": ["pkg.run"]}


def test_an_import_the_table_does_not_allow_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "from pkg.run import go\n",
            "io/__init__.py": "",
            "core/__init__.py": "def f():\n    from pkg.run import go\n",
            "run/__init__.py": "from pkg.core import f\n",
            "extra.py": "",
        },
    )
    found = problems(table(DOC_SAMPLE), import_edges(root), nodes(root))
    assert found == [
        "pkg.extra: a package of the code with no row in the table",
        "pkg.core -> pkg.run (pkg.core, line 2): not in the row of pkg.core",
    ]


def test_a_row_allowing_an_import_upwards_is_found():
    rows = table(DOC_SAMPLE.replace("| `pkg.core` | bottom | errors | `pkg.io` |", "| `pkg.core` | bottom | errors | `pkg.io`, `pkg.run` |"))
    found = problems(rows, [], set(rows))
    assert found == ["pkg.core may import pkg.run, listed after it: imports go to packages listed before"]
