"""The packages under omk/, and the files under omk/, import each other without cycles, nothing but the CLI imports omk.cli,
and only the layers that run targets import omk.targets.

Every import counts: module level, inside functions (the lazy ones), and under `TYPE_CHECKING`.
A node of the package graph is a package (`omk.runner`), a module at the root (`omk.api`,
`omk.version`) or the root package `omk` itself; imports inside one node are not edges. A node of
the file graph is one module.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from import_graph import Edge, describe, find_cycles, import_edges, module_edges

OMK = Path(__file__).resolve().parent.parent / "omk"

# Edges known to be wrong, as (importing module, imported node). Each one must still exist (the
# test fails when it is gone, so the entry is deleted with the fix). None today.
KNOWN_EDGES: set[tuple[str, str]] = set()


def cli_importers(edges: list[Edge], root: str) -> list[Edge]:
    """Imports of `ROOT.cli` from anywhere but the CLI itself and `ROOT/__main__.py`."""
    return [e for e in edges if e.target == f"{root}.cli" and e.source != f"{root}.__main__"]


# The packages that put targets to work. Every other one (the cache, the judge, the report, the
# scoring, the loader…) sits below the targets: what it shares with them lives in a module both
# import (omk.io.process, omk.domain.trace_io, omk.domain.messages, omk.domain.mock_defs, omk.domain.compose, omk.domain.target_result).
TARGET_USERS = frozenset({"omk", "omk.api", "omk.cli", "omk.engine", "omk.runner"})


def importers_outside(edges: list[Edge], node: str, allowed: frozenset[str]) -> list[Edge]:
    """Imports of `node` from any package but itself and those `allowed`."""
    return [e for e in edges if e.target == node and e.source not in allowed]


def without_known(edges: list[Edge]) -> list[Edge]:
    return [e for e in edges if (e.module, e.target) not in KNOWN_EDGES]


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return import_edges(OMK)


@pytest.fixture(scope="module")
def file_edges() -> list[Edge]:
    return module_edges(OMK)


def test_no_circle_between_files(file_edges):
    cycles = find_cycles(file_edges)
    assert not cycles, "move what both sides need into a module both import:\n" + "\n".join(describe(m, c) for m, c in cycles)


def test_no_cycle_between_packages(edges):
    cycles = find_cycles(without_known(edges))
    assert not cycles, "\n".join(describe(members, cycle) for members, cycle in cycles)


def test_only_the_cli_imports_the_cli(edges):
    bad = cli_importers(without_known(edges), "omk")
    assert not bad, "only omk/cli and omk/__main__.py may import omk.cli:\n  " + "\n  ".join(map(str, bad))


def test_only_the_run_layers_import_the_targets(edges):
    bad = importers_outside(without_known(edges), "omk.targets", TARGET_USERS)
    allowed = ", ".join(sorted(TARGET_USERS))
    assert not bad, f"only {allowed} may import omk.targets; move the shared code to a module both use:\n  " + "\n  ".join(dict.fromkeys(map(str, bad)))


def test_known_edges_still_exist(edges):
    present = {(e.module, e.target) for e in edges}
    gone = sorted(KNOWN_EDGES - present)
    assert not gone, f"these known edges are gone; delete them from KNOWN_EDGES: {gone}"


# --- the checks themselves can fail ---------------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_cycle_through_lazy_and_type_checking_imports_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/one.py": "def f():\n    from pkg.b.two import g\n",
            "b/__init__.py": "",
            "b/two.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import h\n",
            "c.py": "from pkg import a\n",
            "d.py": "import pkg.c\n",
        },
    )
    edges = import_edges(root)
    cycles = find_cycles(edges)
    assert len(cycles) == 1
    members, cycle = cycles[0]
    assert members == ["pkg.a", "pkg.b", "pkg.c"]
    assert [(e.source, e.target, e.module, e.line) for e in cycle] == [
        ("pkg.a", "pkg.b", "pkg.a.one", 2),
        ("pkg.b", "pkg.c", "pkg.b.two", 3),
        ("pkg.c", "pkg.a", "pkg.c", 1),
    ]
    assert "pkg.a -> pkg.b (pkg.a.one, line 2)" in [str(e) for e in cycle]


def test_no_cycle_in_a_layered_package(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from pkg.b import x\nfrom pkg import c\n",
            "b/__init__.py": "from . import inner\nfrom pkg.c import y\n",
            "b/inner.py": "from pkg.b import other\n",
            "c.py": "import os\n",
        },
    )
    edges = import_edges(root)
    assert {(e.source, e.target) for e in edges} == {("pkg.a", "pkg.b"), ("pkg.a", "pkg.c"), ("pkg.b", "pkg.c")}
    assert find_cycles(edges) == []


def test_each_group_of_cycles_is_reported(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import pkg.b\n",
            "b.py": "import pkg.a\nimport pkg.c\n",
            "c.py": "import pkg.d\n",
            "d.py": "import pkg.c\n",
        },
    )
    cycles = find_cycles(import_edges(root))
    assert sorted([(e.source, e.target) for e in cycle] for _, cycle in cycles) == [
        [("pkg.a", "pkg.b"), ("pkg.b", "pkg.a")],
        [("pkg.c", "pkg.d"), ("pkg.d", "pkg.c")],
    ]


def test_an_import_of_the_cli_from_outside_it_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "__main__.py": "from pkg.cli.main import main\n",
            "cli/__init__.py": "",
            "cli/main.py": "from pkg.run import go\n",
            "run/__init__.py": "def go():\n    from pkg.cli import main\n",
        },
    )
    edges = import_edges(root)
    bad = cli_importers(edges, "pkg")
    assert [(e.module, e.line) for e in bad] == [("pkg.run", 2)]


def test_an_import_of_the_targets_from_a_lower_layer_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "from pkg.targets import make\n",
            "targets/__init__.py": "from pkg.process import stop\n",
            "process.py": "",
            "run/__init__.py": "from pkg.targets import make\n",
            "cache.py": "from pkg.targets.trace_io import parse\n",
            "judge/__init__.py": "",
            "judge/clients.py": "def f():\n    from ..targets import cmd\n",
        },
    )
    bad = importers_outside(import_edges(root), "pkg.targets", frozenset({"pkg", "pkg.run"}))
    assert sorted((e.module, e.line) for e in bad) == [("pkg.cache", 1), ("pkg.judge.clients", 2)]


def test_a_circle_between_files_of_one_package_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from pkg.a.state import State\n",
            "a/state.py": "import os\n",
            "a/steps.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a.whole import Whole\n",
            "a/whole.py": "from pkg.a.state import State\ndef run():\n    from pkg.a import steps\n",
            "b.py": "from pkg.a import State\nfrom pkg.a.state import x\n",
        },
    )
    edges = module_edges(root)
    assert find_cycles(import_edges(root)) == []  # one package: no circle between packages
    cycles = find_cycles(edges)
    assert [members for members, _ in cycles] == [["pkg.a.steps", "pkg.a.whole"]]
    assert sorted((e.source, e.target, e.line) for e in cycles[0][1]) == [("pkg.a.steps", "pkg.a.whole", 3), ("pkg.a.whole", "pkg.a.steps", 3)]
    assert ("pkg.b", "pkg.a") in {(e.source, e.target) for e in edges}  # a name from the package's __init__
    assert ("pkg.b", "pkg.a.state") in {(e.source, e.target) for e in edges}
