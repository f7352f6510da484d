"""How the test suite itself is laid out: `pytest` collects from the project root with no errors,
a fixture is defined once (shared ones in conftest.py), and helpers are imported by module name."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def suite_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def fixture_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a fixture is asked for by, or None when the function is no fixture."""
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call else decorator
        if ast.unparse(target).split(".")[-1] != "fixture":
            continue
        for keyword in call.keywords if call else []:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
        return node.name
    return None


def fixtures_by_name() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in suite_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (name := fixture_name(node)):
                found[name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_a_fixture_name_is_defined_in_one_place():
    twice = {name: places for name, places in fixtures_by_name().items() if len(places) > 1}
    assert not twice, f"fixtures defined more than once (move one copy to tests/conftest.py): {twice}"


def test_fixtures_live_in_conftest_or_in_the_test_module_that_uses_them():
    # A fixture in a helper module works only where a test module imports it by name, and each
    # importing module then gets its own copy (a session fixture runs once per module).
    elsewhere = [
        place
        for places in fixtures_by_name().values()
        for place in places
        if not Path(place.split(":")[0]).name.startswith(("test_", "conftest"))
    ]
    assert not elsewhere, f"fixtures outside conftest.py and test modules: {elsewhere}"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
    return found


def test_helpers_are_imported_by_module_name_and_test_modules_by_none():
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in suite_files()
        for line, module in imported_modules(path)
        if module.split(".")[0] == "tests" or module.split(".")[-1].startswith("test_")
    ]
    assert not wrong, f"import helpers as `from helpers import ...`, and move what a test module shares to a helper: {wrong}"


def test_pytest_collects_from_the_project_root_without_errors(tmp_path: Path):
    # `pytest` (not `python -m pytest`) leaves the project root off sys.path; -P does the same for
    # `python -m`. omk is found through a folder that holds only a link to this checkout's package,
    # so the root is not on the path through PYTHONPATH either.
    (tmp_path / "omk").symlink_to(ROOT / "omk", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
    assert proc.returncode == 0 and "error" not in summary, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "tests collected" in summary, summary


# Files that start `python -m omk` themselves, each for a reason `run_omk` cannot serve; each says
# why beside the command.
OWN_OMK_COMMAND = {
    "cli_support.py": "it is the one helper",
    "conftest.py": "`omk serve-model` runs until the test ends, so Popen",
    "report_corpus.py": "a script run by hand to re-render the corpus, not a test",
    "test_assert_workspace.py": "omk runs under a small parent that reads its peak memory",
    "test_mcp_hostile.py": "omk runs under a small parent that reads its peak memory",
    "test_cli_eval.py": "stdout is a pipe whose reader has gone; the interpreter runs with -X importtime",
    "test_scripted_model.py": "`omk serve-model` runs until the test ends, so Popen",
    "test_target_cmd_mcp.py": "the run is interrupted while it works, so Popen",
    "test_results_streaming.py": "the run is killed while it writes, so Popen",
    "test_run_e2e.py": "the run is interrupted while it works, so Popen",
    "test_run_folder_lock.py": "a second run starts while the first one works, so Popen",
}


def omk_command_lines(path: Path) -> list[int]:
    """The lines where `path` writes a command list with `-m omk` in it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.List | ast.Tuple):
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            if any(words[i] == "-m" and words[i + 1] == "omk" for i in range(len(words) - 1)):
                found.append(node.lineno)
    return found


def test_tests_run_omk_through_the_one_helper():
    """`python -m omk` in a subprocess goes through cli_support.run_omk (its environment, columns,
    timeout and traceback check in one place); the files in OWN_OMK_COMMAND say why they cannot."""
    own = {p.name: lines for p in suite_files() if (lines := omk_command_lines(p))}
    stray = {name: lines for name, lines in own.items() if name not in OWN_OMK_COMMAND}
    assert not stray, f"use cli_support.run_omk instead of a `-m omk` command line: {stray}"
    assert sorted(own) == sorted(OWN_OMK_COMMAND), "an exception no longer starts omk itself: take it off the list"
    for name in set(OWN_OMK_COMMAND) - {"cli_support.py"}:
        assert "not run_omk" in (TESTS / name).read_text(encoding="utf-8"), f"{name}: say why beside the command"


def test_no_compound_assertion_hides_which_part_failed():
    """`assert a and b` says only that the whole was false; one assert per part names the part
    that failed (an assert with its own message may join parts: the message says which)."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if "fixtures" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assert) and node.msg is None and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And):
                found.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not found, "split into one assert per part: " + ", ".join(found)
