"""`--no-judge` with a judge configured: every skipped judge item says the judge was turned off,
not that none was configured. Real `omk eval` subprocesses, a `cmd:` judge in OMK_JUDGE."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk

HERE = Path(__file__).resolve().parent
JUDGE = f"cmd:{sys.executable} {HERE / 'judges' / 'scripted_judge.py'} score 4"
OFF = "judge turned off (--no-judge)"
NONE = "no judge configured"

SAMPLES = """
samples:
  - sample_id: kind-zh
    prompt: 请礼貌地打个招呼
    rubric: 回答礼貌、简洁
    assertions:
      - {type: contains, value: 你好}
      - {type: answer_relevancy}
"""


def omk(tmp_path: Path, *args: str, judge: str | None) -> subprocess.CompletedProcess:
    return run_omk("eval", *args, cwd=tmp_path, env={} if judge is None else {"OMK_JUDGE": judge}, columns=200, timeout=120)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "kind-zh", "output": "你好！"}, ensure_ascii=False) + "\n", encoding="utf-8")
    return tmp_path


def run(tmp_path: Path, *extra: str, judge: str | None, code: int = 0) -> tuple[subprocess.CompletedProcess, dict, Path]:
    out = tmp_path / ("run" + str(len(list(tmp_path.glob("run*")))))
    args = ("s.yaml", "--target", "replay:r.jsonl", "--out", str(out), "--format", "md,html,junit", *extra)
    proc = omk(tmp_path, *args, judge=judge)
    assert proc.returncode == code, proc.stdout + proc.stderr
    return proc, json.loads((out / "report.json").read_text(encoding="utf-8")), out


@pytest.mark.parametrize("where", ["OMK_JUDGE", "omk.yaml"])
def test_no_judge_with_a_configured_judge_says_it_was_turned_off(files, where):
    if where == "omk.yaml":
        (files / "omk.yaml").write_text(f"judge: {json.dumps(JUDGE)}\n", encoding="utf-8")
    proc, report, out = run(files, "--no-judge", judge=JUDGE if where == "OMK_JUDGE" else None)
    result = report["results"][0]
    assert report["judge"] is None
    assert result["judge_skipped"] == OFF
    relevancy = next(a for a in result["assertions"] if a["type"] == "answer_relevancy")
    assert relevancy["status"] == "skipped"
    assert relevancy["message"] == f"skipped: {OFF}"
    assert report["summary"]["skipped_judge_items"] == 2
    assert report["summary"]["skipped_judge_reason"] == OFF
    line = f"2 judge items skipped: {OFF}"
    for text in (proc.stdout, (out / "summary.md").read_text(encoding="utf-8"), (out / "report.html").read_text(encoding="utf-8")):
        assert line in text
        assert NONE not in text
    assert f"judge skipped: {OFF}" in (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("flags", [(), ("--no-judge",)], ids=["plain", "no-judge-with-nothing-to-turn-off"])
def test_without_a_judge_the_old_wording_stays(files, flags):
    proc, report, out = run(files, *flags, judge=None)
    assert report["results"][0]["judge_skipped"] == NONE
    assert report["summary"]["skipped_judge_reason"] == NONE
    line = f"2 judge items skipped: {NONE} (use --judge)"
    assert line in proc.stdout
    assert line in (out / "summary.md").read_text(encoding="utf-8")
    assert OFF not in proc.stdout


def test_the_configured_judge_runs_without_the_flag(files):
    # The scripted judge scores the rubric but cannot list answer_relevancy's statements, so the
    # sample errors (exit 1): what matters is that the judge ran and nothing was skipped.
    _, report, _ = run(files, judge=JUDGE, code=1)
    assert report["judge"]["models"] == [JUDGE]
    assert report["results"][0]["judge_skipped"] is None
    assert report["results"][0]["judge"]["score"] == 4
    assert report["summary"]["skipped_judge_items"] == 0
    assert report["summary"]["skipped_judge_reason"] is None


def test_no_judge_in_chinese(files):
    proc, _, out = run(files, "--no-judge", "--lang", "zh", judge=JUDGE)
    line = "2 项评委打分被跳过：评委已关闭（--no-judge）"
    assert line in proc.stdout
    assert line in (out / "summary.md").read_text(encoding="utf-8")


def test_pairwise_verdicts_say_the_judge_was_turned_off(files):
    out = files / "pair"
    proc = omk(files, "s.yaml", "--target", "replay:r.jsonl", "--target", "replay:r.jsonl", "--out", str(out), "--no-judge", judge=JUDGE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    block = json.loads((out / "report.json").read_text(encoding="utf-8"))["experiment"]["pairwise"]
    assert [(v["status"], v["error"]) for v in block["pairs"][0]["verdicts"]] == [("skipped", OFF)]
    assert block["judge"] is None
    assert "skipped" in proc.stdout
