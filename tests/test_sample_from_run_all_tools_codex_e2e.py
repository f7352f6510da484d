"""`omk sample --from-run` over the tools the pinned Codex offers or is asked for, with the real
CLI against the scripted loopback Responses model: the shell (`exec_command`) with multi-line and
Unicode text, a mocked shell call, `apply_patch` (a freeform call that adds a file), `update_plan`
with nested JSON, and `Skill`, which Codex does not offer. The unsupported call is in the trace
(`outcome: unsupported`, read from Codex's session file: no hook or JSON event sees it) and named
in every report format; the run becomes samples that replay to a full pass, no call drifting.
The scripted model reads the conversation by call ids, never by position.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml
from cli_support import run_omk
from codex_support import require_codex

from omk.records.document import read_document
from omk.testing import ModelServer, Request, ScriptTurn, ToolRequest
from omk.testing.responses import render, tool_outputs

KEY = "sk-codex-e2e-1f2e3d4c5b6a79880"
PATCH = "*** Begin Patch\n*** Add File: notes/读我.md\n+第一行 line one\n+  ünïcode ✓\n*** End Patch\n"
STEPS: list[ToolRequest] = [
    ToolRequest("shell", "exec_command", {"cmd": "printf '第一行\\nsecond line\\n' | wc -l"}),
    ToolRequest("mocked", "exec_command", {"cmd": "git log --oneline -1"}),
    ToolRequest("patch", "apply_patch", {}, PATCH),
    ToolRequest("plan", "update_plan", {"plan": [{"step": "检查 add", "status": "in_progress"}, {"step": "done", "status": "pending"}]}),
    ToolRequest("skill", "Skill", {"skill": "greeter", "args": {"nested": [1, {"ü": True}]}}),
]


def model(request: Request) -> dict[str, Any]:
    answered = tool_outputs(request)
    for step in STEPS:
        if step.id not in answered:
            return render(ScriptTurn(calls=(step,)))
    return render(ScriptTurn(text="Every tool was tried; the commit is abc1234.", usage={"input_tokens": 40, "output_tokens": 9}))


SAMPLE = {
    "sample_id": "every-codex-tool",
    "prompt": "Try each tool once.",
    "mocks": [{"tool": "Bash", "match": {"command_glob": "*git log*"}, "return": "abc1234 feat: 加法"}],
    "assertions": [{"type": "contains", "value": "abc1234"}],
}


def omk(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=("OPENAI_", "OMK_", "CODEX_"), columns=200, timeout=400)


def test_every_codex_tool_recorded_replays_to_a_full_pass_and_unsupported_calls_are_named(tmp_path):
    codex = require_codex()
    project = tmp_path / "project"
    project.mkdir()
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [SAMPLE]}, allow_unicode=True), encoding="utf-8")
    (project / "omk.yaml").write_text("target: codex:gpt-5\ntimeout: 200\n", encoding="utf-8")
    env = {"OMK_CODEX": codex, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / ".codex")}

    def run(samples: str, out: str) -> subprocess.CompletedProcess:
        args = ["eval", samples, "--out", out, "--no-judge", "--no-cache", "--format", "html,md"]
        with ModelServer(model) as fake:
            return omk(args, project, {**env, "OPENAI_BASE_URL": fake.openai_url})

    first = run("eval-samples.yaml", "run1")
    assert first.returncode == 0, first.stdout + first.stderr
    (recorded,) = read_document(project / "run1").results
    outcomes = [(c.tool, c.outcome) for c in recorded.trace.tool_calls]
    assert ("Bash", "mock") in outcomes
    assert ("Bash", "ran") in outcomes
    assert ("Skill", "unsupported") in outcomes
    # the pinned Codex offers gpt-5 neither update_plan nor apply_patch under `exec`: each is in the trace
    assert {tool for tool, _ in outcomes} == {"Bash", "apply_patch", "update_plan", "Skill"}
    said = "the agent called Skill, which codex: does not offer"
    assert said in recorded.trace.notes
    assert said in first.stdout
    assert said in (project / "run1" / "summary.md").read_text(encoding="utf-8")
    assert said in (project / "run1" / "report.html").read_text(encoding="utf-8")
    skill = next(c for c in recorded.trace.tool_calls if c.tool == "Skill")
    assert skill.input == {"skill": "greeter", "args": {"nested": [1, {"ü": True}]}}
    assert skill.is_error

    made = omk(["sample", "--from-run", "run1", "--output", "recorded.yaml"], project, env)
    assert made.returncode == 0, made.stderr
    assert KEY not in (project / "recorded.yaml").read_text(encoding="utf-8")

    again = run("recorded.yaml", "run2")
    assert again.returncode == 0, again.stdout + again.stderr
    (replayed,) = read_document(project / "run2").results
    assert replayed.passed, again.stdout
    assert not [n for n in replayed.trace.notes if n.startswith("mock drift")], replayed.trace.notes
    assert sorted(c.tool for c in replayed.trace.tool_calls) == sorted(c.tool for c in recorded.trace.tool_calls)
    for call in replayed.trace.tool_calls:  # each call met its recorded mock, or Codex refused it as recorded
        assert call.mocked or call.outcome == "unsupported", call
    assert json.loads((project / "run2" / "report.json").read_text(encoding="utf-8"))["summary"]["passed"] == 1
