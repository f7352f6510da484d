"""What a new user sees in the terminal: a failing sample shows the failed check's message and the
start of the output it judged, a passing run prints no "Failures" heading, the table fits 80
columns without wrapping, and `--repeat` counts runs as runs."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from cli_support import run_omk
from rich.console import Console

from omk.report.terminal import print_summary

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "eval-samples.yaml"
CONTINUATION = re.compile(r"^│\s+│")  # a row whose first cell is empty: a wrapped line


def _omk(*args: str, cwd: Path, columns: int = 80) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": str(columns)}
    env.pop("OMK_TARGET", None)
    env.pop("OMK_JUDGE", None)
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=300)


def _failing(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "samples:\n"
        "  - sample_id: refund-policy-with-a-rather-long-identifier\n"
        "    prompt: What is the refund window?\n"
        "    assertions:\n"
        "      - {type: contains, value: 30 days}\n"
        "  - sample_id: ok\n"
        "    prompt: hi\n"
        "    assertions: [{type: contains, value: hi}]\n",
        encoding="utf-8",
    )
    answer = "Refunds are possible within two weeks of delivery, provided the item is unused. " * 4
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"sample_id": "refund-policy-with-a-rather-long-identifier", "output": answer})
        + "\n"
        + json.dumps({"sample_id": "ok", "output": "hi"})
        + "\n",
        encoding="utf-8",
    )


def test_a_failing_sample_shows_the_message_and_the_start_of_the_output(tmp_path):
    _failing(tmp_path)
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    start = lines.index("Failures")
    assert lines[start + 1].strip() == "refund-policy-with-a-rather-long-identifier"
    assert lines[start + 2:start + 4] == [
        "    - below threshold 3.5: fact 1.00",
        "    - contains '30 days': output does not contain \"30 days\"",
    ]
    output = lines[start + 4]
    assert output.startswith("    output: Refunds are possible within two weeks of delivery")
    assert output.endswith("…")
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert not [line for line in lines if CONTINUATION.match(line)]
    assert any(line.startswith("│ refund-policy-with-a") and "…" in line for line in lines)


def test_a_passing_run_prints_no_failures_heading(tmp_path):
    proc = _omk("eval", str(SAMPLES), "--target", f"replay:{ROOT / 'samples' / 'responses.jsonl'}", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Failures" not in proc.stdout
    assert all(len(line) <= 80 for line in proc.stdout.splitlines())
    assert not [line for line in proc.stdout.splitlines() if CONTINUATION.match(line)]


def test_a_passing_sample_with_a_failed_check_is_not_listed_as_a_failure():
    report = {
        "format": "omk-report/1",
        "summary": {"threshold": 3.5, "total": 1, "passed": 1, "failed": 0, "errored": 0, "gate_passed": True,
                    "scores": {"fact": 4.0, "behavior": None, "judge": None, "composite": 4.0}},
        "results": [{
            "sample_id": "a", "status": "ok", "passed": True, "output": "x", "repeat": 0,
            "scores": {"fact": 4.0, "behavior": None, "judge": None, "composite": 4.0},
            "assertions": [
                {"type": "contains", "status": "passed", "passed": True, "message": "found", "value": "x", "children": []},
                {"type": "contains", "status": "failed", "passed": False, "message": "not found", "value": "y", "children": []},
            ],
        }],
    }  # fmt: skip
    console = Console(file=io.StringIO(), width=80, color_system=None)
    print_summary(report, console)
    text = console.file.getvalue()
    assert "Failures" not in text
    assert "Passed, with failed checks" in text
    assert "not found" in text


def test_repeat_counts_runs_as_runs(tmp_path):
    _failing(tmp_path)
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--repeat", "3", "--out", "run", cwd=tmp_path)
    assert "2 samples × 3 runs · 3/6 runs passed · 3 failed · 0 errored" in proc.stdout
    assert "#3 refund-policy" in proc.stdout
    assert "#2 ok" in proc.stdout
    assert "2 samples ·" not in proc.stdout
    assert "6 samples" not in proc.stdout
    quiet = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--repeat", "3", "--quiet", "--out", "q", cwd=tmp_path)
    assert quiet.stdout.startswith("gate failed: 3/6 runs (2 samples × 3) · ")


def test_the_summary_names_every_file_the_run_wrote(tmp_path):
    _failing(tmp_path)
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--format", "html,junit,md", "--out", "run", cwd=tmp_path, columns=400)
    # under the current folder, as the user can type them
    assert "report: run/report.json" in proc.stdout
    assert "also written: run/report.html, run/junit.xml, run/summary.md" in proc.stdout
    quiet = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--format", "junit", "--quiet", "--out", "q", cwd=tmp_path)
    assert quiet.stdout.strip().endswith("q/report.json, q/junit.xml")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"  # outside the current folder: in full
    far = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--out", str(elsewhere), cwd=tmp_path, columns=400)
    assert f"report: {elsewhere / 'report.json'}" in far.stdout


def test_one_sample_is_counted_in_the_singular(tmp_path):
    (tmp_path / "s.yaml").write_text("samples:\n  - sample_id: ok\n    prompt: hi\n    bogus: 1\n    assertions: [{type: contains, value: hi}]\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "ok", "output": "hi"}) + "\n")
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--out", "run", cwd=tmp_path)
    assert "1 sample · 1 passed · 0 failed · 0 errored" in proc.stdout
    assert "omk: 1 warning in the samples" in proc.stderr
    zh = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--lang", "zh", "--out", "zh", cwd=tmp_path)
    assert "1 条用例 · 1 通过" in zh.stdout
    repeated = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--repeat", "2", "--out", "rep", cwd=tmp_path)
    assert "1 sample × 2 runs · 2/2 runs passed" in repeated.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("samples:\n  - sample_id: x\n    assertions: []\n")
    doctor = _omk("doctor", "bad.yaml", cwd=tmp_path)
    assert doctor.returncode == 2 and "1 problem found" in doctor.stderr, doctor.stderr


def test_an_experiment_names_every_file_it_wrote(tmp_path):
    _failing(tmp_path)
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--target", "cmd:echo hi", "--no-judge", "--format", "html,md",
                "--out", "exp", cwd=tmp_path, columns=400)  # fmt: skip
    assert "report: exp/report.json" in proc.stdout, proc.stdout + proc.stderr
    assert "also written: exp/report.html, exp/summary.md" in proc.stdout


def test_the_category_and_capability_tables_fit_80_columns_with_their_intervals(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "samples:\n"
        + "".join(
            f"  - {{sample_id: s{i}, prompt: hi, category: billing-{i % 2}, capability: [customer-support-{i % 2}],"
            f" assertions: [{{type: contains, value: {'hi' if i % 3 else 'zz'}}}]}}\n"
            for i in range(6)
        )
        + "  - {sample_id: gone, prompt: hi, category: billing-0, assertions: [{type: contains, value: hi}]}\n",
        encoding="utf-8",
    )
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"sample_id": f"s{i}", "output": "hi"}) + "\n" for i in range(6)), encoding="utf-8")
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--out", "run", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert "By category" in proc.stdout and "By capability" in proc.stdout, proc.stdout + proc.stderr
    assert any(re.search(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", line) and "billing-0" in line for line in lines)
    assert any("errored" in line for line in lines)  # the sample with no recorded output errored
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert not [line for line in lines if CONTINUATION.match(line)]


def test_quiet_experiment_names_its_files_under_the_current_folder(tmp_path):
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    quiet = _omk("eval", "samples/experiment/eval-samples.yaml", "--no-judge", "--seed", "7", "--format", "md", "--quiet", "--out", "x", cwd=tmp_path)
    assert quiet.returncode in (0, 1), quiet.stderr
    line = quiet.stdout.strip()
    assert line.endswith(" · x/report.json, x/summary.md"), line
    assert str(tmp_path) not in line
