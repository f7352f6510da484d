"""docs/skills.md's walkthrough, command by command, with the real Claude Code CLI against the
scripted model `omk serve-model` plays on 127.0.0.1: the commands the page shows run as shown
(from a copy of the repository's `samples/skills/`), exit as the page says, and print the lines
it quotes."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from claude_support import require_claude
from cli_support import run_omk

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "skills.md"


def flat(text: str) -> str:
    """Terminal output with the table borders and line wraps taken out, words single-spaced."""
    return " ".join(re.sub(r"[│┃┏┓┗┛┡┩└┘┌┐━─╇╈┳┻╭╮╯╰]", " ", text).split())


def omk(args: list[str], cwd: Path, url: str, claude: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OMK_", "CLAUDE_"))}
    env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "offline", "OMK_CLAUDE": claude, "HOME": str(cwd), "COLUMNS": "100"})
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=300)


def shown_commands() -> list[str]:
    """The `omk …` commands of the page's walkthrough, as written there."""
    text = DOC.read_text(encoding="utf-8")
    return [line.strip() for line in re.findall(r"^(?:ANTHROPIC_BASE_URL=\S+ ANTHROPIC_API_KEY=\S+ )?omk .*$", text, re.M)]


def test_the_page_shows_the_commands_this_test_runs():
    commands = shown_commands()
    assert "omk serve-model samples/skills/model-script.yaml &" in commands
    assert "omk doctor samples/skills/eval-samples.yaml" in commands
    offline = "ANTHROPIC_BASE_URL=http://127.0.0.1:8642 ANTHROPIC_API_KEY=offline omk eval samples/skills/eval-samples.yaml --no-judge"
    assert offline in commands
    assert f"{offline} --control without=baseline --treatment library=samples/skills/skills --seed 1" in commands


def test_the_walkthrough_runs_offline_as_the_page_says(repo_copy: Path, model_url: str):
    project = repo_copy
    claude = require_claude()
    doctor = omk(["doctor", "samples/skills/eval-samples.yaml"], project, model_url, claude)
    assert doctor.returncode == 0 and "health 100/100" in doctor.stdout, doctor.stdout + doctor.stderr

    run = omk(["eval", "samples/skills/eval-samples.yaml", "--no-judge", "--out", "run"], project, model_url, claude)
    out = flat(run.stdout)
    assert run.returncode == 1, run.stdout + run.stderr  # one probe is routed to the wrong skill
    assert "5 samples · 4 passed · 1 failed · 0 errored" in out
    assert "skill release-notes invoked 0 time(s) < 1; fired instead: changelog" in out
    assert "release-notes: never fired on the samples that expect it" in out
    assert "release-notes (1) 1 · · ·" in out  # the routing matrix: expected release-notes, fired changelog
    report = json.loads((project / "run" / "report.json").read_text(encoding="utf-8"))
    results = {r["sample_id"]: r for r in report["results"]}
    assert [s for s, r in results.items() if not r["passed"]] == ["announce-1.5"]
    changelog = results["changelog-csv"]
    assert [(c["tool"], c["mocked"], c["is_error"]) for c in changelog["trace"]["tool_calls"]] == [("Skill", False, False), ("Bash", False, False)]
    assert [c["path"] for c in changelog["trace"]["workspace"]["changed"]] == ["CHANGELOG.md"]
    assert "## 1.5.0" not in (project / "samples" / "skills" / "fixtures" / "project" / "CHANGELOG.md").read_text(encoding="utf-8")
    commit = results["commit-staged"]["trace"]["tool_calls"]
    assert [(c["tool"], c["mocked"]) for c in commit] == [("Skill", False), ("Bash", True)]
    skills = {s["skill"]: s for s in report["triggering"]["skills"]}
    assert (skills["changelog"]["false_trigger_rate"]["k"], skills["changelog"]["false_trigger_rate"]["n"]) == (1, 2)
    assert skills["release-notes"]["missed"] == ["announce-1.5"]

    experiment = omk(
        ["eval", "samples/skills/eval-samples.yaml", "--no-judge", "--control", "without=baseline",
         "--treatment", "library=samples/skills/skills", "--seed", "1", "--out", "exp"],
        project, model_url, claude,
    )
    out = flat(experiment.stdout)
    assert experiment.returncode == 0, experiment.stdout + experiment.stderr
    assert "Verdict: UNDERPOWERED" in out
    assert "UNDERPOWERED · library vs without: Δ=+0.13 CI=" in out
    assert "without control 3/5 4.07" in out
    assert "library treatment 4/5 4.20" in out
    assert "Triggering · without" in out
    assert re.search(r"changelog \(not\b", out)  # "(not installed)", maybe wrapped
    block = json.loads((project / "exp" / "report.json").read_text(encoding="utf-8"))["experiment"]
    deltas = {s["sample_id"]: s["delta"] for s in block["comparisons"][0]["per_sample"]}
    assert deltas == {"changelog-csv": 2.0, "commit-staged": 0.67, "announce-1.5": -2.0, "near-miss-changelog": 0.0, "near-miss-amend": 0.0}
    recall = {(c["skill"], c["rate"]): c for c in block["triggering"]}[("changelog", "recall")]
    assert (recall["control_fired"], recall["treatment_fired"], recall["gained"]) == (0, 1, 1)
