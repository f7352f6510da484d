"""`omk sample --from-session` on sessions the real CLIs write: Claude Code and Codex run against
the scripted loopback model with their own HOME in the test folder (a skill call, a plain tool
call, a failed tool, a multi-turn session, a Claude Code subagent, a Codex apply_patch), the
session files they leave become samples, `omk doctor` finds no error in them, and `omk eval`
replays them against the same scripted model: every sample passes. Recorded fresh on every run,
so a field the CLIs rename is caught here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from claude_support import require_claude, write_skill
from codex_support import require_codex
from session_support import CLAUDE_KEY, OPENAI_KEY, omk, record_claude, record_codex, script

from omk.sessions import read_session
from omk.testing import ModelServer

CLAUDE_SCRIPT = """
rules:
  - when: "greet"
    tools:
      - Skill: {skill: greeter}
    answer: "HELLO-FROM-SKILL, nice to meet you."
  - when: "subtask"
    tools:
      - Bash: {command: "echo from the helper", description: "helper"}
    answer: "The helper saw its output."
  - when: "list"
    tools:
      - Bash: {command: "echo one two", description: "list"}
    answer: "The files are one and two."
  - when: "fail"
    tools:
      - Bash: {command: "exit 3", description: "fail"}
    answer: "The command failed with code 3."
  - when: "delegate"
    tools:
      - Task: {description: "look around", prompt: "subtask: look around", subagent_type: "general-purpose"}
    answer: "The helper looked around."
  - when: "write"
    tools:
      - Write: {file_path: "/nonexistent-omk-session-test/denied.txt", content: "x"}
    answer: "I was not allowed to write the file."
  - answer: "ok"
"""

CODEX_SCRIPT = r"""
rules:
  - when: "greet"
    tools:
      - exec_command: {cmd: 'cat "$CODEX_HOME/skills/greeter/SKILL.md"'}
    answer: "HELLO-FROM-SKILL, nice to meet you."
  - when: "list"
    tools:
      - exec_command: {cmd: "echo one two"}
    answer: "The files are one and two."
  - when: "fail"
    tools:
      - exec_command: {cmd: "exit 3"}
    answer: "The command failed with code 3."
  - when: "patch"
    tools:
      - apply_patch: "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"
    answer: "Wrote notes.txt."
  - answer: "ok"
"""


def _skills(folder: Path) -> None:
    write_skill(folder, "greeter", "Greets people. Use when asked to greet.", "Say HELLO-FROM-SKILL first.")
    write_skill(folder, "unused", "Files tax returns. Use for taxes.", "Never used here.")


def _replay(project: Path, samples: Path, target: str, model_text: str, env: dict[str, str]) -> dict:
    (project / "omk.yaml").write_text(f"target: {target}\nskills: skills\nmax_turns: 8\ntimeout: 120\n", encoding="utf-8")
    with ModelServer(script(model_text)) as fake:
        urls = {"ANTHROPIC_BASE_URL": fake.url, "OPENAI_BASE_URL": fake.openai_url}
        done = omk(["eval", str(samples), "--out", "replay", "--no-judge", "--no-cache"], project, {**env, **urls})
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((project / "replay" / "report.json").read_text(encoding="utf-8"))


def _doctor_clean(samples: Path, cwd: Path, env: dict[str, str]) -> None:
    done = omk(["doctor", str(samples)], cwd, env)
    assert " 0 errors" in done.stdout, done.stdout + done.stderr


def test_claude_code_sessions_become_samples_that_replay_to_a_full_pass(tmp_path):
    claude = require_claude()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    _skills(work / ".claude" / "skills")
    record_claude(claude, script(CLAUDE_SCRIPT), home, work, ["greet me", "+list the files", "+fail now", "+write it", "delegate it"])
    folder = home / ".claude" / "projects"
    assert list(folder.rglob("subagents/*.jsonl")), "Claude Code wrote no subagent file"
    read = {s.requests[0].prompt: s for s in map(read_session, folder.rglob("*.jsonl"))}
    failed, denied = (r.tool_calls[0] for r in read["greet me"].requests[2:])
    assert (failed.is_error, failed.denied, denied.is_error, denied.denied) == (True, False, True, True)
    assert read["subtask: look around"].subagent
    assert not read["delegate it"].subagent

    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    made = omk(["sample", "--from-session", "--project", str(work), "--output", "sessions.yaml"], tmp_path, env)
    assert made.returncode == 0, made.stderr
    assert "2 samples recorded from 3 session files" in made.stdout
    text = (tmp_path / "sessions.yaml").read_text(encoding="utf-8")
    assert "# recorded from Claude Code session" in text
    assert CLAUDE_KEY not in text
    samples = yaml.safe_load(text)["samples"]
    conversation = next(s for s in samples if "turns" in s)
    assert [t["prompt"] for t in conversation["turns"]] == ["greet me", "list the files", "fail now", "write it"]
    first = conversation["turns"][0]["assertions"]
    assert {"type": "skill_used", "value": "greeter"} in first
    assert {"type": "skill_used", "value": "unused", "not": True} in first
    assert not any(a.get("value") == "dataviz" for t in conversation["turns"] for a in t["assertions"])  # the CLI's own skills
    assert {"tool": "Bash", "match": {"input": {"command": "exit 3", "description": "fail"}}, "return": "Exit code 3"} in conversation["mocks"]
    helper = next(s for s in samples if s.get("prompt") == "delegate it")
    assert [m["match"]["input"]["command"] for m in helper["mocks"]] == ["echo from the helper"]  # the subagent's call
    _doctor_clean(tmp_path / "sessions.yaml", tmp_path, env)

    replay = tmp_path / "replay-project"
    shutil.copytree(work / ".claude" / "skills", replay / "skills")
    report = _replay(replay, tmp_path / "sessions.yaml", "claude:sonnet", CLAUDE_SCRIPT,
                     {"OMK_CLAUDE": claude, "ANTHROPIC_API_KEY": CLAUDE_KEY, "HOME": str(tmp_path / "replay-home")})
    assert [r["passed"] for r in report["results"]] == [True, True], [r.get("failures") for r in report["results"]]


def test_codex_sessions_become_samples_that_replay_to_a_full_pass(tmp_path):
    codex = require_codex()
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    _skills(home / ".codex" / "skills")
    record_codex(codex, script(CODEX_SCRIPT), home, work, ["$greeter greet me", "+list the files", "+fail now", "+patch it"])
    (session,) = map(read_session, (home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    assert [(f.skill, f.how) for f in session.requests[0].skills] == [("greeter", "codex_injection")]
    assert [c.is_error for r in session.requests for c in r.tool_calls] == [False, False, True, False]
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    made = omk(["sample", "--from-session", "--project", str(work), "--output", "sessions.yaml"], tmp_path, env)
    assert made.returncode == 0, made.stderr
    text = (tmp_path / "sessions.yaml").read_text(encoding="utf-8")
    assert "# recorded from Codex session" in text
    assert OPENAI_KEY not in text
    (sample,) = yaml.safe_load(text)["samples"]
    assert [t["prompt"] for t in sample["turns"]] == ["$greeter greet me", "list the files", "fail now", "patch it"]
    assert {"type": "skill_used", "value": "greeter"} in sample["turns"][0]["assertions"]
    assert {"type": "skill_used", "value": "unused", "not": True} in sample["turns"][0]["assertions"]
    assert not any(a.get("value") == "skill-creator" for t in sample["turns"] for a in t["assertions"])  # Codex's own skills
    assert any(m["tool"] == "apply_patch" and "Add File: notes.txt" in m["match"]["input"]["command"] for m in sample["mocks"])
    _doctor_clean(tmp_path / "sessions.yaml", tmp_path, env)

    replay = tmp_path / "replay-project"
    shutil.copytree(home / ".codex" / "skills", replay / "skills", ignore=shutil.ignore_patterns(".system"))
    report = _replay(replay, tmp_path / "sessions.yaml", "codex:gpt-5.5", CODEX_SCRIPT,
                     {"OMK_CODEX": codex, "OPENAI_API_KEY": OPENAI_KEY, "HOME": str(tmp_path / "replay-home")})
    assert [r["passed"] for r in report["results"]] == [True], [r.get("failures") for r in report["results"]]
