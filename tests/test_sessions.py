"""Reading session files (omk.sessions) and turning them into samples (omk.authoring.from_session)
with hand-made fixtures for the record types that are hard to provoke from the real CLIs, and a
fuzz test of hostile files: broken JSON, huge lines, deep nesting, unknown types, missing ids."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omk.authoring.from_session import SessionChoice, samples_from_sessions
from omk.secrets import Masker
from omk.sessions import find_sessions, read_session
from omk.sessions.lines import MAX_LINE_BYTES

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"


def test_a_claude_code_session_is_read_by_its_records():
    session = read_session(FIXTURES / "claude-handmade.jsonl")
    assert (session.cli, session.session_id, session.project, session.subagent) == ("claude", "hand-claude-1", "/work/app", False)
    assert session.installed_skills == ("release-notes", "deploy", "unused-skill")  # `acme:deploy` is the plugin's deploy
    assert dict(session.skipped) == {"some-future-record": 1}
    assert any(w.endswith("claude-handmade.jsonl:12: not JSON (Expecting value), skipped") for w in session.warnings)
    assert any(":21: a tool result with no tool_use_id" in w for w in session.warnings)
    first, second = session.requests  # the command, its output and the task notification are no requests
    assert first.prompt == "Write the release notes for v1.5"
    assert first.answer == "## v1.5\n- fix: the bug"  # one message over two lines, joined on its id
    assert [c.name for c in first.tool_calls] == ["Skill", "Read", "Bash"]  # a block written twice is one call
    assert [(f.skill, f.how) for f in first.skills] == [("release-notes", "skill_call"), ("deploy", "skill_md_read")]
    assert first.tool_calls[1].output == "deploy instructions"
    assert "sk-ant-api03" not in first.tool_calls[2].output and "[redacted]" in first.tool_calls[2].output
    (push,) = second.tool_calls
    assert (second.prompt, push.is_error, push.denied) == ("Now push it", True, True)


def test_a_codex_session_is_read_by_its_records():
    session = read_session(FIXTURES / "codex-handmade.jsonl")
    assert (session.cli, session.session_id, session.project, session.started) == ("codex", "hand-codex-1", "/work/app", "2026-01-03T09:00:00.000Z")
    assert session.installed_skills == ("greeter", "unused")  # skill-creator is Codex's own (.system)
    assert dict(session.skipped) == {"brand_new_type": 1, "response_item.future_item": 1}
    assert any(":12: a tool call with no call_id" in w for w in session.warnings)
    assert any(":19: not JSON" in w for w in session.warnings)
    (request,) = session.requests  # the environment context and the injected skill are no requests
    assert request.prompt == "$greeter say hello to the team"
    assert [(f.skill, f.how) for f in request.skills] == [("greeter", "codex_injection")]
    assert [(c.name, c.is_error) for c in request.tool_calls] == [("exec_command", False), ("apply_patch", False), ("exec_command", True)]
    assert request.tool_calls[1].input.startswith("*** Begin Patch")
    assert request.answer == "Said hello to ann and bo in hello.txt."


def test_samples_from_hand_made_sessions_load_and_pass_the_doctor(tmp_path):
    sessions = [read_session(FIXTURES / "claude-handmade.jsonl"), read_session(FIXTURES / "codex-handmade.jsonl")]
    found = samples_from_sessions(sessions, Masker(), SessionChoice(installed=frozenset({"release-notes", "deploy", "greeter", "unused"})))
    assert found.count == 2
    out = tmp_path / "sessions.yaml"
    out.write_text(found.text, encoding="utf-8")
    claude, codex = yaml.safe_load(found.text)["samples"]
    assert [t["prompt"] for t in claude["turns"]] == ["Write the release notes for v1.5", "Now push it"]
    assert [m["tool"] for m in claude["mocks"]] == ["Read", "Bash", "Bash"]  # Skill runs in a replay: no mock
    assert {"type": "skill_used", "value": "greeter", "not": True} not in claude["turns"][0]["assertions"]  # not listed there
    assert {"type": "tool_sequence", "mode": "in_order", "steps": ["Bash", "apply_patch", "Bash"]} in codex["assertions"]
    assert "# recorded from Codex session hand-codex-1" in found.text and "project /work/app" in found.text
    done = subprocess.run([sys.executable, "-m", "omk", "doctor", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    assert " 0 errors" in done.stdout, done.stdout + done.stderr


def test_skill_and_limit_choose_the_samples():
    session = read_session(FIXTURES / "claude-handmade.jsonl")
    only = yaml.safe_load(samples_from_sessions([session], Masker(), SessionChoice(skill="deploy")).text)["samples"]
    assert [s["prompt"] for s in only] == ["Write the release notes for v1.5"]  # one request of two: a plain sample
    none = samples_from_sessions([session], Masker(), SessionChoice(skill="nothing-fired"))
    assert none.count == 0 and "samples: []" in none.text
    two = [session, read_session(FIXTURES / "codex-handmade.jsonl")]
    assert samples_from_sessions(two, Masker(), SessionChoice(limit=1)).count == 1


def test_the_home_folder_becomes_a_placeholder(tmp_path, monkeypatch):
    home = tmp_path / "someone"
    monkeypatch.setenv("HOME", str(home))
    line = {"type": "user", "cwd": f"{home}/app", "message": {"role": "user", "content": f"read {home}/app/notes.md"}}
    (tmp_path / "s.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    session = read_session(tmp_path / "s.jsonl")
    assert (session.project, session.requests[0].prompt) == ("~/app", "read ~/app/notes.md")


def test_find_sessions_finds_a_projects_sessions_of_both_clis(tmp_path):
    project = tmp_path / "my app"
    project.mkdir()
    claude = tmp_path / "cfg" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))  # as Claude Code names it
    (claude / "s1" / "subagents").mkdir(parents=True)
    (claude / "s1.jsonl").write_text("{}\n")
    (claude / "s1" / "subagents" / "agent-a.jsonl").write_text("{}\n")
    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "03"
    day.mkdir(parents=True)
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "cwd": str(project / "sub")}}
    (day / "rollout-a.jsonl").write_text(json.dumps(meta) + "\n")
    (day / "rollout-b.jsonl").write_text(json.dumps({**meta, "payload": {"cwd": str(tmp_path / "other")}}) + "\n")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "codex"), "HOME": str(tmp_path / "nohome")}
    found = find_sessions([], project=project, since=None, env=env)
    assert [f.name for f in found] == ["s1.jsonl", "agent-a.jsonl", "rollout-a.jsonl"]
    later = datetime.now() + timedelta(days=1)
    assert find_sessions([], project=project, since=later, env=env) == []
    assert find_sessions([day], project=None, since=None, env={}) == [day / "rollout-a.jsonl", day / "rollout-b.jsonl"]


def test_a_link_out_of_its_folder_and_a_huge_line_are_refused_with_a_warning(tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "private"}}) + "\n")
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s.jsonl").symlink_to(secret)
    linked = read_session(tmp_path / "sessions" / "s.jsonl")
    assert linked.requests == () and "links outside" in linked.warnings[0]
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"' + b"x" * (MAX_LINE_BYTES + 10) + b'"}}\n')
        f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "after"}}).encode() + b"\n")
    session = read_session(huge)
    assert [r.prompt for r in session.requests] == ["after"] and "huge.jsonl:1: line longer than" in session.warnings[0]


def _hostile_line() -> st.SearchStrategy[str]:
    scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                         max_leaves=12)
    known = st.sampled_from(["user", "assistant", "attachment", "session_meta", "response_item", "event_msg", "turn_context", "???"])
    record = st.fixed_dictionaries({"type": known}, optional={"message": value, "payload": value, "attachment": value,
                                                              "sessionId": value, "cwd": value, "isMeta": value})
    blocks = st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result"])},
                                            optional={"id": value, "name": value, "input": value, "tool_use_id": value,
                                                      "content": value, "text": value}), max_size=3)
    claude = st.builds(lambda kind, content, mid: {"type": kind, "message": {"id": mid, "role": kind, "content": content}},
                       st.sampled_from(["user", "assistant"]), blocks, st.one_of(st.none(), st.text(max_size=3)))
    codex_item = st.fixed_dictionaries({"type": st.sampled_from(["message", "function_call", "function_call_output", "custom_tool_call",
                                                                  "custom_tool_call_output"])},
                                       optional={"call_id": value, "name": value, "arguments": value, "input": value, "output": value,
                                                 "role": st.sampled_from(["user", "assistant"]), "content": value})
    codex = st.builds(lambda item: {"timestamp": "t", "type": "response_item", "payload": item}, codex_item)
    deep = st.integers(150, 3000).map(lambda n: '{"type":"user","message":' + "[" * n + "]" * n + "}")
    broken = st.text(max_size=40)
    return st.one_of(record.map(json.dumps), claude.map(json.dumps), codex.map(json.dumps), deep, broken)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_hostile_line(), max_size=12))
def test_hostile_session_files_never_raise(tmp_path, lines):
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    session = read_session(path)
    found = samples_from_sessions([session], Masker())
    assert yaml.safe_load(found.text)["samples"] is not None or found.count == 0
