"""`omk eval --target claude:…` as a real subprocess: the bundled Claude Code example against a
scripted loopback server, the cache, a conversation, a missing CLI and a CLI that hangs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from claude_support import alive, require_claude, wait_until
from cli_support import run_omk

from omk.testing import ModelServer, Request, load_script
from omk.testing.anthropic import text_reply

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-ant-e2e-5c1d9e7f3a2b4c6d8e0f"
SCRIPT = ROOT / "samples" / "claude" / "model-script.yaml"  # the model the docs' offline dry run plays


def omk_eval(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OMK_", "CLAUDE_"))}
    full.update(env)
    return run_omk(
        "eval", *args, "--quiet", "--no-judge",
        cwd=cwd, base=full, drop=(), columns=None, timeout=timeout,
    )  # fmt: skip


def test_the_bundled_claude_example_runs_end_to_end_and_caches(tmp_path):
    claude = require_claude()
    project = tmp_path / "claude"
    shutil.copytree(ROOT / "samples" / "claude", project)
    out = tmp_path / "run"
    with ModelServer(load_script(SCRIPT)) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=project, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls_first_run = len(fake.requests)
        again = omk_eval(["eval-samples.yaml", "--out", str(tmp_path / "again")], cwd=project, env=env)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(fake.requests) == calls_first_run  # every sample came from the cache
        assert "release-notes" in fake.requests[0].body.decode()  # the skill was listed to the model
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    target = report["target"]
    assert target["kind"] == "claude"
    assert target["model"] == "sonnet"
    assert target["cli"]["version"]
    assert target["skill"]["installed_as"] == ".claude/skills/release-notes/"
    assert target["isolation"]["isolated"] is True
    results = {r["sample_id"]: r for r in report["results"]}
    assert all(r["status"] == "ok" and r["passed"] for r in results.values()), proc.stdout
    en = results["rn-next-version-en"]["trace"]
    assert [c["tool"] for c in en["tool_calls"]] == ["Skill", "Bash", "Bash", "Bash", "Read"]
    grouped = en["tool_calls"][3]
    assert not grouped["mocked"]
    assert json.loads(grouped["output"])["feat"] == ["export reports as CSV (3f2a9c1)"]
    assert en["tool_calls"][4]["output"].startswith("# Changelog")  # return_file
    assert en["tokens"]["cache_read"] == 600
    assert en["session_id"]
    assert en["cost_usd"] > 0
    zh = results["rn-only-fixes-zh"]["trace"]
    assert zh["tool_calls"][3]["mocked"]
    assert zh["mock_stats"]["per_mock"]["Bash:3"] == 1
    cached = json.loads((tmp_path / "again" / "report.json").read_text(encoding="utf-8"))
    for result in cached["results"]:
        assert result["cached"]
        assert result["trace"] == results[result["sample_id"]]["trace"]
    assert KEY not in "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


def test_a_conversation_through_omk_eval_keeps_one_session(tmp_path):
    claude = require_claude()
    (tmp_path / "eval-samples.yaml").write_text(
        yaml.safe_dump(
            {
                "samples": [
                    {
                        "sample_id": "two-turns",
                        "turns": [
                            {"prompt": "Remember the word HELIOTROPE.", "assertions": [{"type": "contains", "value": "noted"}]},
                            {"prompt": "Which word?", "assertions": [{"type": "contains", "value": "HELIOTROPE"}]},
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )

    def model(request: Request) -> dict[str, Any]:
        body = request.body.decode()
        return text_reply("It was HELIOTROPE" if "Which word?" in body and "noted" in body else "noted")

    with ModelServer(model) as fake:
        env = {"OMK_CLAUDE": claude, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--target", "claude:", "--out", str(tmp_path / "run")], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    sessions = [t["trace"]["session_id"] for t in result["turns"]]
    assert sessions[0]
    assert sessions[0] == sessions[1]
    assert [t["output"] for t in result["turns"]] == ["noted", "It was HELIOTROPE"]
    assert "--model" not in json.dumps(result)  # `claude:` alone: the CLI's default model


def test_a_missing_cli_is_exit_2_naming_the_install_command(tmp_path):
    (tmp_path / "eval-samples.yaml").write_text("samples:\n  - { sample_id: a, prompt: hi }\n", encoding="utf-8")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = omk_eval(["eval-samples.yaml", "--target", "claude:sonnet"], cwd=tmp_path, env={"PATH": str(empty)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "npm install -g @anthropic-ai/claude-code" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / ".omk" / "runs").exists() or not any((tmp_path / ".omk" / "runs").iterdir())
    bad = omk_eval(["eval-samples.yaml", "--target", "claude:sonnet"], cwd=tmp_path,
                   env={"PATH": str(empty), "OMK_CLAUDE": str(tmp_path / "nope")})
    assert bad.returncode == 2
    assert "OMK_CLAUDE names" in bad.stderr


FAKE_CLAUDE = """#!{python}
import os, subprocess, sys, time
if "--version" in sys.argv:
    print("9.9.9 (Claude Code)")
    sys.exit(0)
child = subprocess.Popen(["sleep", "300"])
with open(os.environ["PIDS_FILE"], "w") as f:
    f.write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(300)
"""


def test_a_hung_cli_and_its_children_are_killed_at_the_timeout(tmp_path):
    fake = tmp_path / "claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    pids_file = tmp_path / "pids"
    (tmp_path / "eval-samples.yaml").write_text("samples:\n  - { sample_id: a, prompt: hi }\n", encoding="utf-8")
    (tmp_path / "omk.yaml").write_text(f"claude: {{path: {fake}, env: [PIDS_FILE]}}\n", encoding="utf-8")
    with ModelServer([]) as model:  # what the checks before the run look for: a key, an API that answers
        env = {"PIDS_FILE": str(pids_file), "OMK_RETRY_BASE_S": "0", "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": model.root}
        proc = omk_eval(["eval-samples.yaml", "--target", "claude:sonnet", "--timeout", "2", "--retries", "0",
                         "--out", str(tmp_path / "run")], cwd=tmp_path, env=env, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    assert result["status"] == "error"
    assert "timed out" in result["error"]
    cli, child = (int(p) for p in pids_file.read_text().split())
    assert wait_until(lambda: not alive(cli) and not alive(child), 5), (alive(cli), alive(child))
