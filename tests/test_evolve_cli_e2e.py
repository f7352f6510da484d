"""`omk evolve` with the real Claude Code and Codex CLIs, offline, against the scripted model on
127.0.0.1: the model calls the skill on a "changelog" prompt only when the CLI lists the skill to it
with a description that mentions a changelog (a script rule with `listed:`), so the description
alone decides whether the skill fires. The demo's skill misses every such prompt; the demo's
scripted improver offers a rewording with no effect and the real fix. The loop must reject the
first, keep the fix, and confirm it on the test split.

The run is the smallest that can succeed: one round, 14 changelog probes split 1 / 7 / 6 (the
selection split needs 7 probes for a test at 0.05 / 2 candidates to be passable, the test split 6
for 0.05), so 35 CLI runs with two candidates and 28 with one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml
from claude_support import require_claude
from cli_support import run_omk
from codex_support import require_codex

from omk.testing import ModelServer, anthropic, load_script, responses

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "samples" / "evolve"
KEY = "sk-evolve-e2e-3c5e7a9b1d2f4a6c8e0b"
ORIGINAL = "Drafts release notes for a software version."
NO_EFFECT = "Drafts release notes for a software version, in a calm and tidy tone."
FIX = "Drafts release notes for a software version, or a changelog summary."
ANSWER = "# Release notes\n\n- New: what changed, one line each."

CLAUDE_SCRIPT = f"""
rules:
  - when: changelog
    listed: {{release-notes: changelog}}
    tools:
      - Skill: {{skill: release-notes}}
    answer: "{ANSWER.encode("unicode_escape").decode()}"
  - answer: Here is a general answer.
"""

CODEX_SCRIPT = f"""
rules:
  - when: changelog
    listed: {{release-notes: changelog}}
    tools:
      - exec_command: {{cmd: 'cat "$CODEX_HOME/skills/release-notes/SKILL.md"'}}
    answer: "{ANSWER.encode("unicode_escape").decode()}"
  - answer: Here is a general answer.
"""


def _project(tmp_path: Path) -> Path:
    """The demo folder with 14 of its changelog probes, the prompts the original description misses."""
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    samples = yaml.safe_load((DEMO / "eval-samples.yaml").read_text(encoding="utf-8"))["samples"]
    probes = [s for s in samples if s["sample_id"].startswith("changelog-")][:14]
    (work / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": probes}), encoding="utf-8")
    return work


def _evolve(work: Path, env: dict[str, str], target: str, offer: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "OMK_", "CLAUDE_", "CODEX_"))}
    full.update(env)
    k = str(len(offer.split(",")))
    return run_omk(
        "evolve", "skills/release-notes", "eval-samples.yaml", "--target", target,
        "--improver", f"cmd:python improver.py --offer {offer} --record requests.jsonl",
        "--focus", "description", "--rounds", "1", "--candidates", k, "--split", "1/7/6", "--out", "out",
        cwd=work, base=full, drop=(), columns=None, timeout=600,
    )  # fmt: skip


def _check_the_fix_is_confirmed(work: Path, done: subprocess.CompletedProcess[str]) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((work / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["split"] == {"train": 1, "selection": 7, "test": 6}
    fix = report["candidates"][-1]
    assert fix["status"] == "accepted", fix
    assert fix["decision"]["change"] == 1.0  # every selection probe missed before and fires now
    assert report["level"] == "PROGRESS", report["headline"]
    assert report["gap"]["test"] > 0
    assert f"+description: {FIX}" in report["diff"]
    assert "PROGRESS" in done.stdout
    for variant, fired in (("original", False), ("selected", True)):  # the test split, run once with each skill
        results = json.loads((work / "out" / "final" / "variants" / variant / "report.json").read_text(encoding="utf-8"))["results"]
        assert sorted(r["sample_id"] for r in results) == sorted(report["split_ids"]["test"])
        assert all(r["status"] == "ok" and r["passed"] is fired for r in results), results
        assert all(bool(r["trace"]["tool_calls"]) is fired for r in results)
    return report


def test_claude_code_the_description_decides_the_fix_is_kept_the_no_effect_change_rejected(tmp_path: Path) -> None:
    claude = require_claude()
    work = _project(tmp_path)
    (work / "model.yaml").write_text(CLAUDE_SCRIPT, encoding="utf-8")
    with ModelServer(load_script(work / "model.yaml")) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.root, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        done = _evolve(work, env, "claude:sonnet", "none,fix")
        listed = {anthropic.read_exchange(r.json).skills.get("release-notes") for r in fake.requests if r.method == "POST"}
    report = _check_the_fix_is_confirmed(work, done)
    none, fix = report["candidates"]
    assert none["status"] == "rejected"
    assert none["decision"]["change"] == 0.0  # the rewording changed no probe: the model never called the skill
    assert "not significant" in none["reason"]
    assert listed == {ORIGINAL, NO_EFFECT, FIX}  # each description reached the model through the CLI's listing
    assert report["stop"] == "the last round (1)"


def test_codex_the_description_decides_and_the_fix_is_confirmed(tmp_path: Path) -> None:
    codex = require_codex()
    work = _project(tmp_path)
    (work / "model.yaml").write_text(CODEX_SCRIPT, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    with ModelServer(load_script(work / "model.yaml")) as fake:
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
        done = _evolve(work, env, "codex:gpt-5", "fix")
        listed = {responses.read_exchange(r.json).skills.get("release-notes") for r in fake.requests if r.method == "POST"}
    report = _check_the_fix_is_confirmed(work, done)
    assert len(report["candidates"]) == 1
    assert listed == {ORIGINAL, FIX}
    assert report["stop"] == "the last round (1)"
