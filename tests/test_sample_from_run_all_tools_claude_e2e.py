"""`omk sample --from-run` over every built-in tool the pinned Claude Code offers or is asked
for, with the real CLI against the scripted loopback model: multi-line and Unicode file content,
nested JSON input, a notebook path in the fresh folder, tools this Claude Code does not offer
(Glob, Grep, TodoWrite under `-p`), a check of its own that refuses a call before omk's hook.
The run becomes samples, and the replay passes 100%: no call is drift, each call keeps who
answered it, and the unsupported ones are named per sample in every report format.

Why a replay used to drift, then be refused: Claude Code checks an Edit (the file exists, it was
read) before any PreToolUse hook. In a replay where the Read is a mock's answer the CLI refuses the
Edit itself and omk's mock never sees it. `--from-run` now carries the files of the sample's
workspace the calls named beside the samples it writes, and the recorded Read of such a file says
`run: true`: the real Read runs on the carried copy, so the recorded Edit after it reaches its mock.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml
from claude_support import require_claude
from cli_support import run_omk

from omk.records.document import read_document
from omk.testing import ModelServer, Request
from omk.testing.anthropic import text_reply, tool_use_reply

KEY = "sk-ant-e2e-7a1b2c3d4e5f60718293"
WORK = re.compile(r"/[^\s\"'\\]*/omk-claude-[^/\s\"'\\]+/work")
CONTENT = '第一行 line one\n  indented: "quoted"\n\ttab, ünïcode ✓\n\nlast line\n'


def steps(work: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("Write", {"file_path": f"{work}/notes/读我.md", "content": CONTENT}),
        ("Read", {"file_path": f"{work}/src/app.py"}),
        ("Edit", {"file_path": f"{work}/src/app.py", "old_string": "return a + b\n", "new_string": "return a + b  # 加法\n"}),
        ("Bash", {"command": "printf 'x\\ny\\n' | wc -l", "description": "count lines"}),
        ("Glob", {"pattern": "**/*.py"}),
        ("Grep", {"pattern": "def ", "output_mode": "content", "-n": True}),
        ("TodoWrite", {"todos": [{"content": "检查 add", "status": "in_progress", "activeForm": "Checking add"}]}),
        ("NotebookEdit", {"notebook_path": f"{work}/nb.ipynb", "new_source": "print('hi')\nprint(2)", "cell_type": "code", "edit_mode": "insert"}),
        ("WebFetch", {"url": "https://example.com/a", "prompt": "summarise"}),
        ("WebSearch", {"query": "ünïcode", "allowed_domains": ["example.com"]}),
        ("Skill", {"skill": "no-such-skill"}),
    ]


def _calls_so_far(body: dict[str, Any]) -> int:
    """How many tools the model has asked for so far, read by role and tool-use ids."""
    ids = {
        b.get("id")
        for m in body.get("messages") or []
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    return len(ids)


def model(request: Request) -> dict[str, Any]:
    body = request.json or {}
    found = WORK.search(request.body.decode("utf-8"))
    if found is None or not body.get("tools"):  # a side request of the CLI (a title, a summary)
        return text_reply("ok")
    script = steps(found.group(0))
    step = _calls_so_far(body)
    if step < len(script):
        return tool_use_reply([script[step]], id_prefix=f"at{step}_")
    return text_reply("Every tool was tried; add() is documented.")


SAMPLE = {
    "sample_id": "every-tool",
    "prompt": "Try each tool once.",
    "workspace": "repo",
    "mocks": [{"tool": "WebFetch", "return": "page"}, {"tool": "WebSearch", "return": {"results": [{"title": "ü", "n": [1, 2]}]}}],
    "assertions": [{"type": "contains", "value": "documented"}],
}


def omk(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=("ANTHROPIC_", "OMK_", "CLAUDE_"), columns=200, timeout=400)


def test_every_claude_tool_recorded_replays_to_a_full_pass(tmp_path):
    claude = require_claude()
    project = tmp_path / "project"
    (project / "repo" / "src").mkdir(parents=True)
    (project / "repo" / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    notebook = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "repo" / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [SAMPLE]}, allow_unicode=True), encoding="utf-8")
    (project / "omk.yaml").write_text("target: claude:sonnet\nmax_turns: 20\ntimeout: 200\n", encoding="utf-8")
    env = {"OMK_CLAUDE": claude, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}

    def run(samples: str, out: str) -> subprocess.CompletedProcess:
        args = ["eval", samples, "--out", out, "--no-judge", "--no-cache", "--format", "html,md"]
        with ModelServer(model) as fake:
            return omk(args, project, {**env, "ANTHROPIC_BASE_URL": fake.url})

    first = run("eval-samples.yaml", "run1")
    assert first.returncode == 0, first.stdout + first.stderr
    (recorded,) = read_document(project / "run1").results
    outcomes = {c.tool: c.outcome for c in recorded.trace.tool_calls}
    assert [c.tool for c in recorded.trace.tool_calls] == [tool for tool, _ in steps("")]
    assert outcomes["Write"] == outcomes["Read"] == outcomes["Edit"] == outcomes["Bash"] == "ran"
    assert outcomes["WebFetch"] == outcomes["WebSearch"] == "mock"
    unsupported = [tool for tool, outcome in outcomes.items() if outcome == "unsupported"]
    assert "Skill" not in unsupported
    assert set(unsupported) >= {"Glob", "Grep"}
    said = [f"the agent called {tool}, which claude: does not offer" for tool in unsupported]
    assert all(line in recorded.trace.notes for line in said)
    assert all(line in first.stdout for line in said)
    assert "Unsupported tool calls: 1 sample called tools the target does not offer" in first.stdout
    markdown = (project / "run1" / "summary.md").read_text(encoding="utf-8")
    html = (project / "run1" / "report.html").read_text(encoding="utf-8")
    assert all(line in markdown for line in said)
    assert all(line in html for line in said)
    assert "unsupported by this agent" in html
    stored = json.loads((project / "run1" / "report.json").read_text(encoding="utf-8"))
    assert {c["tool"]: c["outcome"] for c in stored["results"][0]["trace"]["tool_calls"]} == outcomes

    made = omk(["sample", "--from-run", "run1", "--output", "recorded.yaml"], project, env)
    assert made.returncode == 0, made.stderr
    text = (project / "recorded.yaml").read_text(encoding="utf-8")
    carried = project / "recorded.workspace" / "every-tool"  # the files the calls named that the workspace held
    assert "workspace: recorded.workspace/every-tool" in text
    assert (carried / "src" / "app.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n"
    assert (carried / "nb.ipynb").is_file()
    assert not (carried / "notes").exists()  # written by the agent, not held by the workspace
    recorded_mocks = yaml.safe_load(text)["samples"][0]["mocks"]
    assert [m["tool"] for m in recorded_mocks if m.get("run")] == ["Read"]
    assert "file_path_endswith: notes/读我.md" in text
    assert "file_path_endswith: nb.ipynb" in text
    assert KEY not in text
    doctor = omk(["doctor", "recorded.yaml"], project, env)
    assert doctor.returncode in (0, 1) and " 0 errors" in doctor.stdout, doctor.stdout + doctor.stderr  # 1: one sample is "unhealthy"

    again = run("recorded.yaml", "run2")
    assert again.returncode == 0, again.stdout + again.stderr
    (replayed,) = read_document(project / "run2").results
    assert replayed.passed, again.stdout
    assert not [n for n in replayed.trace.notes if n.startswith("mock drift")], replayed.trace.notes
    assert [c.tool for c in replayed.trace.tool_calls] == [c.tool for c in recorded.trace.tool_calls]
    for call, then in zip(replayed.trace.tool_calls, recorded.trace.tool_calls, strict=True):
        # each call met its recorded mock (the Read one let the real Read run), or the CLI refused it as the recording shows
        assert call.mocked or call.mock_key is not None or call.outcome == then.outcome in ("refused", "unsupported"), call
    read, edit = (next(c for c in replayed.trace.tool_calls if c.tool == tool) for tool in ("Read", "Edit"))
    assert read.outcome == "ran"
    assert read.mock_key == "Read:1"
    assert "return a + b" in str(read.output)  # the real Read of the carried file
    assert edit.mocked, edit  # Claude Code let the Edit through to its mock: the file was read
    assert not [n for n in replayed.trace.notes if n.startswith("the agent CLI refused Edit")], replayed.trace.notes
