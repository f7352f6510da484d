"""Reading session files (omk.sessions) and turning them into samples (omk.authoring.from_session):
small committed recordings of the pinned CLIs (tests/fixtures/sessions/recorded/; the e2e tests
record fresh ones on every run), hand-made fixtures for the record types that are hard to provoke
from the real CLIs, and a fuzz test of hostile files: broken JSON, huge lines, deep nesting,
unknown types, missing ids."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import yaml
from cli_support import run_omk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omk.authoring.from_session import (
    SessionChoice,
    SessionQuery,
    samples_from_session_files,
    samples_from_sessions,
)
from omk.core.secrets import Masker
from omk.domain.mock_defs import RECORDED, drift_notes
from omk.loader import load_text
from omk.records import ToolCall
from omk.sessions import find_sessions, read_session
from omk.sessions.finding import since_time
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
    assert "sk-ant-api03" not in first.tool_calls[2].output
    assert "[redacted]" in first.tool_calls[2].output
    (push,) = second.tool_calls
    assert (second.prompt, push.is_error, push.denied) == ("Now push it", True, True)


def test_a_codex_session_is_read_by_its_records():
    session = read_session(FIXTURES / "codex-handmade.jsonl")
    assert (session.cli, session.session_id, session.project, session.started) == ("codex", "hand-codex-1", "/work/app", "2026-01-03T09:00:00.000Z")
    assert session.installed_skills == ("greeter", "unused")  # skill-creator is Codex's own (.system)
    assert dict(session.skipped) == {"brand_new_type": 1, "response_item.future_item": 1}
    assert any(":12: a tool call with no call_id" in w for w in session.warnings)
    assert any(":19: not JSON" in w for w in session.warnings)
    request, old_way = session.requests  # the environment context and the injected skill are no requests
    assert request.prompt == "$greeter say hello to the team"
    assert [(f.skill, f.how) for f in request.skills] == [("greeter", "codex_injection")]
    assert [(c.name, c.is_error) for c in request.tool_calls] == [("exec_command", False), ("apply_patch", False), ("exec_command", True)]
    assert request.tool_calls[1].input.startswith("*** Begin Patch")
    assert request.answer == "Said hello to ann and bo in hello.txt."
    (shell,) = old_way.tool_calls  # an older Codex's local shell call and its {content, success} output
    assert (shell.name, shell.input["command"], shell.output, shell.is_error) == ("shell", ["ls", "-la"], "permission denied", True)


RECORDED_FILES = FIXTURES / "recorded"  # written by the pinned CLIs against the scripted model, trimmed of bulky records


def test_committed_claude_code_recordings_are_read():
    multi = read_session(RECORDED_FILES / "claude-multi-turn.jsonl")
    assert multi.project == "/work/app"
    assert {"greeter", "unused"} <= set(multi.installed_skills)
    assert not multi.skipped
    assert [(r.prompt, [c.name for c in r.tool_calls], r.answer) for r in multi.requests] == [
        ("greet me", ["Skill"], "HELLO-FROM-SKILL, nice to meet you."),
        ("list the files", ["Bash"], "The files are one and two."),
        ("fail now", ["Bash"], "The command failed with code 3."),
    ]
    assert [(f.skill, f.how) for f in multi.requests[0].skills] == [("greeter", "skill_call")]
    assert [(c.output, c.is_error) for r in multi.requests for c in r.tool_calls] == [
        ("Launching skill: greeter", False), ("one two", False), ("Exit code 3", True)]
    (denied,) = read_session(RECORDED_FILES / "claude-denied.jsonl").requests[0].tool_calls
    assert (denied.name, denied.is_error, denied.denied) == ("Write", True, True)
    parent = read_session(RECORDED_FILES / "claude-subagent.jsonl")
    helper = read_session(RECORDED_FILES / "claude-subagent" / "subagents" / "agent-adbd09870deaac9d2.jsonl")
    assert [r.prompt for r in parent.requests] == ["delegate it"]  # the task notification is no request
    assert (helper.subagent, helper.session_id, helper.requests[0].prompt) == (True, parent.session_id, "subtask: list the folder")
    (sample,) = yaml.safe_load(samples_from_sessions([parent, helper], Masker()).text)["samples"]
    assert sample["mocks"] == [{"tool": "Bash", "match": {"input": {"command": "echo one two", "description": "list"}}, "return": "one two"}]


def test_committed_codex_recordings_are_read():
    multi = read_session(RECORDED_FILES / "codex-multi-turn.jsonl")
    assert (multi.cli, multi.project, multi.installed_skills, multi.skipped) == ("codex", "/work/app", ("greeter",), ())
    assert [r.prompt for r in multi.requests] == ["greet me", "list the files", "fail now", "patch it"]
    assert [(f.skill, f.how) for f in multi.requests[0].skills] == [("greeter", "skill_md_read")]
    assert [(c.name, c.is_error) for r in multi.requests for c in r.tool_calls] == [
        ("exec_command", False), ("exec_command", False), ("exec_command", True), ("apply_patch", False)]
    assert multi.requests[3].tool_calls[0].input.startswith("*** Begin Patch")
    injected = read_session(RECORDED_FILES / "codex-skill-injection.jsonl")
    assert [(r.prompt, [(f.skill, f.how) for f in r.skills]) for r in injected.requests] == [
        ("$greeter greet me", [("greeter", "codex_injection")])]


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
    assert {"type": "tool_sequence", "mode": "in_order", "steps": ["Bash", "apply_patch", "Bash"]} in codex["turns"][0]["assertions"]
    assert {"tool": "Bash", "match": {"input": {"command": "ls -la"}}, "return": "permission denied"} in codex["mocks"]
    assert "# recorded from Codex session hand-codex-1" in found.text
    assert "project /work/app" in found.text
    done = run_omk("doctor", str(out), cwd=tmp_path, drop=(), columns=None, timeout=120)
    assert " 0 errors" in done.stdout, done.stdout + done.stderr


def test_skill_and_limit_choose_the_samples():
    session = read_session(FIXTURES / "claude-handmade.jsonl")
    only = yaml.safe_load(samples_from_sessions([session], Masker(), SessionChoice(skill="deploy")).text)["samples"]
    assert [s["prompt"] for s in only] == ["Write the release notes for v1.5"]  # one request of two: a plain sample
    none = samples_from_sessions([session], Masker(), SessionChoice(skill="nothing-fired"))
    assert none.count == 0
    assert "samples: []" in none.text
    two = [session, read_session(FIXTURES / "codex-handmade.jsonl")]
    assert samples_from_sessions(two, Masker(), SessionChoice(limit=1)).count == 1


def test_since_keeps_the_requests_made_from_then_on():
    """`--since` means a request's time for `omk sample --from-session` as for `omk observe`: of
    the two requests (10:00:01 and 10:01:00 UTC), a time between them keeps the second alone."""
    session = read_session(FIXTURES / "claude-handmade.jsonl")
    between = since_time("2026-01-02T10:00:30Z")
    later = yaml.safe_load(samples_from_sessions([session], Masker(), SessionChoice(since=between)).text)["samples"]
    assert [s["prompt"] for s in later] == ["Now push it"]
    both = yaml.safe_load(samples_from_sessions([session], Masker(), SessionChoice(since=since_time("2026-01-02"))).text)
    assert len(both["samples"][0]["turns"]) == 2
    assert samples_from_sessions([session], Masker(), SessionChoice(since=since_time("2026-01-03"))).count == 0


def test_the_home_folder_becomes_a_placeholder(tmp_path, monkeypatch):
    home = tmp_path / "someone"
    monkeypatch.setenv("HOME", str(home))
    said = f"read {home}/app/notes.md, not {home}2/x<system-reminder>a hook's note</system-reminder>"
    line = {"type": "user", "cwd": f"{home}/app", "message": {"role": "user", "content": said}}
    (tmp_path / "s.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    session = read_session(tmp_path / "s.jsonl")
    assert (session.project, session.requests[0].prompt) == ("~/app", f"read ~/app/notes.md, not {home}2/x")
    assert f"({tmp_path}/s.jsonl)" in samples_from_sessions([session], Masker()).text  # the file is not under that home


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
    assert linked.requests == ()
    assert "links outside" in linked.warnings[0]
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"' + b"x" * (MAX_LINE_BYTES + 10) + b'"}}\n')
        f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "after"}}).encode() + b"\n")
    session = read_session(huge)
    assert [r.prompt for r in session.requests] == ["after"]
    assert "huge.jsonl:1: line longer than" in session.warnings[0]


def _hostile_lines() -> st.SearchStrategy[list[str]]:
    """The lines of a session file: well-formed records of one CLI with hostile values in them
    (names no tool may have, ids that join nothing, texts of any kind), a record of a type no one
    knows, a line nested thousands deep, or text that is no JSON at all."""
    scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                         max_leaves=12)
    ids = st.one_of(st.sampled_from(["t1", "t2", "t1", "t2", ""]), st.sampled_from(["t1", "t2"]), value)
    names = st.one_of(st.sampled_from(["Bash", "Read", "Skill", "Task", "mcp__srv__tool", "foo bar", "", "*", "a/b"]),
                      st.sampled_from(["Bash", "Read", "Skill", "Task"]), value)
    texts = st.one_of(st.sampled_from(["hi", "  ", "<system-reminder>x</system-reminder>", "cat skills/x y/SKILL.md", "\udfff\x1b\x85",
                                       "<skill>\n<name>a/b</name>", "<skill>\n<name>greeter</name>"]), value)
    inputs = st.one_of(st.fixed_dictionaries({"skill": texts}), st.fixed_dictionaries({"file_path": texts}), value)

    def claude(kind: str, content: object, mid: object = "m") -> dict:
        return {"type": kind, "message": {"id": mid, "role": kind, "content": content}, "sessionId": "s", "cwd": "/w"}

    claude_lines = st.one_of(
        st.builds(lambda c: claude("user", c), texts),
        st.builds(lambda i, n, x, m: claude("assistant", [{"type": "tool_use", "id": i, "name": n, "input": x}], m), ids, names, inputs, ids),
        st.builds(lambda i, c, e: claude("user", [{"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e}]), ids, texts, value),
        st.builds(lambda c, m: claude("assistant", [{"type": "text", "text": c}], m), texts, ids),
        st.builds(lambda c: {"type": "attachment", "attachment": {"type": "skill_listing", "content": c}}, texts),
    )

    def codex(item: dict) -> dict:
        return {"timestamp": "t", "type": "response_item", "payload": item}

    codex_lines = st.one_of(
        st.builds(lambda c: {"timestamp": "t", "type": "session_meta", "payload": {"id": c, "cwd": c}}, value),
        st.builds(lambda r, c: codex({"type": "message", "role": r, "content": [{"type": "input_text", "text": c}]}),
                  st.sampled_from(["user", "assistant", "developer"]), texts),
        st.builds(lambda i, n, a: codex({"type": "function_call", "call_id": i, "name": n, "arguments": json.dumps(a)}), ids, names, inputs),
        st.builds(lambda i, n, x: codex({"type": "custom_tool_call", "call_id": i, "name": n, "input": x}), ids, names, texts),
        st.builds(lambda i, o: codex({"type": "function_call_output", "call_id": i, "output": o}), ids, texts),
    )
    unknown = st.builds(lambda k, v: {"type": k, "payload": v, "message": v}, st.text(max_size=10), value)
    deep = st.integers(150, 3000).map(lambda n: '{"type":"user","message":' + "[" * n + "]" * n + "}")
    broken = st.text(max_size=40)
    noise = st.one_of(unknown.map(json.dumps), deep, broken)
    claude_prompt = st.builds(lambda c: claude("user", c), st.sampled_from(["fix it", "and now?"])).map(json.dumps)
    codex_prompt = st.builds(lambda c: codex({"type": "message", "role": "user", "content": [{"type": "input_text", "text": c}]}),
                             st.sampled_from(["fix it", "and now?"])).map(json.dumps)
    files = []
    for prompt, body in ((claude_prompt, claude_lines), (codex_prompt, codex_lines)):
        line = st.one_of(body.map(json.dumps), body.map(json.dumps), noise)  # records, most of them
        files.append(st.builds(lambda first, rest: [*first, *rest], st.lists(prompt, max_size=1), st.lists(st.one_of(prompt, line), max_size=14)))
    return st.one_of(*files)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=_hostile_lines())
def test_hostile_session_files_never_raise(tmp_path, lines):
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    session = read_session(path)
    found = samples_from_sessions([session], Masker())
    found.text.encode("utf-8")  # writable as the file it is
    if found.count:
        loaded = load_text(found.text, name="sessions.yaml", base_dir=tmp_path)  # raises on any problem the loader finds
        assert len(loaded.samples) == found.count


def test_a_call_of_the_cli_s_own_bookkeeping_tools_is_no_drift():
    mocks = [{"tool": "Bash", "match": {"input": {"command": "ls"}}, "return": "a"}]
    calls = [ToolCall("Skill", {"skill": "greeter"}, "Launching skill: greeter"), ToolCall("Task", {"prompt": "look"}, "done"),
             ToolCall("Bash", {"command": "ls"}, "a", mocked=True, mock_key="Bash:1")]
    assert drift_notes(RECORDED, mocks, calls) == []
    assert drift_notes(RECORDED, mocks, [*calls, ToolCall("Grep", {"pattern": "x"}, "")]) == [
        "mock drift: the agent now calls Grep, which the recording never did"]


def _omk(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=(), columns=200, timeout=120)


def test_the_cli_writes_the_samples_and_says_what_it_left_out(tmp_path):
    (tmp_path / "sessions").mkdir()
    for name in ("claude-handmade.jsonl", "codex-handmade.jsonl"):
        (tmp_path / "sessions" / name).write_bytes((FIXTURES / name).read_bytes())
    (tmp_path / "sessions" / "empty.jsonl").write_text("{}\n")
    done = _omk("sample", "--from-session", "sessions", "--output", "out.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "out.yaml: 2 samples recorded from 3 session files; review them before trusting them" in done.stdout
    assert "claude-handmade.jsonl:12: not JSON" in done.stderr
    assert "skipped 1 some-future-record" in done.stderr
    assert "left out sessions/empty.jsonl: no request in it" in done.stderr
    assert "Traceback" not in done.stderr
    (tmp_path / "work" / "app").mkdir(parents=True)
    codex = _omk("sample", "--from-session", "sessions", "--project", "work/app", cwd=tmp_path)
    assert codex.returncode == 0
    assert codex.stdout.count("sample_id:") == 0  # the sessions say /work/app, not this folder
    only = _omk("sample", "--from-session", "sessions", "--skill", "greeter", "--lang", "zh", cwd=tmp_path)
    assert only.returncode == 0
    assert yaml.safe_load(only.stdout)["samples"][0]["prompt"] == "$greeter say hello to the team"
    assert "未录制：sessions/claude-handmade.jsonl" not in only.stderr  # a session where the skill never fired is just not chosen


def test_bad_arguments_are_one_line_each(tmp_path):
    cases = [
        (["--from-session", "nowhere"], "omk sample --from-session: nowhere: no such file or folder"),
        (["--from-session", "--since", "last week"], "omk sample --since: expected a date (YYYY-MM-DD) or an ISO 8601 time, got 'last week'"),
        (["--from-session", "--project", "nowhere"], "omk sample --project: nowhere is not a folder"),
        (["--from-run", "run1", "--from-session"], "give one of SKILL_DIR"),
        (["--from-run", "run1", "--skill", "x"], "omk sample --from-run: --skill goes with --from-session"),
        (["--from-session", "--target", "openai:x"], "omk sample --from-session: --target goes with SKILL_DIR"),
    ]
    for args, said in cases:
        done = _omk("sample", *args, cwd=tmp_path)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    (tmp_path / "out.yaml").write_text("x")
    done = _omk("sample", "--from-session", "--output", "out.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "out.yaml: already exists" in done.stderr


def test_a_project_narrows_the_sessions_named_to_its_own(tmp_path):
    (tmp_path / "proj").mkdir()
    for name, cwd in (("a.jsonl", tmp_path / "proj" / "sub"), ("b.jsonl", tmp_path / "other")):
        line = {"type": "user", "cwd": str(cwd), "message": {"role": "user", "content": f"hello from {name}"}}
        (tmp_path / name).write_text(json.dumps(line) + "\n", encoding="utf-8")
    named = (tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    got = samples_from_session_files(SessionQuery(named, tmp_path / "proj"), {}, Masker())
    assert (got.files, got.found.count) == (2, 1)
    assert "hello from a.jsonl" in got.found.text
    assert samples_from_session_files(SessionQuery(named), {}, Masker()).found.count == 2
