"""`omk sample --from-run` on a recorded `claude:` run: the real Claude Code CLI against the
scripted loopback model records a run (a real Read in its fresh folder, a mocked Bash), the run
becomes samples, and the CLI replays them: the same model passes, a model that now greps drifts."""

from __future__ import annotations

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

KEY = "sk-ant-e2e-5c1d9e7f3a2b4c6d8e0f"
WORK = re.compile(r"/[^\s\"'\\]*/omk-claude-[^/\s\"'\\]+/work")


def omk(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=("ANTHROPIC_", "OMK_", "CLAUDE_"), columns=200, timeout=240)


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


def reviewer(grep: bool):
    def model(request: Request) -> dict[str, Any]:
        found = WORK.search(request.body.decode("utf-8"))
        if found is None:  # a side request of the CLI (a title, a summary): no tools
            return text_reply("ok")
        steps = [("Read", {"file_path": f"{found.group(0)}/src/app.py"})]
        if grep:
            steps.append(("Grep", {"pattern": "def "}))
        steps.append(("Bash", {"command": "python -m pytest -q", "description": "run the tests"}))
        step = _calls_so_far(request)
        if step < len(steps):
            return tool_use_reply([steps[step]], id_prefix=f"rv{step}_")
        return text_reply("add() returns a + b and the tests pass: nothing to fix.")

    return model


SAMPLE = {
    "sample_id": "review-add",
    "prompt": "Review src/app.py and run the tests.",
    "workspace": "repo",
    "mocks": [{"tool": "Bash", "match": {"command_glob": "*pytest*"}, "return": "1 passed"}],
    "assertions": [{"type": "contains", "value": "tests pass"}],
}


def test_a_recorded_claude_run_replays_with_the_real_cli_and_names_drift(tmp_path):
    claude = require_claude()
    project = tmp_path / "project"
    (project / "repo" / "src").mkdir(parents=True)
    (project / "repo" / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [SAMPLE]}), encoding="utf-8")
    (project / "omk.yaml").write_text("target: claude:sonnet\nmax_turns: 8\ntimeout: 120\n", encoding="utf-8")
    env = {"OMK_CLAUDE": claude, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}

    def run(samples: str, out: str, grep: bool = False) -> subprocess.CompletedProcess:
        with ModelServer(reviewer(grep)) as fake:
            return omk(["eval", samples, "--out", out, "--no-judge", "--no-cache"], project, {**env, "ANTHROPIC_BASE_URL": fake.url})

    first = run("eval-samples.yaml", "run1")
    assert first.returncode == 0, first.stdout + first.stderr
    made = omk(["sample", "--from-run", "run1", "--output", "recorded.yaml"], project, env)
    assert made.returncode == 0, made.stderr
    text = (project / "recorded.yaml").read_text(encoding="utf-8")
    assert "file_path_endswith: src/app.py" in text
    assert "return a + b" in text
    assert KEY not in text

    again = run("recorded.yaml", "run2")
    assert again.returncode == 0, again.stdout + again.stderr
    (result,) = read_document(project / "run2").results
    assert [(c.tool, c.mocked) for c in result.trace.tool_calls] == [("Read", True), ("Bash", True)]
    assert result.passed
    assert result.trace.notes == ()

    drifted = run("recorded.yaml", "run3", grep=True)
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    assert "mock_drift: the agent now calls Grep, which the recording never did" in drifted.stdout
