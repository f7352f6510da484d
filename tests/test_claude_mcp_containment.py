"""An MCP server Claude Code starts ends with the call: at a sample's timeout omk stops the CLI's
process group, and on Linux every process below it and every process carrying the call's mark
(`OMK_CALL_MARK`, omk/io/process.py). Here the server, started by the real Claude Code CLI from
`claude.mcp_config`, records the environment it was given and leaves a helper that double-forks
out of the process tree; a tool call that never answers holds the sample past its timeout.
Offline, against the scripted loopback model."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from claude_support import require_claude
from cli_support import run_omk

from omk.testing import ModelServer, Request
from omk.testing.anthropic import text_reply, tool_use_reply

KEY = "sk-ant-e2e-3b7d1f5a9c2e4b6d8f0a"
SERVER = Path(__file__).parent / "mcp_servers" / "lingering_server.py"
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="strays are found through /proc (Linux)")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def model(request: Request) -> dict[str, Any]:
    """Call the lingering tool once the CLI offers it; a side request (a title) gets plain text."""
    if "mcp__linger__wait" not in request.body.decode("utf-8"):
        return text_reply("ok")
    return tool_use_reply([("mcp__linger__wait", {"seconds": 600})], id_prefix="w_")


def test_an_mcp_server_claude_started_and_its_stray_end_with_the_call_at_timeout(tmp_path):
    claude = require_claude()
    probe = tmp_path / "probe.json"
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(SERVER)], "env": {"LINGER_PROBE": str(probe)}}
    config.write_text(json.dumps({"mcpServers": {"linger": server}}), encoding="utf-8")
    sample = {"sample_id": "linger", "prompt": "Wait for the linger server.", "assertions": [{"type": "contains", "value": "waited"}]}
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    (tmp_path / "omk.yaml").write_text(
        f"target: claude:sonnet\nmax_turns: 4\ntimeout: 25\nclaude:\n  mcp_config: {json.dumps(str(config))}\n", encoding="utf-8"
    )
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OMK_", "CLAUDE_"))}
    pids: list[int] = []
    try:
        with ModelServer(model) as fake:
            env = {**full, "OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
            proc = run_omk(
                "eval", "eval-samples.yaml", "--out", "run", "--quiet", "--no-judge", "--no-cache", "--retries", "0",
                cwd=tmp_path, base=env, drop=(), columns=None, timeout=240,
            )  # fmt: skip
        found = json.loads(probe.read_text(encoding="utf-8"))
        stray = int((tmp_path / "probe.json.stray").read_text(encoding="utf-8"))
        pids = [found["pid"], stray]
        report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
        (result,) = report["results"]
        assert (tmp_path / "probe.json.called").exists(), "the tool call never reached the server"
        assert result["status"] == "error" and "timed out" in (result["error"] or ""), (result, proc.stderr)
        assert isinstance(found["mark"], str)
        assert len(found["mark"]) == 24  # Claude Code passes omk's mark on to its MCP servers
        assert gone(found["pid"]), "the MCP server outlived the call"
        assert gone(stray), "the MCP server's stray (out of the tree, in its own session) outlived the call"
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
