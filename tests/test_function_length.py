"""No function under omk/ is longer than a screen (60 lines, decorators and docstring included)."""

from __future__ import annotations

import ast
from pathlib import Path

OMK = Path(__file__).resolve().parent.parent / "omk"
LIMIT = 60

# Known long functions, as "path:name"; each must still be too long (delete the entry with the fix).
# None today.
KNOWN: set[str] = set()


def long_functions(root: Path, limit: int = LIMIT) -> dict[str, int]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = node.end_lineno - start + 1  # type: ignore[operator]
                if length > limit:
                    found[f"{path.relative_to(root.parent).as_posix()}:{node.name}"] = length
    return found


def test_no_function_is_over_the_limit():
    over = {name: n for name, n in long_functions(OMK).items() if name not in KNOWN}
    assert not over, f"functions over {LIMIT} lines: {over}"


def test_the_known_long_functions_are_still_long():
    gone = sorted(KNOWN - set(long_functions(OMK)))
    assert not gone, f"no longer over {LIMIT} lines; delete them from KNOWN: {gone}"


def test_a_long_function_is_found(tmp_path):
    pkg = tmp_path / "omk"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (pkg / "m.py").write_text(f"def short():\n    return 1\n\n\nasync def long():\n{body}\n", encoding="utf-8")
    assert long_functions(pkg) == {"omk/m.py:long": LIMIT + 1}
