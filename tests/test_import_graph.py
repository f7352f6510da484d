"""The packages under omk/, and the files under omk/, import each other without cycles, nothing but the CLI imports omk.cli,
and only the layers that run targets import omk.targets.

Every import counts: module level, inside functions (the lazy ones), and under `TYPE_CHECKING`.
A node of the graph is a package (`omk.runner`), a top-level module (`omk.model`, `omk.errors`) or
the root package `omk` itself; imports inside one node are not edges.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

OMK = Path(__file__).resolve().parent.parent / "omk"

# Edges known to be wrong, as (importing module, imported node). Each one must still exist (the
# test fails when it is gone, so the entry is deleted with the fix). None today.
KNOWN_EDGES: set[tuple[str, str]] = set()


@dataclass(frozen=True, slots=True)
class Edge:
    source: str  # node
    target: str  # node
    module: str  # the importing module
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self.module}, line {self.line})"


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package at `root`, by dotted name (`omk.runner.cache`, `omk.runner`)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def node_of(module: str, modules: dict[str, Path]) -> str:
    """`omk.runner.cache` -> `omk.runner`; `omk.model` -> `omk.model`; `omk` -> `omk`."""
    parts = module.split(".")
    if len(parts) == 1:
        return module
    top = ".".join(parts[:2])
    return top if top in modules else parts[0]


def imported_modules(tree: ast.AST, module: str, is_package: bool, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(module imported, line) for every import statement anywhere in the tree."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Import):
            found += [(alias.name, stmt.lineno) for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                base = package.split(".")[: len(package.split(".")) - (stmt.level - 1)]
                source = ".".join(base + ([stmt.module] if stmt.module else []))
            else:
                source = stmt.module or ""
            for alias in stmt.names:  # `from omk import formats` imports the module omk.formats
                sub = f"{source}.{alias.name}"
                found.append((sub if sub in modules else source, stmt.lineno))
    return found


def import_edges(root: Path) -> list[Edge]:
    modules = module_names(root)
    edges = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        source = node_of(module, modules)
        for imported, line in imported_modules(tree, module, path.name == "__init__.py", modules):
            if imported != root.name and not imported.startswith(root.name + "."):
                continue
            target = node_of(imported, modules)
            if target != source:
                edges.append(Edge(source, target, module, line))
    return edges


def find_cycle(edges: list[Edge]) -> list[Edge] | None:
    """One cycle of the node graph, as its edges (with the modules that make them), or None."""
    by_source: dict[str, dict[str, Edge]] = defaultdict(dict)
    for edge in edges:
        by_source[edge.source].setdefault(edge.target, edge)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[Edge] = []

    def visit(node: str) -> list[Edge] | None:
        state[node] = 1
        for target, edge in sorted(by_source[node].items()):
            if state.get(target) == 1:
                start = next((i for i, e in enumerate(path) if e.source == target), len(path))
                return [*path[start:], edge]
            if target not in state:
                path.append(edge)
                if (cycle := visit(target)) is not None:
                    return cycle
                path.pop()
        state[node] = 2
        return None

    for node in sorted(by_source):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def find_cycles(edges: list[Edge]) -> list[tuple[list[str], list[Edge]]]:
    """Each group of packages that import each other (strongly connected component), with one
    cycle through it."""
    reach: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        reach[edge.source].add(edge.target)
    changed = True
    while changed:  # transitive closure: the graph has a few dozen nodes
        changed = False
        for targets in reach.values():
            more = set().union(*(reach.get(t, set()) for t in targets)) - targets
            if more:
                targets |= more
                changed = True
    groups: dict[frozenset[str], None] = {}
    for node, targets in sorted(reach.items()):
        group = frozenset(t for t in targets if node in reach.get(t, set()))
        if group:
            groups.setdefault(group, None)
    return [(sorted(g), find_cycle([e for e in edges if e.source in g and e.target in g]) or []) for g in groups]


def describe(members: list[str], cycle: list[Edge]) -> str:
    return f"import cycle between {', '.join(members)}:\n  " + "\n  ".join(map(str, cycle))


def module_edges(root: Path) -> list[Edge]:
    """The import graph between files: a node is one module (`omk.engine.plan`); `from omk.engine
    import plan` is an edge to `omk.engine.plan`, `from omk.engine import Evaluation` one to the
    package's `__init__`. Every import counts, the lazy ones inside functions and those under
    `TYPE_CHECKING` too: a circle is broken by moving what both sides need into a module they both
    import, not by hiding one side of it inside a function."""
    modules = module_names(root)
    edges = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for imported, line in imported_modules(tree, module, path.name == "__init__.py", modules):
            target = imported
            while target and target not in modules:  # `omk.x.name` of a name in module omk.x
                target = target.rpartition(".")[0]
            if target and target != module:
                edges.append(Edge(module, target, module, line))
    return edges


def cli_importers(edges: list[Edge], root: str) -> list[Edge]:
    """Imports of `ROOT.cli` from anywhere but the CLI itself and `ROOT/__main__.py`."""
    return [e for e in edges if e.target == f"{root}.cli" and e.source != f"{root}.__main__"]


# The packages that put targets to work. Every other one (the cache, the judge, the report, the
# scoring, the loader…) sits below the targets: what it shares with them lives in a module both
# import (omk.process, omk.trace_io, omk.messages, omk.mock_defs, omk.compose, omk.target_result).
TARGET_USERS = frozenset({"omk", "omk.api", "omk.cli", "omk.engine", "omk.runner"})


def importers_outside(edges: list[Edge], node: str, allowed: frozenset[str]) -> list[Edge]:
    """Imports of `node` from any package but itself and those `allowed`."""
    return [e for e in edges if e.target == node and e.source not in allowed]


def without_known(edges: list[Edge]) -> list[Edge]:
    return [e for e in edges if (e.module, e.target) not in KNOWN_EDGES]


# Circles between files known and owned by other work, as the sorted modules of the circle. Each one
# must still exist (the test fails when it is gone, so the entry is deleted with the fix).
# omk/records/ is being rewritten on msgspec (issue 35, "Records on msgspec"): the lead removes
# this entry when that work is merged and the shared records have left records/document.py.
KNOWN_FILE_CIRCLES: set[tuple[str, ...]] = {
    ("omk.records.document", "omk.records.experiment_block", "omk.records.judge_settings", "omk.records.repeats"),
}


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return import_edges(OMK)


@pytest.fixture(scope="module")
def file_edges() -> list[Edge]:
    return module_edges(OMK)


def test_no_circle_between_files(file_edges):
    cycles = [(m, c) for m, c in find_cycles(file_edges) if tuple(m) not in KNOWN_FILE_CIRCLES]
    assert not cycles, "move what both sides need into a module both import:\n" + "\n".join(describe(m, c) for m, c in cycles)


def test_known_file_circles_still_exist(file_edges):
    present = {tuple(members) for members, _ in find_cycles(file_edges)}
    gone = sorted(KNOWN_FILE_CIRCLES - present)
    assert not gone, f"these circles are gone (or changed); delete them from KNOWN_FILE_CIRCLES: {gone}"


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
