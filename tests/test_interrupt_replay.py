"""Ctrl-C during a replay run: the recorded answers are at hand, so no sample ever waits on
anything, yet SIGINT must stop the run before its end, keep every finished result whole, and
leave a run that `--resume` completes. `omk eval` runs as a real subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from test_run_e2e import env_for, omk, result_lines, wait_for_results

N = 20_000


def write_replay_project(tmp: Path) -> None:
    with (tmp / "eval-samples.jsonl").open("w", encoding="utf-8") as samples, (tmp / "responses.jsonl").open("w", encoding="utf-8") as answers:
        for i in range(N):
            sid = f"s{i:05d}"
            checks = [
                {"type": "contains", "value": "shipped"},
                {"type": "regex", "pattern": r"order \d+ (was|is) shipped"},
                {"type": "rouge_n_min", "reference": "the order was shipped on time today", "threshold": 0.2},
            ]
            samples.write(json.dumps({"sample_id": sid, "prompt": f"[{sid}] Where is my order?", "assertions": checks}) + "\n")
            answers.write(json.dumps({"sample_id": sid, "output": f"Your order {i} was shipped on time and arrives soon."}) + "\n")


def test_ctrl_c_stops_a_replay_run_promptly_and_keeps_what_it_finished(tmp_path):
    write_replay_project(tmp_path)
    run = tmp_path / "run"
    proc = subprocess.Popen(  # not run_omk: the run is interrupted while it works, so Popen
        [sys.executable, "-m", "omk", "eval", "eval-samples.jsonl", "--target", "replay:responses.jsonl",
         "--out", str(run), "--no-judge", "--no-cache", "--quiet"],
        cwd=tmp_path, env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for_results(proc, run, 1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    assert f"omk eval --resume {run}" in err
    assert not (run / "report.json").exists()
    finished = [r["sample_id"] for r in result_lines(run)]  # every line whole: json.loads reads each
    assert 1 <= len(finished) < N, "the run should have stopped before its end"
    assert len(set(finished)) == len(finished)
    assert all(r["status"] == "ok" and r["passed"] for r in result_lines(run))

    resumed = omk("eval", "--resume", str(run), "--quiet", cwd=tmp_path, env=env_for(tmp_path))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert len(report["results"]) == N
    assert sorted(r["sample_id"] for r in result_lines(run)) == [f"s{i:05d}" for i in range(N)]
