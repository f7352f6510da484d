"""Trajectories and workspace checks with the real Claude Code CLI, offline, against the scripted
loopback model: a `tool_sequence` in each mode, a file written by a real (not mocked) Write
checked with `file_contains`, a `command_passes` check, and the user's folder left untouched."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from claude_support import require_claude
from cli_support import run_omk

from omk.testing import ModelServer, Request
from omk.testing.anthropic import text_reply, tool_use_reply

KEY = "sk-ant-e2e-7b3f1a9c5d2e4f6a8b0c"
WORK = re.compile(r"/[^\s\"'\\]*/omk-claude-[^/\s\"'\\]+/work")


def omk_eval(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    dropped = ("ANTHROPIC_", "OMK_", "CLAUDE_")
    return run_omk(
        "eval", *args, "--quiet", "--no-judge",
        cwd=cwd, env=env, drop=dropped, columns=None, timeout=180,
    )  # fmt: skip


def _calls_so_far(request: Request) -> int:
    """How many tools the model has asked for so far, read by role, not by position."""
    messages = (request.json or {}).get("messages") or []
    return sum(
        1
        for m in messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    )


def fixer_model(request: Request) -> dict[str, Any]:
    """Read the code, run the (mocked) tests, write notes with the real Write tool, answer."""
    body = request.body.decode("utf-8")
    found = WORK.search(body)
    if found is None:  # a side request of the CLI (a title, a summary): no tools
        return text_reply("ok")
    work = found.group(0)
    steps = [
        ("Read", {"file_path": f"{work}/src/app.py"}),
        ("Bash", {"command": "python -m pytest -q", "description": "run the tests"}),
        ("Write", {"file_path": f"{work}/notes.md", "content": "# Notes\n\nfixed the bug in add()\n"}),
    ]
    step = _calls_so_far(request)
    if step < len(steps):
        return tool_use_reply([steps[step]], id_prefix=f"fix{step}_")
    return text_reply("Fixed; see notes.md.")


CHECK_NOTES = f"{sys.executable} -c \"import pathlib, sys; sys.exit(0 if 'fixed the bug' in pathlib.Path('notes.md').read_text() else 1)\""

SAMPLE = {
    "sample_id": "fix-add",
    "prompt": "Fix the bug in src/app.py and write what you did to notes.md.",
    "workspace": "repo",
    "mocks": [{"tool": "Bash", "match": {"command_glob": "*pytest*"}, "return": "1 passed"}],
    "assertions": [
        {"type": "tool_sequence", "mode": "exact", "steps": [
            {"tool": "Read", "input": {"file_path": "*/src/app.py"}},
            {"tool": "Bash", "input": {"command": {"pattern": "^python -m pytest"}}},
            {"tool": "write", "input": {"file_path": "*/notes.md", "content": "*fixed the bug*"}},
        ]},
        {"type": "tool_sequence", "mode": "in_order", "steps": ["Read", "Write"]},
        {"type": "tool_sequence", "mode": "any_order", "steps": ["Write", "Bash", "Read"]},
        {"type": "tool_sequence", "mode": "in_order", "steps": ["Write", "Read"], "not": True},
        {"type": "tools_only", "values": ["Read", "Write", {"tool": "Bash", "input": {"command": "*pytest*"}}]},
        {"type": "match_tool_call", "tool": "Bash", "arguments": {"command": "python -m pytest -q", "description": "IGNORE"}, "max": 1},
        {"type": "file_contains", "path": "notes.md", "value": "fixed the bug"},
        {"type": "file_contains", "path": "src/app.py", "pattern": "return a \\+ b"},
        {"type": "files_changed", "required": ["notes.md"]},
        {"type": "command_passes", "value": CHECK_NOTES},
    ],
}


def test_trajectories_and_workspace_checks_with_the_real_cli(tmp_path):
    claude = require_claude()
    project = tmp_path / "project"
    (project / "repo" / "src").mkdir(parents=True)
    (project / "repo" / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    before = {p.relative_to(project): p.read_bytes() for p in (project / "repo").rglob("*") if p.is_file()}
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [SAMPLE]}, allow_unicode=True), encoding="utf-8")
    (project / "omk.yaml").write_text("target: claude:sonnet\nmax_turns: 8\ntimeout: 120\n", encoding="utf-8")
    out = tmp_path / "run"
    with ModelServer(fixer_model) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=project, env=env)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["status"] == "ok", result["error"]
    failed = [(a["type"], a["message"]) for a in result["assertions"] if a["status"] != "passed"]
    assert failed == [], failed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = result["trace"]["tool_calls"]
    assert [(c["tool"], c["mocked"]) for c in calls] == [("Read", False), ("Bash", True), ("Write", False)]
    workspace = result["trace"]["workspace"]
    assert [(f["path"], f["content"]) for f in workspace["created"]] == [("notes.md", "# Notes\n\nfixed the bug in add()\n")]
    assert workspace["changed"] == []
    assert workspace["deleted"] == []
    # the user's folder is as it was: the agent wrote in its own copy, which is gone
    after = {p.relative_to(project): p.read_bytes() for p in (project / "repo").rglob("*") if p.is_file()}
    assert after == before
    assert not Path(WORK.search(json.dumps(calls)).group(0)).exists()
