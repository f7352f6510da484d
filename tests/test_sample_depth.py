"""`omk sample` holds what it writes to the depth the samples loader reads: a drafted mock
`return` or a recorded tool input nested past it costs only its own sample, in one line, and
every other sample is written and loads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml
from cli_support import run_omk

from omk.loader import load_samples
from omk.loader.depth import MAX_DEPTH

SKILL = "---\nname: order-status\ndescription: Look up an order's status.\n---\n# Order status\nRead orders.csv.\n"

# A drafting model (a real `cmd:` program): a good task and a task whose mock `return` is nested
# 400 deep, asked again for the broken one, it sends it back as deep.
MODEL = """
import json, sys

text = json.loads(sys.stdin.readline())["prompt"]
deep = "x"
for _ in range(400):
    deep = [deep]
good = {"prompt": "A customer asks for the status of order A1001.", "rubric": "Must give the status.",
        "mocks": [{"tool": "Read", "return": "A1001,shipped"}], "assertions": [{"type": "contains", "value": "shipped"}]}
bad = {**good, "prompt": "Which carrier took parcel C300 out of the warehouse last night?", "mocks": [{"tool": "Read", "return": deep}]}
if "omk could not use it" in text:
    items = [bad]
elif "SHOULD make an agent use this skill" in text:
    items = [{"prompt": "Where is my parcel A1001?"}]
elif "near-miss" in text:
    items = [{"prompt": "What is the capital of France?"}]
else:
    items = [good, bad]
print(json.dumps({"type": "response", "output": json.dumps({"samples": items})}), flush=True)
"""

# An agent (a real `cmd:` program) whose one tool call's input is nested DEPTH deep.
AGENT = """
import json, sys

request = json.loads(sys.stdin.readline())
if "deep" in request["prompt"]:
    deep = "x"
    for i in range(DEPTH):
        deep = {"a": deep} if i % 2 else [deep]
    print(json.dumps({"type": "tool_call", "id": "c1", "tool": "lookup", "input": {"q": deep}}), flush=True)
    json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "output": "done: the order has shipped"}), flush=True)
"""


def omk_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_omk(
        *args,
        cwd=cwd, drop=("OMK_TARGET", "OMK_JUDGE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"), columns=200,
    )  # fmt: skip


def test_a_drafted_mock_return_nested_400_deep_costs_only_its_draft(tmp_path):
    (tmp_path / "skills" / "order-status").mkdir(parents=True)
    (tmp_path / "skills" / "order-status" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    run = omk_cli("sample", "skills/order-status", "--target", f"cmd:{sys.executable} model.py", "--triggers", "2", "--tasks", "2", "--output", "d.yaml", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    assert "RecursionError" not in run.stderr
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("dropped")]
    assert f"mocks[0].return[0]…: nested deeper than {MAX_DEPTH} levels" in line, run.stderr
    loaded = load_samples([tmp_path / "d.yaml"], strict=True)
    assert [s.sample_id for s in loaded.samples] == ["trigger-1", "near-miss-1", "task-1"]
    assert loaded.samples[2].prompt == "A customer asks for the status of order A1001."


def _recorded_run(tmp_path: Path, depth: int) -> Path:
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT).replace("DEPTH", str(depth)), encoding="utf-8")
    samples = {
        "samples": [
            {"sample_id": "deep", "prompt": "go deep", "mocks": [{"tool": "lookup", "return": "found"}], "assertions": [{"type": "contains", "value": "done"}]},
            {"sample_id": "flat", "prompt": "go flat", "assertions": [{"type": "contains", "value": "done"}]},
        ]
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(samples), encoding="utf-8")
    run = omk_cli("eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--no-judge", "--no-cache", "--out", "run1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [json.loads(x) for x in (tmp_path / "run1" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["sample_id"]: r["status"] for r in rows} == {"deep": "ok", "flat": "ok"}
    return tmp_path / "run1"


def test_a_recorded_tool_input_nested_past_the_loaders_depth_leaves_out_only_its_sample(tmp_path):
    """400 deep (past the loader's 200: a file written with it would not load) and the recursive
    writers' limit alike: the sample is left out in one line, the other is recorded and loads."""
    _recorded_run(tmp_path, 400)
    made = omk_cli("sample", "--from-run", "run1", "--output", "rec.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-3000:]
    assert "Traceback" not in made.stderr
    assert "RecursionError" not in made.stderr
    (line,) = made.stderr.splitlines()
    assert line.startswith("left out deep: ") and f"nested deeper than {MAX_DEPTH} levels" in line, line
    assert "rec.yaml: 1 sample recorded from run1" in made.stdout
    (sample,) = load_samples([tmp_path / "rec.yaml"], strict=True).samples
    assert sample.sample_id == "flat"


def test_a_recorded_input_just_past_the_limit_is_left_out_not_written_unloadable(tmp_path):
    _recorded_run(tmp_path, 250)
    made = omk_cli("sample", "--from-run", "run1", "--output", "rec.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert [x for x in made.stderr.splitlines() if x.startswith("left out deep: ")], made.stderr
    assert [s.sample_id for s in load_samples([tmp_path / "rec.yaml"], strict=True).samples] == ["flat"]
