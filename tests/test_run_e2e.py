"""The run engine end to end: `omk eval` as a real subprocess against real targets.

A `cmd:` agent (a Python program speaking the command protocol) appends every call it gets to a
counter file, so the tests can tell exactly which samples were called how often: after SIGINT and
SIGKILL, `--resume` finishes without calling a finished sample again; the cache makes a second
run call nothing and brings the whole trace back; errors are not cached. An OpenAI-compatible
server on 127.0.0.1 counts requests and checks the key never lands in the run folder or cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

from omk.testing import Drop, ModelServer

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-test-4f1c9e0d2b7a6e58c3d1"

AGENT = r'''
import json, os, sys, time
req = json.loads(sys.stdin.readline())
sid = req["sample_id"]
with open(os.environ["OMK_TEST_CALLS"], "a", encoding="utf-8") as f:
    f.write(sid + "\n")
time.sleep(float(os.environ.get("OMK_TEST_SLOW", "0")))
if sid.startswith("bad"):
    print("agent crashed", file=sys.stderr)
    sys.exit(3)
found = ""
if sid.startswith("tool"):
    print(json.dumps({"type": "tool_call", "id": "c1", "tool": "lookup_order", "input": {"order_id": "A1"}}), flush=True)
    reply = json.loads(sys.stdin.readline())
    found = " order status: " + str(reply.get("output"))
print(json.dumps({"type": "response", "output": "hello from " + sid + found, "cost_usd": 0.01}), flush=True)
'''


def write_project(tmp: Path, ids: list[str]) -> Path:
    (tmp / "agent.py").write_text(AGENT, encoding="utf-8")
    samples = []
    for sid in ids:
        sample = {"sample_id": sid, "prompt": f"greet {sid}", "assertions": [{"type": "contains", "value": "hello"}]}
        if sid.startswith("tool"):
            sample["mocks"] = [{"tool": "lookup_order", "return": "shipped"}]
            sample["mocksStrict"] = True
            sample["assertions"].append({"type": "tools_called", "values": ["lookup_order"]})
            sample["assertions"].append({"type": "contains", "value": "shipped"})
        samples.append(sample)
    path = tmp / "eval-samples.yaml"
    path.write_text(yaml.safe_dump({"samples": samples}, sort_keys=False), encoding="utf-8")
    return path


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "160", "OMK_RETRY_BASE_S": "0.01"}
    for key in ("OMK_TARGET", "OMK_JUDGE", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    env["OMK_TEST_CALLS"] = str(tmp / "calls.log")
    env.update(extra)
    return env


def omk(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=180)


def calls(tmp: Path) -> Counter:
    path = tmp / "calls.log"
    return Counter(path.read_text(encoding="utf-8").split()) if path.exists() else Counter()


def result_lines(run: Path) -> list[dict]:
    path = run / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def wait_for_results(proc: subprocess.Popen, run: Path, n: int) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        path = run / "results.jsonl"
        if path.exists() and path.read_text(encoding="utf-8").count("\n") >= n:
            return
        assert proc.poll() is None, f"omk ended early: {proc.communicate()}"
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} results appeared")


IDS = [f"s{i}" for i in range(8)]
TARGET = f"cmd:{sys.executable} agent.py"


def interrupted_run(tmp: Path, sig: int) -> tuple[Path, set[str], subprocess.Popen]:
    write_project(tmp, IDS)
    run = tmp / "run"
    proc = subprocess.Popen(  # not run_omk: the run is interrupted while it works, so Popen
        [sys.executable, "-m", "omk", "eval", "eval-samples.yaml", "--target", TARGET, "--out", str(run),
         "--concurrency", "2", "--no-cache", "--quiet"],
        cwd=tmp, env=env_for(tmp, OMK_TEST_SLOW="1.0"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for_results(proc, run, 2)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    finished = {r["sample_id"] for r in result_lines(run)}
    assert 2 <= len(finished) < len(IDS), "the run should have been cut in the middle"
    return run, finished, proc


def check_resumed(tmp: Path, run: Path, finished: set[str]) -> dict:
    proc = omk("eval", "--resume", str(run), "--target", TARGET, "--quiet", cwd=tmp, env=env_for(tmp))  # a command: given again
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert [r["sample_id"] for r in report["results"]] == IDS
    assert all(r["status"] == "ok" and r["output"] == f"hello from {r['sample_id']}" for r in report["results"])
    counted = calls(tmp)
    assert set(counted) == set(IDS)
    assert all(counted[sid] == 1 for sid in finished), counted  # finished samples were not called again
    assert sorted(r["sample_id"] for r in result_lines(run)) == IDS  # each pair exactly once
    return report


def test_ctrl_c_keeps_a_resumable_run(tmp_path):
    run, finished, proc = interrupted_run(tmp_path, signal.SIGINT)
    out, err = proc.communicate()
    assert proc.returncode == 130, out + err
    assert f"omk eval --resume {run}" in err
    assert "Traceback" not in err
    assert (run / "run.json").exists()
    assert not (run / "report.json").exists()
    report = check_resumed(tmp_path, run, finished)
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert report["run_id"] == manifest["run_id"]
    assert report["started_at"] == manifest["started_at"]


def test_a_killed_run_with_a_torn_last_line_resumes(tmp_path):
    run, finished, proc = interrupted_run(tmp_path, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    with (run / "results.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"sample_id": "s7", "status": "ok", "outp')  # what a kill in mid-write leaves
    check_resumed(tmp_path, run, finished)


def test_resume_refuses_to_change_what_the_run_is(tmp_path):
    write_project(tmp_path, ["s0"])
    run = tmp_path / "run"
    assert omk("eval", "--target", TARGET, "--out", str(run), "--quiet", cwd=tmp_path, env=env_for(tmp_path)).returncode == 0
    proc = omk("eval", "--resume", str(run), "--target", "replay:x.jsonl", cwd=tmp_path, env=env_for(tmp_path))
    assert proc.returncode == 2
    assert "not the run's target" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = omk("eval", "--resume", str(run), "--filter", "s*", cwd=tmp_path, env=env_for(tmp_path))
    assert proc.returncode == 2
    assert "drop --filter" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = omk("eval", "--resume", str(tmp_path), cwd=tmp_path, env=env_for(tmp_path))
    assert proc.returncode == 2
    assert "run.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_cache_makes_a_rerun_free_with_the_whole_trace_and_never_keeps_errors(tmp_path):
    ids = ["s0", "tool-1", "bad-1"]
    write_project(tmp_path, ids)
    env = env_for(tmp_path)
    first = omk("eval", "--target", TARGET, "--out", "r1", "--quiet", cwd=tmp_path, env=env)
    assert first.returncode == 1, first.stdout + first.stderr  # bad-1 errored: the gate fails
    assert calls(tmp_path) == Counter(ids)
    second = omk("eval", "--target", TARGET, "--out", "r2", "--quiet", cwd=tmp_path, env=env)
    assert second.returncode == 1
    assert calls(tmp_path) == Counter({"s0": 1, "tool-1": 1, "bad-1": 2})  # only the error ran again
    assert (tmp_path / ".omk" / "cache.sqlite").exists()
    r1 = {r["sample_id"]: r for r in json.loads((tmp_path / "r1" / "report.json").read_text())["results"]}
    r2 = {r["sample_id"]: r for r in json.loads((tmp_path / "r2" / "report.json").read_text())["results"]}
    assert r2["tool-1"]["cached"] is True
    assert r2["tool-1"]["attempts"] == 0
    assert r1["tool-1"]["cached"] is False
    assert r2["tool-1"]["trace"] == r1["tool-1"]["trace"]
    assert [c["tool"] for c in r2["tool-1"]["trace"]["tool_calls"]] == ["lookup_order"]
    assert r2["tool-1"]["passed"] is True
    assert r2["tool-1"]["assertions"] == r1["tool-1"]["assertions"]
    assert r2["bad-1"]["status"] == "error"
    assert r2["bad-1"]["cached"] is False
    summary = json.loads((tmp_path / "r2" / "report.json").read_text())["summary"]
    assert summary["cached"] == 2
    assert summary["cost_usd"] == 0.0  # nothing was spent this time
    third = omk("eval", "--target", TARGET, "--out", "r3", "--no-cache", "--quiet", cwd=tmp_path, env=env)
    assert third.returncode == 1
    assert calls(tmp_path) == Counter({"s0": 2, "tool-1": 2, "bad-1": 3})  # --no-cache reads nothing


def test_repeat_runs_each_sample_n_times_and_reports_the_spread(tmp_path):
    write_project(tmp_path, ["s0", "s1"])
    proc = omk("eval", "--target", TARGET, "--out", "r", "--repeat", "3", cwd=tmp_path, env=env_for(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert calls(tmp_path) == Counter({"s0": 3, "s1": 3})
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert [(r["sample_id"], r["repeat"]) for r in report["results"]] == [
        ("s0", 0), ("s0", 1), ("s0", 2), ("s1", 0), ("s1", 1), ("s1", 2)
    ]  # fmt: skip
    assert report["summary"]["total"] == 6
    assert report["summary"]["repeat"] == 3
    assert report["repeats"]["samples"] == 2
    assert report["repeats"]["always_passed"] == 2
    assert report["repeats"]["per_sample"][0]["composite"] == {"mean": 5.0, "stddev": 0.0, "min": 5.0, "max": 5.0}
    assert "Repeats (3 runs per sample)" in proc.stdout


# ------------------------------------------------------------------ API targets over loopback


class _FakeOpenAI(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hello there"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def openai_server():
    handler = type("Handler", (_FakeOpenAI,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler.requests
    server.shutdown()
    server.server_close()


def test_api_key_never_lands_in_the_run_folder_or_the_cache(tmp_path, openai_server):
    base_url, requests = openai_server
    write_project(tmp_path, ["s0", "s1"])
    env = env_for(tmp_path, OPENAI_API_KEY=SECRET, OPENAI_BASE_URL=base_url)
    for out in ("r1", "r2"):
        proc = omk("eval", "--target", "openai:gpt-4o-mini", "--out", out, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert SECRET not in proc.stdout + proc.stderr
    assert len(requests) == 2  # the second run came from the cache
    assert all(r["auth"] == f"Bearer {SECRET}" for r in requests)  # the key was really used
    files = [p for p in (tmp_path / ".omk").rglob("*") if p.is_file()] + [
        p for p in tmp_path.glob("r*/*") if p.is_file()
    ]
    assert any(p.name == "cache.sqlite" for p in files)
    assert any(p.name == "run.json" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path


def test_a_dead_target_errors_every_sample_and_the_run_ends_with_exit_1(tmp_path):
    # The server accepts connections (so the check before the run passes) and drops each request:
    # dead once the run is under way. A server down from the start stops the run before it
    # begins (tests/test_preflight.py).
    write_project(tmp_path, ["s0", "s1", "s2"])
    with ModelServer.for_openai([Drop()]) as dead:
        env = env_for(tmp_path, OPENAI_API_KEY=SECRET, OPENAI_BASE_URL=dead.url)
        proc = omk("eval", "--target", "openai:gpt-4o-mini", "--out", "r", "--retries", "1", cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["summary"]["errored"] == 3
    assert len(report["results"]) == 3
    for r in report["results"]:
        assert r["status"] == "error"
        assert r["attempts"] == 2
        assert "gave up after 2 attempts" in r["error"]
    assert not (tmp_path / ".omk" / "cache.sqlite").exists() or b"hello" not in (
        tmp_path / ".omk" / "cache.sqlite"
    ).read_bytes()


# --- Ctrl-C during a replay run ------------------------------------------------------------
# The recorded answers are at hand, so no sample ever waits on anything; SIGINT must still stop
# the run before its end, keep every finished result whole, and leave a run `--resume` completes.

REPLAY_SAMPLES = 20_000


def write_replay_project(tmp: Path) -> None:
    with (tmp / "eval-samples.jsonl").open("w", encoding="utf-8") as samples, (tmp / "responses.jsonl").open("w", encoding="utf-8") as answers:
        for i in range(REPLAY_SAMPLES):
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
    assert 1 <= len(finished) < REPLAY_SAMPLES, "the run should have stopped before its end"
    assert len(set(finished)) == len(finished)
    assert all(r["status"] == "ok" and r["passed"] for r in result_lines(run))

    resumed = omk("eval", "--resume", str(run), "--quiet", cwd=tmp_path, env=env_for(tmp_path))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert len(report["results"]) == REPLAY_SAMPLES
    assert sorted(r["sample_id"] for r in result_lines(run)) == [f"s{i:05d}" for i in range(REPLAY_SAMPLES)]
