"""An MCP server that misbehaves cannot hang the run, leak a token to omk's stderr, fill omk's
memory with its stderr, or leave a child running after omk: a real server over stdio
(tests/mcp_servers/hostile_server.py), through `omk eval` and through the fetcher itself."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from omk.inline.fetched import FetchFailure
from omk.inline.mcp_config import load_mcp_config
from omk.inline.mcp_fetch import McpFetcher

HOSTILE = Path(__file__).resolve().parent / "mcp_servers" / "hostile_server.py"
TOKEN = "tok-HOSTILE-7788-do-not-leak"
URL = "https://docs.hostile.internal/page"


def project(tmp: Path, mode: str, **env: str) -> Path:
    server = {
        "command": sys.executable, "args": [str(HOSTILE)],
        "env": {"HOSTILE_MODE": mode, "DOCS_API_TOKEN": TOKEN, **env},
        "urlPatterns": ["docs.hostile.internal"], "fetchTool": {"name": "fetch_plain"},
    }  # fmt: skip
    (tmp / ".mcp.json").write_text(json.dumps({"mcpServers": {"hostile": server}}), encoding="utf-8")
    samples = {"samples": [{"sample_id": "a", "prompt": f"Read {URL}", "assertions": [{"type": "contains", "value": "recorded"}]}]}
    (tmp / "eval-samples.json").write_text(json.dumps(samples), encoding="utf-8")
    (tmp / "responses.jsonl").write_text(json.dumps({"sample_id": "a", "output": "recorded answer"}) + "\n", encoding="utf-8")
    (tmp / "omk.yaml").write_text("target: replay:responses.jsonl\n", encoding="utf-8")
    return tmp / ".mcp.json"


def omk_eval(tmp: Path, *, measure: bool = False) -> tuple[subprocess.CompletedProcess, int]:
    """`omk eval` in `tmp`; with `measure`, also omk's peak memory in KB (run under a small parent)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    # not run_omk: with `measure` the command runs under a small parent that reads omk's peak memory
    argv = [sys.executable, "-m", "omk", "eval", "eval-samples.json", "--out", "run", "--no-cache"]
    if measure:
        argv = [sys.executable, "-c", (
            "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
            "print('peak', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(p.returncode)"
        ), *argv]  # fmt: skip
    proc = subprocess.run(argv, cwd=tmp, env={**env, "NO_COLOR": "1"}, capture_output=True, text=True, timeout=120)
    peak = next((int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("peak ")), 0)
    return proc, peak


def url_entry(tmp: Path) -> dict:
    result = json.loads((tmp / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    return result["urls"][0]


def test_a_server_that_never_answers_the_sdks_tools_list_cannot_hang_the_fetch(tmp_path):
    config = load_mcp_config(project(tmp_path, "no-list"))
    assert config is not None

    async def fetch_once() -> object:
        fetcher = McpFetcher(call_timeout=2)
        try:
            return await fetcher.fetch(config.servers[0], URL)
        finally:
            await fetcher.aclose()

    started = time.monotonic()
    got = asyncio.run(asyncio.wait_for(fetch_once(), 30))  # without omk's deadline this waits forever
    assert isinstance(got, FetchFailure) and "timed out" in got.reason, got
    assert time.monotonic() - started < 20


def test_a_line_that_is_not_json_rpc_leaks_no_token_and_no_traceback(tmp_path):
    project(tmp_path, "junk")
    proc, _ = omk_eval(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert TOKEN not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr, proc.stderr
    assert TOKEN not in (tmp_path / "run" / "report.json").read_text(encoding="utf-8")
    assert url_entry(tmp_path)["source"] == "mcp:hostile"  # the server still served the page


def test_a_flood_of_server_stderr_keeps_only_its_tail(tmp_path):
    project(tmp_path, "flood", HOSTILE_STDERR_MB="300")
    proc, peak_kb = omk_eval(tmp_path, measure=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "stderr ends here" in json.dumps(url_entry(tmp_path))  # the last line is the reason shown
    assert 0 < peak_kb < 200 * 1024, peak_kb  # 300 MB of stderr is never held


def test_a_child_the_server_leaves_behind_ends_with_the_session(tmp_path):
    pid_file = tmp_path / "child.pid"
    project(tmp_path, "child", HOSTILE_CHILD_PID=str(pid_file))
    proc, _ = omk_eval(tmp_path)
    assert proc.returncode == 0, proc.stderr
    pid = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid), f"the server's child {pid} outlived omk eval"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state  # a zombie has ended; only its parent's reaping is left
