"""Skill triggering with the real Claude Code CLI, offline, against a scripted loopback model: two
skills installed together from a folder of skill folders, one sample where a skill must fire, one
where it must not, one routed to the wrong skill; then the same samples as a with/without
experiment, where the baseline has no skill at all."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml
from claude_support import require_claude, write_skill
from cli_support import run_omk

from omk.testing import ModelServer, Request
from omk.testing.anthropic import text_reply, tool_use_reply

KEY = "sk-ant-e2e-7a1c3e5f9b2d4f6a8c0e"


def omk_eval(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OMK_", "CLAUDE_"))}
    full.update(env)
    return run_omk(
        "eval", *args, "--quiet", "--no-judge",
        cwd=cwd, base=full, drop=(), columns=None, timeout=300,
    )  # fmt: skip


SAMPLES = {
    "samples": [
        {
            "sample_id": "fires-pdf",
            "prompt": "Pull the tables out of QUARTERLY.pdf for me.",
            "assertions": [{"type": "skill_used", "value": "pdf-tools"}, {"type": "skill_used", "value": "docx-tools", "not": True}],
        },
        {
            "sample_id": "quiet-near-miss",
            "prompt": "What is the capital of France? (no files involved)",
            "assertions": [{"type": "skill_used", "value": "pdf-tools", "not": True}],
        },
        {
            "sample_id": "routed-wrong",
            "prompt": "Tidy up the headings of LETTER.docx.",
            "assertions": [{"type": "skill_used", "value": "docx-tools"}],
        },
    ]
}


def _tool_uses(request: Request) -> int:
    """Tool calls the model has made so far in this conversation, read by role."""
    return sum(
        1
        for m in (request.json or {}).get("messages") or []
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    )


def _user_text(request: Request) -> str:
    """The user's words (the prompt), not the system prompt where the skills are listed."""
    parts = []
    for m in (request.json or {}).get("messages") or []:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        parts += [content] if isinstance(content, str) else [b.get("text", "") for b in content or [] if isinstance(b, dict)]
    return "\n".join(parts)


def model(request: Request) -> dict[str, Any]:
    """Loads pdf-tools for a PDF and (wrongly) for a Word file too; answers plain questions directly."""
    text = _user_text(request)
    if _tool_uses(request) == 0 and ("QUARTERLY.pdf" in text or "LETTER.docx" in text):
        return tool_use_reply([("Skill", {"skill": "pdf-tools"})], id_prefix="sk_")
    return text_reply("Paris" if "capital of France" in text else "Done.")


def project(tmp_path: Path) -> Path:
    library = tmp_path / "skills"
    write_skill(library, "pdf-tools", "Extract text and tables from PDF files.", "Use pdftotext.")
    write_skill(library, "docx-tools", "Edit Word documents (.docx).", "Use python-docx.")
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump(SAMPLES), encoding="utf-8")
    return tmp_path


def test_one_skill_fires_one_stays_quiet_and_the_routing_matrix_shows_the_collision(tmp_path):
    claude = require_claude()
    root = project(tmp_path)
    (root / "omk.yaml").write_text("target: claude:sonnet\nskills: skills\n", encoding="utf-8")
    with ModelServer(model) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(root / "run"), "--format", "json,md"], cwd=root, env=env)
        listed = [r.body.decode("utf-8", "replace") for r in fake.requests]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # routed-wrong fails its check
    assert any("pdf-tools" in body and "docx-tools" in body for body in listed)  # both skills were offered to the model
    report = json.loads((root / "run" / "report.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in report["target"]["skills"]] == ["docx-tools", "pdf-tools"]
    results = {r["sample_id"]: r for r in report["results"]}
    assert all(r["status"] == "ok" for r in results.values()), proc.stdout
    fires = results["fires-pdf"]
    assert fires["passed"]
    assert fires["trace"]["tool_calls"][0]["tool"] == "Skill"
    assert not fires["trace"]["tool_calls"][0]["is_error"]  # the CLI found and loaded the installed skill
    assert results["quiet-near-miss"]["passed"]
    assert results["quiet-near-miss"]["trace"]["tool_calls"] == []
    wrong = results["routed-wrong"]["assertions"][0]
    assert wrong["passed"] is False
    assert wrong["message"] == "skill docx-tools invoked 0 time(s) < 1; fired instead: pdf-tools"
    trig = report["triggering"]
    assert trig["installed"] == ["docx-tools", "pdf-tools"]
    skills = {s["skill"]: s for s in trig["skills"]}
    assert skills["pdf-tools"]["recall"]["k"] == 1
    assert skills["pdf-tools"]["false_trigger_rate"]["n"] == 1
    assert skills["pdf-tools"]["false_trigger_rate"]["k"] == 0
    assert skills["docx-tools"]["missed"] == ["routed-wrong"]
    assert skills["docx-tools"]["false_trigger_rate"]["k"] == 0
    routing = {r["expected"]: r["fired"] for r in trig["routing"]}
    assert routing == {"pdf-tools": {"pdf-tools": 1}, "docx-tools": {"pdf-tools": 1}}
    assert "#### Routing: which skill fired" in (root / "run" / "summary.md").read_text(encoding="utf-8")


def test_a_with_without_experiment_compares_trigger_rates_and_the_baseline_fails_skill_used(tmp_path):
    claude = require_claude()
    root = project(tmp_path)
    (root / "omk.yaml").write_text(
        "target: claude:sonnet\n"
        "variants:\n"
        "  - {name: without, role: control, baseline: true}\n"
        "  - {name: with-skills, role: treatment, skills: [skills/pdf-tools, skills/docx-tools]}\n",
        encoding="utf-8",
    )
    with ModelServer(model) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(root / "exp"), "--seed", "3"], cwd=root, env=env)
        assert fake.requests
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    control = json.loads((root / "exp" / "variants" / "without" / "report.json").read_text(encoding="utf-8"))
    fires = next(r for r in control["results"] if r["sample_id"] == "fires-pdf")
    pdf, docx_not = fires["assertions"]
    assert pdf["passed"] is False
    assert pdf["message"] == "skill pdf-tools is not installed in this run (installed: none)"
    assert docx_not["passed"] is True  # `not: true` passes where the skill is not installed
    report = json.loads((root / "exp" / "report.json").read_text(encoding="utf-8"))
    changes = {(c["skill"], c["rate"]): c for c in report["experiment"]["triggering"]}
    recall = changes[("pdf-tools", "recall")]
    assert (recall["treatment"], recall["n"], recall["control_fired"], recall["treatment_fired"]) == ("with-skills", 1, 0, 1)
    assert recall["gained"] == 1
    assert recall["p_value"] == 1.0
    assert changes[("docx-tools", "recall")]["treatment_fired"] == 0


def made_up_model(request: Request) -> dict[str, Any]:
    """Calls a skill by a name the library does not have, then answers."""
    if _tool_uses(request) == 0 and "SCAN.pdf" in _user_text(request):
        return tool_use_reply([("Skill", {"skill": "pdf-wizard"})], id_prefix="sk_")
    return text_reply("Done.")


def test_a_skill_called_that_is_not_installed_is_counted_apart_in_the_routing_matrix(tmp_path):
    claude = require_claude()
    root = project(tmp_path)
    samples = {"samples": [{"sample_id": "made-up", "prompt": "Read SCAN.pdf aloud.", "assertions": [{"type": "skill_used", "value": "pdf-tools"}]}]}
    (root / "eval-samples.yaml").write_text(yaml.safe_dump(samples), encoding="utf-8")
    (root / "omk.yaml").write_text("target: claude:sonnet\nskills: skills\n", encoding="utf-8")
    with ModelServer(made_up_model) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(root / "run"), "--format", "json,md"], cwd=root, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # pdf-tools never fired
    report = json.loads((root / "run" / "report.json").read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["status"] == "ok"
    assert [c["input"] for c in result["trace"]["tool_calls"]] == [{"skill": "pdf-wizard"}]  # the recorded call
    (row,) = report["triggering"]["routing"]
    assert row == {"expected": "pdf-tools", "cases": 1, "fired": {"(not installed)": 1}, "not_installed": {"pdf-wizard": 1}}
    summary = (root / "run" / "summary.md").read_text(encoding="utf-8")
    assert "pdf-tools: called a skill that is not installed: pdf-wizard" in summary
    assert "| expected \\ fired | docx-tools | pdf-tools | (not installed) | (none) |" in summary
