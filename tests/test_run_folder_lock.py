"""One run at a time in a run folder, and a run folder that cannot be written: two real omk
processes on one `--out`, an `--out` under a file or on a read-only file system (one line, exit 2,
before the run), and a file size limit reached mid-run (the run stops with one line and
`--resume` finishes it)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import run_omk

AGENT = """\
import json, os, sys, time
sys.stdin.read()
time.sleep(float(os.environ.get("OMK_TEST_SLOW", "0")))
print(json.dumps({"response": "hi there " + "x" * 300}))
"""
TARGET = f"cmd:{sys.executable} agent.py"


def project(tmp: Path, n: int) -> None:
    (tmp / "agent.py").write_text(AGENT, encoding="utf-8")
    lines = "".join(f"  - {{ sample_id: s{i}, prompt: hi, assertions: [{{ type: contains, value: hi }}] }}\n" for i in range(n))
    (tmp / "s.yaml").write_text("samples:\n" + lines, encoding="utf-8")


def env(**extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    return {**clean, "NO_COLOR": "1", **extra}


def eval_args(out: str, *more: str) -> list[str]:
    return ["eval", "s.yaml", "--target", TARGET, "--out", out, "--no-cache", "--quiet", *more]


def one_line_exit_2(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


def test_a_second_run_in_the_same_folder_is_refused_and_the_first_one_is_whole(tmp_path):
    project(tmp_path, 4)
    first = subprocess.Popen(  # not run_omk: a second run starts while this one works, so Popen
        [sys.executable, "-m", "omk", *eval_args("run", "--concurrency", "1")], cwd=tmp_path, env=env(OMK_TEST_SLOW="0.5"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (tmp_path / "run" / "run.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = run_omk(*eval_args("run"), cwd=tmp_path, base=env(), drop=(), columns=None, timeout=60)
    out, err = first.communicate(timeout=120)
    one_line_exit_2(second, str(tmp_path / "run"), "another omk run is using this run folder")
    assert first.returncode == 0, out + err
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    assert [r["sample_id"] for r in report["results"]] == ["s0", "s1", "s2", "s3"]
    again = run_omk(*eval_args("run"), cwd=tmp_path, base=env(), drop=(), columns=None, timeout=60)
    assert again.returncode == 0, again.stderr  # the lock ends with the run that held it


def test_an_out_under_a_file_is_one_line_before_the_run(tmp_path):
    project(tmp_path, 1)
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    proc = run_omk(*eval_args("a-file/run"), cwd=tmp_path, base=env(), drop=(), columns=None, timeout=60)
    one_line_exit_2(proc, str(tmp_path / "a-file" / "run"), "cannot write the run folder")


@pytest.fixture
def read_only_dir(tmp_path):
    """A folder omk cannot write into: its mode for a normal user, a read-only mount for root."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if shutil.which("mount") is None or subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True
    ).returncode:
        pytest.skip("root cannot be kept out of a folder here without a read-only mount")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)


def test_an_out_on_a_read_only_file_system_is_one_line_before_the_run(tmp_path, read_only_dir):
    project(tmp_path, 1)
    proc = run_omk(
        *eval_args(str(read_only_dir / "run")),
        cwd=tmp_path, base=env(), drop=(), columns=None, timeout=60,
    )  # fmt: skip
    one_line_exit_2(proc, str(read_only_dir / "run"), "cannot write the run folder")


FILE_LIMIT = 6000  # run.json fits, results.jsonl fills up after a few lines


def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


def test_a_disk_that_fills_mid_run_stops_it_with_one_line_and_resume_finishes_it(tmp_path):
    project(tmp_path, 12)
    proc = run_omk(
        *eval_args("run", "--concurrency", "2"),
        cwd=tmp_path, base=env(), drop=(), columns=None, timeout=120, preexec_fn=_small_files,
    )  # fmt: skip
    run = tmp_path / "run"
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{run / 'results.jsonl'}: cannot write: File too large" in proc.stderr
    assert f"omk eval --resume {run}" in proc.stderr
    kept = (run / "results.jsonl").read_bytes()
    assert kept.endswith(b"\n")
    assert 0 < kept.count(b"\n") < 12  # whole lines only
    resumed = run_omk(
        "eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet",
        cwd=tmp_path, base=env(), drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert sorted(r["sample_id"] for r in report["results"]) == sorted(f"s{i}" for i in range(12))
