"""Every command of the README's quick start and "Your first hour" runs as written, in order, in a
fresh copy of the repository.

Substitutions, each because a test cannot do the real thing, and nothing else:
* `python3 -m venv .venv && .venv/bin/pip install -e . && …`: the copy's `.venv` is a link to the
  virtual environment running these tests (omk installed from this tree), so the pip step is
  skipped (it would download from the registry and take minutes) and the rest of the line runs;
* `python3 -m webbrowser FILE`: no browser here; the test checks the file is the HTML report;
* the judge command runs as written against a loopback OpenAI-compatible server
  (`OPENAI_BASE_URL`), which scores the rubric, instead of api.openai.com;
* the quick start's test-suite command (`… -m pytest`) is not run from inside the test suite: it
  is what CI runs (`bash .ci/run`).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from fresh_copy import ACTIVATE
from fresh_copy import copy_repo as _copy
from judge_support import score_json

from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("## Quick start", "## Your first hour")
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -e . && "
BROWSER = "python3 -m webbrowser "


def readme_commands() -> list[str]:
    """The shell lines of the sections' ```sh blocks, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands: list[str] = []
    for heading in SECTIONS:
        start = text.index(heading)
        end = text.find("\n## ", start + len(heading))
        body = text[start : end if end != -1 else len(text)]
        for block in re.findall(r"```sh\n(.*?)```", body, flags=re.S):
            commands += [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [c for c in commands if not c.endswith(("-m pytest", "-m pytest -n auto"))]


def _run(command: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_the_readme_lists_the_first_hour_in_order():
    commands = readme_commands()
    assert commands[0].startswith(INSTALL)
    assert any(c.startswith(BROWSER) for c in commands)
    assert any("omk init" in c for c in commands)
    assert any("--judge" in c for c in commands)
    assert len(commands) >= 6


def test_every_first_hour_command_runs(tmp_path):
    repo = _copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "OPENAI_", "ANTHROPIC_"))}
    env.update(NO_COLOR="1", COLUMNS="100")
    ran = []
    with ModelServer.for_openai([text_reply(score_json(5, "greets Ada by name"))] * 4) as fake:
        for command in readme_commands():
            if command.startswith(BROWSER):
                page = repo / command[len(BROWSER) :]
                assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html"), command
                ran.append(command)
                continue
            line = command[len(INSTALL) :] if command.startswith(INSTALL) else command
            proc = _run(line, repo, {**env, "OPENAI_BASE_URL": fake.url} if "--judge" in line else env)
            assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
            assert "Traceback" not in proc.stderr
            if "--judge" in line:
                assert len(fake.requests) >= 1 and "judge —" not in proc.stdout, proc.stdout
            ran.append(command)
    assert ran == readme_commands()
    assert (repo / "my-evals" / "eval-samples.yaml").exists()
    assert (repo / ".omk" / "runs" / "first" / "report.json").exists()


def skills_page_block() -> str:
    """docs/skills.md's offline walkthrough block, as written."""
    text = (ROOT / "docs" / "skills.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S) if "omk serve-model" in b)
    return block


def test_the_skills_page_runs_as_written_after_the_readme_install(tmp_path):
    """docs/skills.md writes a bare `omk`: the README says how that command exists after its
    install (the activation line), and the page's block then runs as written, as one shell
    script, in a fresh copy: no `omk: command not found`, and each command prints what the
    page quotes. The one substitution: OMK_CLAUDE names the pinned Claude Code CLI."""
    from claude_support import require_claude

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start") : readme.index("## Your first hour")]
    assert f"```sh\n{ACTIVATE}\n```" in quick  # the README's one convention for the docs' bare `omk`
    claude = require_claude()
    repo = _copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "OPENAI_", "ANTHROPIC_", "CLAUDE_", "VIRTUAL_ENV"))}
    env.update(NO_COLOR="1", COLUMNS="100", OMK_CLAUDE=claude, HOME=str(tmp_path))
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not Path(p, "omk").exists())
    script = f"{ACTIVATE}\n{skills_page_block()}"
    proc = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert "command not found" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "health 100/100" in proc.stdout, proc.stdout + proc.stderr
    out = " ".join(re.sub(r"[│┃┏┓┗┛┡┩└┘┌┐━─╇╈┳┻╭╮╯╰]", " ", proc.stdout).split())
    assert "5 samples · 4 passed · 1 failed · 0 errored" in out, proc.stdout + proc.stderr  # the page's first run
    assert "samples scored on both arms" in out, proc.stdout + proc.stderr  # and its experiment
