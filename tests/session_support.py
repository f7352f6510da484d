"""Shared by the session tests: the real Claude Code and Codex CLIs run against omk's scripted
model with their own HOME (and CLAUDE_CONFIG_DIR / CODEX_HOME) in a test folder, so the session
files they write land there; then `omk eval` replays the samples made from them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_support import run_omk

from omk.loader.yaml_lines import parse_yaml
from omk.testing import ModelServer
from omk.testing.script import ModelScript, read_script

CLAUDE_KEY = "sk-ant-session-5c1d9e7f3a2b4c6d8e0f"
OPENAI_KEY = "sk-session-7a1b3c5d9e2f4a6b8c0d1e"
PASSED = ("PATH", "LANG", "LC_ALL", "TMPDIR")


def script(text: str) -> ModelScript:
    return read_script(parse_yaml(text), "test script")


def _env(home: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in PASSED}
    return {**env, "HOME": str(home), **more}


def record_claude(claude: str, model: ModelScript, home: Path, project: Path, prompts: list[str]) -> None:
    """Run Claude Code once per prompt in `project`; a prompt starting with `+` continues the
    session before it (`--continue`)."""
    env = _env(home, CLAUDE_CONFIG_DIR=str(home / ".claude"), ANTHROPIC_API_KEY=CLAUDE_KEY)
    with ModelServer(model) as fake:
        env["ANTHROPIC_BASE_URL"] = fake.url
        for prompt in prompts:
            argv = [claude, "-p", "--output-format", "stream-json", "--verbose", "--max-turns", "6",
                    "--allowedTools", "Bash,Skill,Task,Agent,Read"]
            if prompt.startswith("+"):
                argv.append("--continue")
            done = subprocess.run(argv, input=prompt.lstrip("+"), cwd=project, env=env, capture_output=True, text=True, timeout=180)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def record_codex(codex: str, model: ModelScript, home: Path, project: Path, prompts: list[str]) -> None:
    """Run `codex exec` once per prompt in `project`; a prompt starting with `+` resumes the
    session before it."""
    env = _env(home, CODEX_HOME=str(home / ".codex"), OPENAI_API_KEY=OPENAI_KEY)
    thread = None
    with ModelServer(model) as fake:
        provider = (f'{{name="omk", base_url="{fake.openai_url}", env_key="OPENAI_API_KEY", wire_api="responses", '
                    'supports_websockets=false}')
        for prompt in prompts:
            argv = [codex, "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "--cd", str(project),
                    "-c", "model_provider=omk", "-c", f"model_providers.omk={provider}", "-c", "model=gpt-5.5",
                    "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false"]
            if prompt.startswith("+") and thread:
                argv += ["resume", thread]
            done = subprocess.run([*argv, "-"], input=prompt.lstrip("+"), cwd=project, env=env, capture_output=True, text=True, timeout=180)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            for line in done.stdout.splitlines():
                event = json.loads(line) if line.startswith("{") else {}
                thread = event.get("thread_id", thread) if event.get("type") == "thread.started" else thread


def omk(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OMK_", "CLAUDE_", "OPENAI_", "CODEX_"))}
    full.update({"NO_COLOR": "1", "COLUMNS": "200", **env})
    return run_omk(*args, cwd=cwd, base=full, drop=(), columns=None, timeout=timeout)
