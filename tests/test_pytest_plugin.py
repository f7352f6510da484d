"""The pytest plugin, run as a user runs it: `python -m pytest FILE --omk-target …` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_run(folder: Path, *args: str, calls: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OMK_TARGET", None)
    env.pop("OMK_JUDGE", None)
    if calls is not None:
        env["OMK_TEST_CALLS"] = str(calls)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_each_sample_is_an_item_failures_fail_and_errors_error(project):
    folder, target = project
    proc = pytest_run(folder, "eval-samples.yaml", "--omk-target", target)
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "2 passed" in out and "1 failed" in out and "1 error" in out, out
    assert "PASSED eval-samples.yaml::passes-one" in out
    assert "PASSED eval-samples.yaml::judged-one" in out  # judge off: rubric skipped, assertions decide
    assert "FAILED eval-samples.yaml::fails-one" in out
    assert "ERROR eval-samples.yaml::errors-one" in out
    assert "sample fails-one failed: composite" in out
    assert "contains 'bonjour'" in out
    assert "output: echo: say goodbye" in out  # messages and the output
    assert "crashed on purpose" in out


def test_k_selects_by_sample_id_and_runs_only_those(project):
    folder, target = project
    calls = folder / "calls.log"
    proc = pytest_run(folder, "eval-samples.yaml", "--omk-target", target, "--omk-no-cache", "-k", "passes or judged", calls=calls)
    assert proc.returncode == 0, proc.stdout
    assert "2 passed, 2 deselected" in proc.stdout
    assert sorted(calls.read_text(encoding="utf-8").split()) == ["judged-one", "passes-one"]


def test_a_file_that_does_not_load_is_a_collection_error_with_its_lines(project):
    folder, target = project
    (folder / "bad.yaml").write_text("samples:\n  - sample_id: a\n    promt: x\n", encoding="utf-8")
    proc = pytest_run(folder, "bad.yaml", "--omk-target", target)
    assert proc.returncode != 0
    assert "bad.yaml:3: samples[0] (a) promt: unknown field" in proc.stdout, proc.stdout


def test_target_from_omk_yaml_threshold_and_run_folder(project):
    folder, target = project
    (folder / "omk.yaml").write_text(f"target: {target!r}\n", encoding="utf-8")
    proc = pytest_run(folder, "eval-samples.yaml", "--omk-threshold", "1", "--omk-out", "runs", "-k", "fails")
    assert proc.returncode == 0, proc.stdout  # composite 1.0 passes a threshold of 1
    assert (folder / "runs" / "eval-samples" / "report.json").is_file()


def test_unnamed_yaml_files_are_not_collected_unless_omk_files_says_so(project):
    folder, target = project
    (folder / "test_plain.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
    proc = pytest_run(folder, "--omk-target", target)
    assert "1 passed" in proc.stdout
    assert "eval-samples.yaml" not in proc.stdout
    (folder / "pytest.ini").write_text("[pytest]\nomk_files = eval-*.yaml\n", encoding="utf-8")
    proc = pytest_run(folder, "--omk-target", target, "-k", "passes or plain")
    assert "2 passed" in proc.stdout and "eval-samples.yaml::passes-one" in proc.stdout, proc.stdout


def test_an_unexpected_error_while_loading_is_a_collection_error_not_a_crash(project):
    folder, target = project
    # The project's own conftest makes loading fail in a way omk does not foresee.
    (folder / "conftest.py").write_text(
        "import omk.api\n\ndef _broken(path):\n    raise RuntimeError('the disk went away')\n\nomk.api.load = _broken\n",
        encoding="utf-8",
    )
    proc = pytest_run(folder, "eval-samples.yaml", "--omk-target", target)
    assert proc.returncode == 2, proc.stdout + proc.stderr  # interrupted by a collection error
    assert "ERROR eval-samples.yaml" in proc.stdout and "RuntimeError: the disk went away" in proc.stdout, proc.stdout
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
