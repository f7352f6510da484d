"""A mock with `run: true` under a target that cannot run a real tool (`cmd:`, whose tools omk
answers itself; the API targets alike) answers with its return, and the sample's trace says so:
`mock Read:1 says run: true, which cmd: cannot do …`, in every report the note reaches, and in
Chinese under `--lang zh`. (Under claude: and codex: the real tool runs: tests/test_codex_mock_run_e2e.py,
tests/test_sample_from_run_all_tools_claude_e2e.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml
from cli_support import run_omk

AGENT = """
import json, sys
json.loads(sys.stdin.readline())
print(json.dumps({"type": "tool_call", "id": "c1", "tool": "Read", "input": {"file_path": "notes.txt"}}), flush=True)
answer = json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "output": "read: " + answer["output"]}), flush=True)
"""


def test_a_run_true_mock_a_cmd_target_cannot_run_is_said_per_sample(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    sample = {
        "sample_id": "reads-notes",
        "prompt": "Read the notes.",
        "mocks": [{"tool": "Read", "match": {"input": {"file_path": "notes.txt"}}, "run": True, "return": "recorded notes"}],
        "assertions": [{"type": "contains", "value": "recorded notes"}],
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    done = run_omk("eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--no-judge", "--out", "run", "--format", "md",
                   cwd=tmp_path, drop=(), columns=200, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    said = "mock Read:1 says run: true, which cmd: cannot do (omk answers its tools itself): its return answered"
    assert said in result["trace"]["notes"]
    (call,) = result["trace"]["tool_calls"]
    assert (call["outcome"], call["mock_key"], call["output"]) == ("mock", "Read:1", "recorded notes")
    assert said in (tmp_path / "run" / "summary.md").read_text(encoding="utf-8")
    assert "Mocks with run: true that the target could not run: 1 sample" in done.stdout, done.stdout
    assert said in done.stdout
    zh = run_omk("report", "run", "--format", "md", "--lang", "zh", "--out", "zh", cwd=tmp_path, drop=(), columns=200, timeout=120)
    assert zh.returncode == 0, zh.stderr
    assert "mock Read:1 写了 run: true，但 cmd: 做不到" in (tmp_path / "zh" / "summary.md").read_text(encoding="utf-8")
