"""The import graph of a package, read from its source: every import statement counts, at module
level, inside a function, or under `TYPE_CHECKING`. Used by tests/test_import_graph.py and
tests/test_architecture.py."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


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
    """`omk.runner.cache` -> `omk.runner`; `omk.samples.model` -> `omk.samples.model`; `omk` -> `omk`."""
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
