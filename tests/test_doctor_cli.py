"""`omk doctor` as a real subprocess: layout, --json, --report, --strict and exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_support import run_omk
from report_factory import make_report

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "eval-samples.yaml"



def omk(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, drop=(), timeout=60)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
samples:
  - sample_id: a
    prompt: Summarise the incident report in three bullet points
    capability: [summary]
    assertions: [{type: contains, value: outage}]
  - sample_id: b
    prompt: 把这段发布说明翻译成英文
    capability: [translation]
    rubric: 必须包含所有版本号，术语翻译准确
"""


def test_bundled_samples_are_healthy_and_json_is_complete():
    proc = omk("doctor", str(SAMPLES), "--json")
    assert proc.returncode in (0, 1), proc.stderr
    result = json.loads(proc.stdout)
    assert result["valid"] is True
    assert 0 <= result["health"] <= 100
    assert set(result["totals"]) == {"samples", "flagged", "errors", "warnings", "infos", "advice"}
    assert result["coverage"]["samples"] == result["totals"]["samples"] >= 10
    assert result["healthy"] == (proc.returncode == 0)


def test_clean_set_exits_0_with_a_readable_layout(tmp_path):
    f = write(tmp_path / "eval-samples.yaml", GOOD)
    proc = omk("doctor", str(f))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "health 100/100" in proc.stdout
    assert "coverage" in proc.stdout
    assert "no sample-quality issues found" in proc.stdout
    assert "healthy" in proc.stdout
    proc = omk("doctor", cwd=tmp_path)  # discovered
    assert proc.returncode == 0


def test_error_diagnostic_exits_1_and_warning_only_under_strict(tmp_path):
    ungraded = write(tmp_path / "bare.yaml", GOOD + "  - sample_id: c\n    prompt: Nothing checks this\n")
    proc = omk("doctor", str(ungraded), "--json")
    assert proc.returncode == 1
    assert [d["kind"] for d in json.loads(proc.stdout)["diagnostics"] if d["severity"] != "advice"] == ["no_grading"]

    env = GOOD + "    environment: {cli_available: [omk-no-such-cli-xyz]}\n"
    warned = write(tmp_path / "env.yaml", env)
    assert omk("doctor", str(warned)).returncode == 0
    strict = omk("doctor", str(warned), "--strict")
    assert strict.returncode == 1
    assert "env_cli_missing" in strict.stdout


def test_invalid_samples_print_every_problem_and_exit_2(tmp_path):
    bad = write(
        tmp_path / "bad.yaml",
        "samples:\n  - sample_id: a\n    prompt: ''\n  - sample_id: b\n    prompt: ok\n    difficulty: extreme\n",
    )
    proc = omk("doctor", str(bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "bad.yaml:" in line]
    assert len(lines) >= 2
    assert any(":3" in line for line in lines)
    as_json = json.loads(omk("doctor", str(bad), "--json").stdout)
    assert as_json["valid"] is False
    assert len(as_json["problems"]) >= 2


def test_report_diagnostics(tmp_path):
    f = write(tmp_path / "eval-samples.yaml", GOOD)
    report = make_report(repeats=2)  # cs-refund-en errored in every run
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    proc = omk("doctor", str(f), "--report", str(tmp_path / "run"), "--json")
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert ("error_prone", "error", "cs-refund-en") in {(d["kind"], d["severity"], d["sample_id"]) for d in result["diagnostics"]}
    assert result["run"] == {"run_id": report["run_id"], "results": 6}


def test_doctor_report_only_and_a_bad_report(tmp_path):
    """Without a sample set (none here, none recorded), --report alone gives the run diagnostics."""
    report = make_report()
    report["samples_files"] = [str(tmp_path / "gone.yaml")]
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    proc = omk("doctor", "--report", str(run), "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["coverage"] is None
    assert result["totals"]["samples"] == 3
    assert {d["kind"] for d in result["diagnostics"]} == {"error_prone"}
    text = omk("doctor", "--report", str(run), cwd=tmp_path)
    assert "[error] error_prone" in text.stdout
    assert "cs-refund-en" in text.stdout
    assert "unhealthy" in text.stdout

    (run / "report.json").write_text("[]", encoding="utf-8")
    bad = omk("doctor", "--report", str(run), cwd=tmp_path)
    assert bad.returncode == 2
    assert "format: expected 'omk-report/1'" in bad.stderr
    assert "Traceback" not in bad.stderr
