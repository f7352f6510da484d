"""Unknown fields on a sample are warnings (file and line), as in omk 0.54; `--strict` refuses them."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from cli_support import run_omk

import omk
from omk.core.errors import InputError

SAMPLES = """
samples:
  - sample_id: a
    prompt: hi
    author: ana
    x-owner: team-a
    assertions:
      - {type: contains, value: hi}
  - sample_id: b
    turns:
      - prompt: hello
        reviewer: bo
        assertions: [{type: contains, value: hello}]
"""


def _write(folder: Path) -> Path:
    path = folder / "s.yaml"
    path.write_text(textwrap.dedent(SAMPLES).lstrip("\n"), encoding="utf-8")
    (folder / "r.jsonl").write_text(
        '{"sample_id": "a", "output": "hi there"}\n{"sample_id": "b", "turns": [{"output": "hello"}]}\n', encoding="utf-8"
    )
    return path


def _omk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("OMK_TARGET", None)
    env.pop("OMK_JUDGE", None)
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=120)


def test_the_python_api_loads_and_lists_the_warnings(tmp_path):
    path = _write(tmp_path)
    samples = omk.load(path)
    assert [s.sample_id for s in samples] == ["a", "b"]
    shown = [w.render().replace(f"{tmp_path}/", "") for w in samples.warnings]
    assert shown == [
        's.yaml:4: samples[0] (a) author: unknown field "author" (name your own fields with an "x-" prefix, e.g. "x-author"); ignored',
        's.yaml:11: samples[1] (b) turns[0].reviewer: unknown field "reviewer" (name your own fields with an "x-" prefix, e.g. "x-reviewer"); ignored',
    ]
    assert {w.severity for w in samples.warnings} == {"warning"}
    with pytest.raises(InputError) as info:
        omk.load(path, strict=True)
    assert [p.line for p in info.value.problems] == [4, 11]
    assert all(p.severity == "error" and p.message.startswith("unknown field") for p in info.value.problems)


def test_warnings_are_listed_with_the_errors_when_a_file_fails(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("samples:\n  - sample_id: a\n    promt: hi\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        omk.load(path)
    assert [line.replace(f"{tmp_path}/", "") for line in info.value.lines()] == [
        's.yaml:2: samples[0] (a): "prompt" is required',
        's.yaml:3: samples[0] (a) promt: unknown field "promt" (did you mean "prompt"?); ignored',
    ]


def test_omk_eval_warns_on_stderr_runs_and_records_the_warnings(tmp_path):
    _write(tmp_path)
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "omk: 2 warnings in the samples (--strict makes them errors):" in proc.stderr
    assert 's.yaml:4: samples[0] (a) author: unknown field "author"' in proc.stderr
    assert "warning" not in proc.stdout
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    assert len(report["warnings"]) == 2
    assert report["warnings"][0].startswith("s.yaml:4: samples[0] (a) author:")
    assert report["summary"]["total"] == 2


def test_omk_eval_strict_refuses_unknown_fields(tmp_path):
    _write(tmp_path)
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--no-judge", "--strict", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [
        's.yaml:4: samples[0] (a) author: unknown field "author"',
        's.yaml:11: samples[1] (b) turns[0].reviewer: unknown field "reviewer"',
    ]
    assert not (tmp_path / "run").exists()


def test_a_clean_run_has_no_warnings_key(tmp_path):
    _write(tmp_path)
    (tmp_path / "s.yaml").write_text("- {sample_id: a, prompt: hi, x-owner: me}\n", encoding="utf-8")
    report = omk.evaluate(tmp_path / "s.yaml", target=f"replay:{tmp_path / 'r.jsonl'}", judge=False, cache=False)
    assert report.warnings == []
    assert "warnings" not in report.to_dict()


def test_omk_doctor_lists_each_unknown_field_once(tmp_path):
    _write(tmp_path)
    proc = _omk("doctor", "s.yaml", "--json", cwd=tmp_path)
    result = json.loads(proc.stdout)
    found = [d for d in result["diagnostics"] if d["kind"] == "unknown_field"]
    assert [(d["severity"], d["detail"]["field"]) for d in found] == [("warning", "author"), ("warning", "reviewer")]
    assert found[0]["detail"]["places"] == [{"file": "s.yaml", "line": 4, "where": "samples[0] (a)", "field": "author"}]
    text = _omk("doctor", "s.yaml", cwd=tmp_path).stdout
    assert 'unknown field "author" ignored, at s.yaml:4' in text


def test_hundreds_of_problems_print_the_first_20_and_a_count(tmp_path):
    lines = ["samples:"] + [f"  - {{sample_id: s{i}, prompt: p, difficulty: extreme}}" for i in range(300)]
    (tmp_path / "s.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    out = proc.stderr.splitlines()
    assert len(out) == 21
    assert out[0].startswith("s.yaml:2: samples[0] (s0) difficulty: must be one of")
    assert out[19].startswith("s.yaml:21: samples[19] (s19)")
    assert out[20] == "… and 280 more problems (300 in all; --all-errors prints every one)"
    every = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", "--all-errors", cwd=tmp_path)
    assert every.returncode == 2
    assert len(every.stderr.splitlines()) == 300
    assert every.stderr.splitlines()[-1].startswith("s.yaml:301: samples[299]")


def test_twenty_one_problems_print_in_full(tmp_path):
    lines = ["samples:"] + [f"  - {{sample_id: s{i}, prompt: p, difficulty: extreme}}" for i in range(21)]
    (tmp_path / "s.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = _omk("eval", "s.yaml", "--target", "replay:r.jsonl", cwd=tmp_path).stderr.splitlines()
    assert len(out) == 21
    assert "more problem" not in out[-1]
