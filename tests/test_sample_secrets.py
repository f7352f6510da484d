"""`omk sample` masks what `omk eval` would: a key in an environment variable named like one, or
in the variable omk.yaml names with `api_key_env`, is `[redacted]` in the drafted file, its
comments, and on stdout and stderr, whether it came in the target spec (`--key $KEY`), in the
drafting program's output, or in a recorded run (`--from-run`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk

KEY = "shop-9f8e7d6c5b4a3210"

MODEL = """
import json, sys

request = json.loads(sys.stdin.readline())
text = request["prompt"]
key = sys.argv[-1]
if "SHOULD make an agent use this skill" in text:
    items = [{"prompt": f"Where is my parcel A1001? my key is {key}"}]
elif "near-miss" in text:
    items = [{"prompt": "What is the capital of France?"}]
else:
    items = [{"prompt": f"Look up order B2002 with {key}", "rubric": "Says the order's status", "assertions": [{"type": "contains", "value": "B2002"}]}]
print(json.dumps({"type": "response", "output": json.dumps({"samples": items})}), flush=True)
"""


def _omk(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_omk(
        *args,
        cwd=cwd, env=env, drop=("OMK_TARGET", "OMK_JUDGE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"), columns=200, timeout=120,
    )  # fmt: skip


def _everything(folder: Path, proc: subprocess.CompletedProcess[str]) -> str:
    files = [p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*") if p.is_file() and p.suffix != ".py"]
    return "\n".join([proc.stdout, proc.stderr, *files])


@pytest.mark.parametrize("named", ["SHOP_API_KEY", "SHOP_LLM"])
def test_a_key_in_the_target_spec_and_the_drafting_programs_output_reaches_no_file_or_terminal(tmp_path: Path, named: str) -> None:
    skill = tmp_path / "skills" / "order-status"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: order-status\ndescription: Answers where an order is.\n---\n# Order status\nLook the order up first.\n", encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    if named == "SHOP_LLM":  # a name that says nothing: a secret only because omk.yaml names it
        (tmp_path / "omk.yaml").write_text("openai:\n  api_key_env: SHOP_LLM\n", encoding="utf-8")
    spec = f"cmd:{sys.executable} model.py --key {KEY}"
    run = _omk("sample", "skills/order-status", "--target", spec, "-n", "3", "--output", "d.yaml", cwd=tmp_path, env={named: KEY})
    assert run.returncode == 0, run.stdout + run.stderr
    drafted = (tmp_path / "d.yaml").read_text(encoding="utf-8")
    assert "[redacted]" in drafted
    assert "drafted by cmd:" in drafted
    assert KEY not in _everything(tmp_path, run)
    shown = _omk("sample", "skills/order-status", "--target", spec, "-n", "3", cwd=tmp_path, env={named: KEY})
    assert shown.returncode == 0 and "[redacted]" in shown.stdout, shown.stderr
    assert KEY not in shown.stdout + shown.stderr


def test_from_run_masks_a_key_omk_yaml_names_in_a_run_recorded_without_it(tmp_path: Path) -> None:
    sample = {"sample_id": "s1", "prompt": f"use {KEY} to look up B2002", "assertions": [{"type": "contains", "value": "B2002"}]}
    (tmp_path / "s.json").write_text(json.dumps([sample]), encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "s1", "output": f"B2002 shipped; key {KEY}"}) + "\n", encoding="utf-8")
    run = _omk("eval", "s.json", "--target", "replay:r.jsonl", "--no-cache", "--out", "run1", cwd=tmp_path, env={})
    assert run.returncode == 0, run.stdout + run.stderr
    assert KEY in (tmp_path / "run1" / "results.jsonl").read_text(encoding="utf-8")  # recorded while no one knew it was a key
    (tmp_path / "omk.yaml").write_text("openai:\n  api_key_env: SHOP_LLM\n", encoding="utf-8")
    for out in ((), ("--output", "rec.yaml")):
        made = _omk("sample", "--from-run", "run1", *out, cwd=tmp_path, env={"SHOP_LLM": KEY})
        assert made.returncode == 0, made.stderr
        assert KEY not in made.stdout + made.stderr
    written = (tmp_path / "rec.yaml").read_text(encoding="utf-8")
    assert KEY not in written
    assert "[redacted]" in written
