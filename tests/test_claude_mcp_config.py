"""`claude.mcp_config`, the user's MCP servers for the `claude:` target, holds the same promises as
the MCP servers of URL inlining: the file is read by the file rules (a FIFO or /dev/zero is one
line, never a hang or a MemoryError), and the tokens in its servers' `env` never reach a file of
the run folder or the terminal, even when a server echoes its token to the agent. The real Claude
Code CLI, offline, against the scripted loopback model and a real MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from claude_support import require_claude
from cli_support import run_omk

from omk.testing import ModelServer, Request
from omk.testing.anthropic import text_reply, tool_use_reply

KEY = "sk-ant-e2e-5c1d9e7f3a2b4c6d8e0f"
TOKEN = "docs-tok-4e8a1c7b9d2f6e3a"
DOCS_SERVER = Path(__file__).parent / "mcp_servers" / "docs_server.py"


def omk_eval(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    dropped = ("ANTHROPIC_", "OMK_", "CLAUDE_")
    return run_omk(
        "eval", *args, "--quiet", "--no-judge", "--no-cache",
        cwd=cwd, env=env, drop=dropped, columns=None, timeout=240,
    )  # fmt: skip


def tool_results(request: Request) -> list[str]:
    """The text of every tool result the CLI sent back, read by role and block type."""
    found = []
    for message in (request.json or {}).get("messages") or []:
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                found.append(json.dumps(content) if not isinstance(content, str) else content)
    return found


def echoing_model(request: Request) -> dict[str, Any]:
    """Ask the docs server for the page that carries its token, then repeat what it said."""
    body = request.body.decode("utf-8")
    if "mcp__docs__fetch_doc" not in body:  # a side request of the CLI (a title): no tools
        return text_reply("ok")
    results = tool_results(request)
    if not results:
        return tool_use_reply([("mcp__docs__fetch_doc", {"namespace": "eng", "slug": "echo-token"})], id_prefix="doc_")
    return text_reply(f"The server said: {results[-1]}")


def project(tmp: Path, mcp_config: Path) -> Path:
    root = tmp / "project"
    root.mkdir()
    sample = {"sample_id": "docs", "prompt": "Fetch the eng/echo-token document.", "assertions": [{"type": "contains", "value": "Private"}]}
    (root / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    (root / "omk.yaml").write_text(
        f"target: claude:sonnet\nmax_turns: 4\ntimeout: 150\nclaude:\n  mcp_config: {json.dumps(str(mcp_config))}\n", encoding="utf-8"
    )
    return root


def test_a_token_in_an_mcp_config_servers_env_reaches_no_file_or_terminal(tmp_path):
    claude = require_claude()
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(DOCS_SERVER)], "env": {"DOCS_API_TOKEN": TOKEN}}
    config.write_text(json.dumps({"mcpServers": {"docs": server}}), encoding="utf-8")
    root = project(tmp_path, config)
    out = tmp_path / "run"
    with ModelServer(echoing_model) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=root, env=env)
        asked = [r for r in fake.requests if "mcp__docs__fetch_doc" in r.body.decode("utf-8")]
    assert any(TOKEN in text for r in asked for text in tool_results(r)), "the server never echoed its token"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["status"] == "ok", result["error"]
    assert "[redacted]" in result["output"], result["output"]
    for path in out.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(encoding="utf-8", errors="replace"), path
    assert TOKEN not in proc.stdout + proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_file_as_mcp_config_is_one_line_never_a_hang(tmp_path, kind):
    claude = require_claude()
    if kind == "fifo":
        config = tmp_path / "mcp.json"
        os.mkfifo(config)
    else:
        config = Path("/dev/zero")
    root = project(tmp_path, config)
    env = {"OMK_CLAUDE": claude, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
    proc = omk_eval(["eval-samples.yaml", "--out", str(tmp_path / "run")], cwd=root, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    assert "claude.mcp_config: cannot read" in proc.stderr, proc.stderr
