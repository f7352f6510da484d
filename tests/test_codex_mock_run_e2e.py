"""A mock with `run: true` under `codex:` does what it does under `claude:`: the real tool runs
(on the sample's workspace copy), the call is in the trace with `outcome: ran`, the real output
and the key of the mock that let it run, and that mock counts the hit. Before, Codex's trace
dropped the key, so the call looked unmocked. The real Codex
CLI against the scripted loopback Responses model; the model reads the conversation by call id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from cli_support import run_omk
from codex_support import require_codex

from omk.records.document import read_document
from omk.testing import ModelServer, Request, ScriptTurn, ToolRequest
from omk.testing.responses import render, tool_outputs

KEY = "sk-codex-run-true-0a1b2c3d4e5f"
READ = ToolRequest("read", "exec_command", {"cmd": "cat notes.txt"})
LOG = ToolRequest("log", "exec_command", {"cmd": "git log --oneline -1"})


def model(request: Request) -> dict[str, Any]:
    answered = tool_outputs(request)
    for step in (READ, LOG):
        if step.id not in answered:
            return render(ScriptTurn(calls=(step,)))
    return render(ScriptTurn(text=f"notes: {answered['read']} / log: {answered['log']}", usage={"input_tokens": 20, "output_tokens": 8}))


def test_a_run_true_mock_lets_the_real_call_run_and_counts_it_under_codex(tmp_path: Path) -> None:
    codex = require_codex()
    project = tmp_path / "project"
    (project / "ws").mkdir(parents=True)
    (project / "ws" / "notes.txt").write_text("第一行 from the workspace\n", encoding="utf-8")
    sample = {
        "sample_id": "codex-run-true",
        "prompt": "Read the notes, then the last commit.",
        "workspace": "ws",
        "mocks": [
            {"tool": "Bash", "match": {"command_glob": "*cat notes.txt*"}, "run": True, "return": "NOT THE REAL FILE"},
            {"tool": "Bash", "match": {"command_glob": "*git log*"}, "return": "abc1234 feat: 加法"},
        ],
        "assertions": [{"type": "contains", "value": "from the workspace"}, {"type": "contains", "value": "abc1234"},
                       {"type": "mock_hit", "value": "Bash:1"}],
    }
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}, allow_unicode=True), encoding="utf-8")
    (project / "omk.yaml").write_text("target: codex:gpt-5\ntimeout: 200\n", encoding="utf-8")
    env = {"OMK_CODEX": codex, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / ".codex")}
    with ModelServer(model) as fake:
        done = run_omk("eval", "eval-samples.yaml", "--out", "run", "--no-judge", "--no-cache", cwd=project,
                       env={**env, "OPENAI_BASE_URL": fake.openai_url}, drop=("OPENAI_", "OMK_", "CODEX_"), columns=200, timeout=400)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = read_document(project / "run").results
    assert result.passed, done.stdout
    read = next(c for c in result.trace.tool_calls if "notes.txt" in str(c.input))
    assert (read.outcome, read.mocked, read.mock_key) == ("ran", False, "Bash:1"), read
    assert "from the workspace" in str(read.output)
    log = next(c for c in result.trace.tool_calls if "git log" in str(c.input))
    assert (log.outcome, log.mocked, log.mock_key) == ("mock", True, "Bash:2"), log
    assert result.trace.mock_stats is not None
    assert result.trace.mock_stats.per_mock == {"Bash:1": 1, "Bash:2": 1}
