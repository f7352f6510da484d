"""A `cmd:` judge (a real subprocess), alone and end to end through `omk eval`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk
from judge_support import graded, make_judge, run, sample

JUDGE = Path(__file__).resolve().parent / "judges" / "scripted_judge.py"


def cmd(*args: str) -> str:
    return "cmd:" + " ".join([sys.executable, str(JUDGE), *args])


def test_cmd_judge_json_reply_with_cost():
    judge = make_judge([cmd("score", "4", "0.002")])
    block = run(graded(judge, sample(rubric="r")))
    assert block["score"] == 4.0
    assert block["rubric"]["reason"] == "cmd judge"
    assert block["cost_usd"] == 0.002
    assert judge.spent_usd() == 0.002


def test_cmd_judge_plain_text_reply():
    block = run(graded(make_judge([cmd("plain", "2")]), sample(rubric="r")))
    assert block["score"] == 2.0
    assert block["cost_usd"] is None


def test_cmd_judge_failure_is_an_error_with_its_stderr():
    block = run(graded(make_judge([cmd("fail")], retries=2), sample(rubric="r")))
    assert block["score"] is None
    assert "exited with code 3: the judge model is not loaded" in block["error"]


def test_cmd_judge_gets_the_request_line(tmp_path):
    log = tmp_path / "requests.jsonl"
    run(graded(make_judge([cmd("echo-file", str(log))], lang="zh"), sample(rubric="RUBRIC-Z")))
    request = json.loads(log.read_text(encoding="utf-8"))
    assert set(request) == {"type", "system", "prompt", "model"}
    assert "RUBRIC-Z" in request["prompt"]
    assert request["prompt"].startswith("请对以下 AI 输出进行质量评分")


# --- end to end through `omk eval` ----------------------------------------------------------------

SAMPLES = """\
samples:
  - sample_id: graded
    prompt: How do I stop SQL injection?
    rubric: Recommends parameterised queries.
    dimensions:
      clarity: easy to follow
    assertions:
      - { type: contains, value: parameter }
      - { type: semantic_similarity, reference: use parameterised queries }
  - sample_id: plain
    prompt: Say hi.
    assertions:
      - { type: contains, value: hi }
"""

RESPONSES = [
    {"sample_id": "graded", "output": "Use parameterised queries.", "trace": {"cost_usd": 0.01}},
    {"sample_id": "plain", "output": "hi there", "trace": {"cost_usd": 0.02}},
]


def omk_eval(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES, encoding="utf-8")
    (tmp_path / "responses.jsonl").write_text("\n".join(json.dumps(r) for r in RESPONSES) + "\n", encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "160", "OMK_RETRY_BASE_S": "0"}
    env.pop("OMK_JUDGE", None)
    env.pop("OMK_TARGET", None)
    out = tmp_path / "run"
    proc = run_omk(
        "eval", "eval-samples.yaml", "--target", "replay:responses.jsonl", "--out", str(out), *args,
        cwd=tmp_path, base=env, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text(encoding="utf-8")) if (out / "report.json").exists() else {}
    return proc, report



def test_omk_eval_with_a_cmd_judge(tmp_path):
    proc, report = omk_eval(tmp_path, "--judge", cmd("score", "4", "0.001"), "--judge-repeat", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    judge = report["judge"]
    assert judge["models"] == [cmd("score", "4", "0.001")]
    assert judge["repeat"] == 2
    assert judge["prompt_version"] == "v3-cot-length-en"
    assert judge["prompt_hash"] == "fb13d0948c38"
    graded_result, plain = report["results"]
    assert graded_result["judge"]["score"] == 4.0
    assert graded_result["scores"]["judge"] == 4.0
    assert graded_result["judge"]["rubric"]["samples"] == [4.0, 4.0]
    assert graded_result["judge"]["dimensions"]["clarity"]["score"] == 4.0
    similarity = graded_result["assertions"][1]
    assert similarity["type"] == "semantic_similarity"
    assert similarity["status"] == "passed"
    assert similarity["score"] == 4.0
    assert plain["judge"] is None
    assert plain["judge_skipped"] is None
    summary = report["summary"]
    assert summary["cost_usd"] == pytest.approx(0.03)  # the target's cost only
    assert summary["judge_cost_usd"] == pytest.approx(0.006)  # (rubric + dimension + assertion) x 2 repeats
    assert summary["scores"]["judge"] == 4.0


def test_omk_eval_zh_without_debias_records_the_frozen_hash(tmp_path):
    proc, report = omk_eval(tmp_path, "--judge", cmd("score", "5"), "--lang", "zh", "--no-debias-length")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["judge"]["prompt_hash"] == "fdc81b19c721"
    assert report["judge"]["debias_length"] is False


def test_omk_eval_judge_failure_errors_the_sample_and_the_run_goes_on(tmp_path):
    proc, report = omk_eval(tmp_path, "--judge", cmd("fail"), "--retries", "0")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    graded_result, plain = report["results"]
    assert graded_result["status"] == "error"
    assert "the judge model is not loaded" in graded_result["error"]
    assert plain["status"] == "ok"
    assert plain["passed"] is True
    assert report["summary"]["errored"] == 1


def test_a_judge_failing_on_every_sample_still_shows_the_scored_layers(tmp_path):
    proc, report = omk_eval(tmp_path, "--judge", cmd("fail"), "--retries", "0", "--filter", "graded")
    assert proc.returncode == 1
    assert report["results"][0]["status"] == "error"
    assert report["results"][0]["scores"]["fact"] == 3.0
    assert report["summary"]["scores"]["fact"] == 3.0
    assert report["summary"]["scores"]["composite"] is None
    assert "composite — (fact 3.00 (1 sample, no interval), behavior —, judge —)" in proc.stdout
    assert "1 sample · 0 passed · 1 failed · 1 errored" in proc.stdout


def test_omk_eval_without_a_judge_skips_and_says_so(tmp_path):
    proc, report = omk_eval(tmp_path, "--no-judge")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    graded_result = report["results"][0]
    assert graded_result["judge"] is None
    assert graded_result["judge_skipped"] == "no judge configured"
    assert graded_result["assertions"][1]["status"] == "skipped"
    assert report["judge"] is None
    assert report["summary"]["judge_cost_usd"] is None
    assert "judge items skipped" in proc.stdout


def test_omk_eval_bad_judge_spec_is_exit_2(tmp_path):
    proc, _ = omk_eval(tmp_path, "--judge", "gemini:pro")
    assert proc.returncode == 2
    assert "unknown kind" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_omk_eval_ensemble_reports_agreement(tmp_path):
    proc, report = omk_eval(tmp_path, "--judge", f"{cmd('score', '4')},{cmd('score', '1')}")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the judge layer (2.5) is under 3.5
    graded_result = report["results"][0]
    assert graded_result["judge"]["score"] == 2.5
    assert [j["score"] for j in graded_result["judge"]["judges"]] == [4.0, 1.0]
    agreement = report["judge"]["agreement"]
    assert agreement["sample_count"] == 1
    assert agreement["mean_abs_diff"] == 3.0
    assert agreement["pearson"] is None


def test_judge_settings_from_omk_yaml_env_and_command_line(tmp_path, monkeypatch):
    from omk.cli.main import build_parser
    from omk.judge import build_judge
    from omk.settings.config import load_settings

    monkeypatch.delenv("OMK_JUDGE", raising=False)
    (tmp_path / "omk.yaml").write_text(f"judge: [{json.dumps(cmd('score', '3'))}]\njudge_repeat: 3\n", encoding="utf-8")
    samples = [tmp_path / "s.yaml"]
    s = load_settings(samples, tmp_path, {})
    assert s.judge == [cmd("score", "3")]
    assert s.judge_repeat == 3
    assert s.debias_length is True
    judge = build_judge(s)
    assert judge.describe()["repeat"] == 3
    assert judge.describe()["prompt_hash"] == "fb13d0948c38"
    monkeypatch.setenv("OMK_JUDGE", f"{cmd('score', '1')},{cmd('score', '2')}")
    assert len(load_settings(samples, tmp_path, {}).judge) == 2
    args = vars(build_parser().parse_args(["eval", "--judge-repeat", "2", "--no-debias-length", "--lang", "zh"]))
    s = load_settings(samples, tmp_path, args)
    assert (s.judge_repeat, s.debias_length) == (2, False)
    assert build_judge(s).describe()["prompt_hash"] == "fdc81b19c721"
    assert build_judge(load_settings(samples, tmp_path, {"no_judge": True})) is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--judge-repeat", "0"])


def test_a_judge_program_that_times_out_is_stopped_with_its_children(tmp_path):
    """Killed as a process group; a grandchild that left the group and holds stdout does not hold
    omk, and is killed too."""
    import asyncio
    import contextlib
    import time

    from omk.judge.clients import make_client
    from omk.targets.base import TargetError

    judge = tmp_path / "judge.py"
    judge.write_text(
        "import subprocess, sys, time\n"
        "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "away = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], start_new_session=True)\n"
        "open('pids.txt', 'w').write(f'{kid.pid} {away.pid}')\n"
        "time.sleep(60)\n",
        encoding="utf-8",
    )
    client = make_client(f"cmd:{sys.executable} {judge}", {})
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(TargetError) as info:
            asyncio.run(client.complete("system", "prompt", 2.0))
    finally:
        os.chdir(cwd)
    assert "timed out" in str(info.value)
    assert info.value.retryable
    kid, away = (int(p) for p in (tmp_path / "pids.txt").read_text().split())

    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split(")")[-1].split()[0] != "Z"
        except OSError:
            return False

    try:
        for _ in range(200):  # the group kill reaches the child that stayed in the group
            if not alive(kid) and not alive(away):
                break
            time.sleep(0.01)
        assert not alive(kid)
        assert not alive(away)  # it left the group; the call's mark found it
    finally:
        for pid in (kid, away):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
