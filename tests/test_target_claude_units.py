"""The parts of `claude:` that need no CLI: the hook program (run as Claude Code runs it), the
stream-json reader, the settings and the cache identity."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from claude_support import write_skill

from omk.core.errors import ConfigError
from omk.samples.model import Sample
from omk.settings.config import load_settings as load_omk_settings
from omk.settings.target_settings import TargetSettings
from omk.targets.claude import hook
from omk.targets.claude.setup import load_settings, read_skill
from omk.targets.claude.stream import build_trace, parse_stream, tool_calls
from omk.targets.claude.workspace import Workspace, copy_available

HOOK = str(Path(hook.__file__).resolve())


def state_dir(tmp_path: Path, mocks: list[dict], strict: bool = False) -> Path:
    folder = tmp_path / "omk"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hook.MOCKS_FILE).write_text(json.dumps({"mocks": mocks, "strict": strict, "base_dir": str(tmp_path)}))
    (folder / hook.STATE_FILE).write_text(json.dumps({"totals": {"hits": 0, "misses": 0, "per_mock": {}}, "calls": []}))
    return folder


def call_hook(folder: Path, tool: str, tool_input: dict, use_id: str = "t1") -> tuple[int, dict | None, str]:
    """The hook as Claude Code starts it: a separate isolated Python, the event on stdin."""
    event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": use_id}
    done = subprocess.run([sys.executable, "-I", HOOK, str(folder)], input=json.dumps(event), capture_output=True, text=True, timeout=30)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr


def decision(reply: dict) -> tuple[str, str | None]:
    out = reply["hookSpecificOutput"]
    return out["permissionDecision"], out.get("permissionDecisionReason")


def records(folder: Path) -> list[dict]:
    return json.loads((folder / hook.STATE_FILE).read_text())["calls"]


def test_a_matching_mock_denies_the_call_with_the_mock_output(tmp_path):
    (tmp_path / "notes.json").write_text('{"a": [1, 2]}')
    folder = state_dir(tmp_path, [
        {"tool": "Bash", "match": {"command_glob": "git *"}, "return_seq": ["first", "second"]},
        {"tool": "Read", "return_file": "notes.json"},
    ])
    code, reply, _ = call_hook(folder, "Bash", {"command": "git status"})
    assert code == 0
    assert decision(reply) == ("deny", hook.MOCK_PREFIX + "first")
    _, reply, _ = call_hook(folder, "Bash", {"command": "git diff"}, "t2")
    assert decision(reply) == ("deny", hook.MOCK_PREFIX + "second")  # return_seq goes on: the state is shared
    _, reply, _ = call_hook(folder, "read_file", {"file_path": "/x/notes.json"}, "t3")  # an alias of Read
    assert decision(reply) == ("deny", hook.MOCK_PREFIX + '{"a":[1,2]}')
    assert [(r["tool_use_id"], r["decision"], r["mock_key"]) for r in records(folder)] == [
        ("t1", "mock", "Bash:1"), ("t2", "mock", "Bash:1"), ("t3", "mock", "Read:1"),
    ]
    assert records(folder)[2]["output"] == {"a": [1, 2]}


def test_unmatched_calls_are_denied_under_strict_and_allowed_otherwise(tmp_path):
    strict = state_dir(tmp_path / "a", [{"tool": "Read", "return": "x"}], strict=True)
    _, reply, _ = call_hook(strict, "Bash", {"command": "rm -rf /"})
    assert decision(reply) == ("deny", "[omk] tool call denied: no mock matches this Bash call and mocksStrict is on")
    assert records(strict)[0]["decision"] == "deny"
    loose = state_dir(tmp_path / "b", [{"tool": "Read", "return": "x"}])
    _, reply, _ = call_hook(loose, "Bash", {"command": "ls"})
    assert decision(reply) == ("allow", None)
    assert records(loose)[0]["decision"] == "allow"
    state = json.loads((loose / hook.STATE_FILE).read_text())
    assert state["totals"]["misses"] == 1


def test_claude_codes_own_tools_run_even_under_strict_unless_mocked(tmp_path):
    folder = state_dir(tmp_path, [{"tool": "TodoWrite", "return": "mocked todo"}], strict=True)
    _, reply, _ = call_hook(folder, "Skill", {"skill": "release-notes"})
    assert decision(reply) == ("allow", None)
    _, reply, _ = call_hook(folder, "TodoWrite", {"todos": []}, "t2")
    assert decision(reply) == ("deny", hook.MOCK_PREFIX + "mocked todo")
    assert [r["tool"] for r in records(folder)] == ["TodoWrite"]  # the skill load is not a mock miss


def test_mcp_tools_match_by_either_name(tmp_path):
    folder = state_dir(tmp_path, [{"tool": "github.create_issue", "match": {"input": {"repo": "acme/app"}}, "return": {"number": 7}}])
    _, reply, _ = call_hook(folder, "mcp__github__create_issue", {"repo": "acme/app", "title": "Bug"})
    assert decision(reply) == ("deny", hook.MOCK_PREFIX + '{"number":7}')


def test_concurrent_calls_each_get_their_own_hit(tmp_path):
    folder = state_dir(tmp_path, [{"tool": "Grep", "return_seq": [f"r{i}" for i in range(8)]}])
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda i: call_hook(folder, "Grep", {"pattern": str(i)}, f"t{i}"), range(8)))
    assert sorted(decision(r)[1].rsplit("\n", 1)[1] for _, r, _ in replies) == [f"r{i}" for i in range(8)]
    assert json.loads((folder / hook.STATE_FILE).read_text())["totals"]["per_mock"] == {"Grep:1": 8}


def test_a_failing_hook_blocks_the_call(tmp_path):
    code, reply, stderr = call_hook(tmp_path / "no-such-folder", "Bash", {"command": "ls"})
    assert code == 2
    assert reply is None  # exit 2: Claude Code blocks the call, stderr is the reason
    assert "the mock hook failed, so the call was blocked" in stderr


STREAM = [
    {"type": "system", "subtype": "init", "session_id": "sess-1", "skills": ["release-notes"]},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "Let me look."},
                                                  {"type": "tool_use", "id": "u1", "name": "Bash", "input": {"command": "ls"}}]}},
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "u1", "content": "denied", "is_error": True}]}},
    {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "u2", "name": "Read", "input": {"file_path": "a"}}]}},
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "u2", "content": [{"type": "text", "text": "file text"}]}]}},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Done.", "num_turns": 3, "total_cost_usd": 0.0123,
     "duration_api_ms": 812, "stop_reason": "end_turn", "session_id": "sess-1",
     "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 30, "cache_creation_input_tokens": 40}},
]


def test_the_stream_becomes_the_trace():
    data = b"\n".join(json.dumps(e).encode() for e in STREAM) + b"\nnot json\n"
    run = parse_stream(data)
    records = [{"tool_use_id": "u1", "decision": "mock", "output": {"files": 2}, "mock_key": "Bash:1"}]
    calls = tool_calls(run, records)
    assert [(c.tool, c.output, c.mocked, c.mock_key, c.is_error) for c in calls] == [
        ("Bash", {"files": 2}, True, "Bash:1", False),  # the CLI saw a denial; omk records the mock's success
        ("Read", "file text", False, None, False),
    ]
    trace = build_trace(run, calls)
    assert (trace.turns, trace.cost_usd, trace.api_latency_ms, trace.stop_reason, trace.session_id) == (3, 0.0123, 812.0, "end_turn", "sess-1")
    assert trace.tokens == {"input": 10, "output": 20, "cache_read": 30, "cache_creation": 40}
    assert run.last_text() == "Done."


def test_claude_settings_are_checked_before_any_work(tmp_path, monkeypatch):
    fake = tmp_path / "claude"
    fake.write_text(f"#!{sys.executable}\nprint('2.1.0 (Claude Code)')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("OMK_CLAUDE", str(fake))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    assert load_settings("", "claude:", TargetSettings()).version == "2.1.0"
    assert load_settings("", "claude:", TargetSettings()).model is None
    for block, message in [
        ({"pathh": "x"}, "claude.pathh: unknown setting"),
        ({"api_key": "sk-x"}, "unknown setting"),
        ({"args": "--effort low"}, "claude.args: must be a list of strings"),
        ({"mcp_config": str(tmp_path / "none.json")}, "claude.mcp_config: file not found"),
        ({"user_config": "yes"}, "claude.user_config: must be true or false"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_settings("sonnet", "claude:sonnet", TargetSettings(claude=block))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="folder without a SKILL.md"):
        load_settings("sonnet", "claude:sonnet", TargetSettings(skill=str(tmp_path / "empty")))


def test_the_cache_identity_follows_the_skill_folder_content(tmp_path, monkeypatch):
    from omk.targets import make_target

    fake = tmp_path / "claude"
    fake.write_text(f"#!{sys.executable}\nprint('2.1.0 (Claude Code)')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("OMK_CLAUDE", str(fake))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    skill = write_skill(tmp_path, "notes", "d", "body")
    (skill / "scripts").mkdir()
    (skill / "scripts" / "run.py").write_text("print(1)")
    first = make_target("claude:sonnet", settings={"skill": str(skill)}).cache_identity()
    (skill / "scripts" / "run.py").write_text("print(2)")  # a script, not SKILL.md, changed
    second = make_target("claude:sonnet", settings={"skill": str(skill)}).cache_identity()
    assert first.settings["skill"] != second.settings["skill"]
    assert first.program["version"] == "2.1.0"
    assert make_target("claude:sonnet", settings={"max_turns": 3}).cache_identity().settings["max_turns"] == 3
    assert read_skill(skill).installed_as == ".claude/skills/notes/"


def test_omk_yaml_claude_paths_are_relative_to_its_folder(tmp_path):
    (tmp_path / "omk.yaml").write_text("claude: {path: bin/claude, mcp_config: mcp.json, args: [--effort, low]}\nskill: skills/notes\n")
    settings = load_omk_settings([tmp_path / "eval-samples.yaml"], tmp_path, {})
    assert settings.claude is not None
    assert settings.claude["path"] == str(tmp_path / "bin/claude")
    assert settings.claude["mcp_config"] == str(tmp_path / "mcp.json")
    assert settings.skill == str((tmp_path / "skills/notes").resolve())


def test_the_workspace_holds_the_skill_and_only_the_declared_files(tmp_path, monkeypatch):
    fake = tmp_path / "claude"
    fake.write_text(f"#!{sys.executable}\nprint('2.1.0')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("OMK_CLAUDE", str(fake))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    skill = write_skill(tmp_path / "skills", "notes", "d", "body")
    cfg = load_settings("sonnet", "claude:sonnet", TargetSettings(skill=str(skill)))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("x")
    (tmp_path / "other.txt").write_text("no")
    sample = Sample(sample_id="s", prompt="p", base_dir=tmp_path, environment={"files_available": ["data", "/etc/passwd"]})
    space = Workspace(cfg, sample)
    try:
        files = sorted(p.relative_to(space.work).as_posix() for p in space.work.rglob("*") if p.is_file())
        assert files == [".claude/skills/notes/SKILL.md", "data/a.csv"]
        assert space.notes == ["files_available: '/etc/passwd' is outside " + str(tmp_path) + "; not copied"]
        assert not [p for p in space.home.rglob("*") if p.is_file()]  # an empty home
    finally:
        space.remove()
    assert not space.root.exists()


def test_a_files_available_name_the_system_refuses_is_a_note_not_an_error(tmp_path):
    """A name too long for the file system (which loading lets through) is not found: a note,
    as for a missing file, and the other entries are still copied."""
    (tmp_path / "data.txt").write_text("x")
    long = "x" * 300
    sample = Sample(sample_id="s", prompt="p", base_dir=tmp_path, environment={"files_available": [long, "data.txt"]})
    work = tmp_path / "work"
    work.mkdir()
    notes = copy_available(sample, work)
    assert notes == [f"files_available: {long!r} not found in {tmp_path}; not copied"]
    assert (work / "data.txt").read_text() == "x"


def test_the_mcp_stand_in_offers_what_mocks_and_declared_tools_name():
    from omk.targets.claude.mcp_stub import mcp_name, stub_tools

    assert mcp_name("mcp__github__create_issue") == ("github", "create_issue")
    assert mcp_name("jira.search") == ("jira", "search")
    assert mcp_name("Bash") is None
    assert mcp_name("mcp__broken") is None
    assert mcp_name("*") is None
    declared = [{"name": "github.create_issue", "description": "Open", "parameters": {"type": "object", "required": ["title"]}}]
    mocks = [{"tool": "mcp__github__create_issue"}, {"tool": "mcp__github__list_prs"}, {"tool": "Read"}]
    assert stub_tools(mocks, declared) == {
        "github": [
            {"name": "create_issue", "description": "Open", "inputSchema": {"type": "object", "required": ["title"]}},
            {"name": "list_prs", "description": "The list_prs tool of github.", "inputSchema": {"type": "object"}},
        ]
    }


def test_the_cli_output_is_capped_and_only_the_tail_of_stderr_kept(tmp_path, monkeypatch):
    """A CLI that floods stdout past `max_output_bytes` errors the sample with the cap named; a
    flood on stderr is cut to its tail in memory, its end still in the message."""
    import resource

    from omk.targets import make_target
    from omk.targets.base import TargetError

    fake = tmp_path / "claude"
    fake.write_text(
        f"#!{sys.executable}\nimport sys, os\n"
        "if '--version' in sys.argv: print('2.1.0 (Claude Code)'); sys.exit(0)\n"
        f"mode = open({str(tmp_path / 'mode')!r}).read()\n"
        "chunk = b'x' * 65536\n"
        "stream = sys.stdout.buffer if mode == 'out' else sys.stderr.buffer\n"
        "for _ in range(3000):\n    stream.write(chunk)\n"  # about 200 MB
        "sys.stderr.write('THE-END'); sys.exit(3)\n"
    )
    fake.chmod(0o755)
    (tmp_path / "mode").write_text("out")  # the CLI's environment is omk's own choice: a file says what to flood
    monkeypatch.setenv("OMK_CLAUDE", str(fake))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    target = make_target("claude:sonnet", settings={"max_output_bytes": 1_000_000})
    sample = Sample("s", "p", base_dir=tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TargetError, match="printed more than 1000000 bytes on stdout"):
        asyncio.run(target.run(sample, "p"))
    (tmp_path / "mode").write_text("err")
    with pytest.raises(TargetError, match="THE-END"):
        asyncio.run(target.run(sample, "p"))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024  # KiB on Linux
    assert grown_mb < 100, f"{grown_mb:.0f} MB held for a 200 MB flood"
