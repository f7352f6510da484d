"""`claude:` with the real Claude Code CLI, offline against a scripted Messages server on loopback.

The fake streams SSE as the API does; its request log is what the model saw. Each test's script
decides the model's text and `tool_use` blocks; the CLI runs them, omk's PreToolUse hook answers
from the mocks, and the trace comes from the CLI's stream-json.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from claude_support import processes_in, require_claude, wait_until, write_skill
from helpers import make_ctx, make_spec, run

from omk.domain.trace_io import parse_trace
from omk.samples.model import Sample
from omk.targets import TargetError, make_target
from omk.targets.claude.hook import MOCK_PREFIX
from omk.targets.mocks import MockSandbox
from omk.targets.session import Session
from omk.testing import ModelServer, Stream
from omk.testing.anthropic import sse_events, text_reply, tool_results, tool_use_reply

MARKER = "claude-ran-this"


@pytest.fixture
def env(tmp_path, monkeypatch) -> Path:
    """The real CLI, a key for the loopback server, a user home full of things that must not
    leak, and temporary folders under tmp_path (so a test can see the processes in them)."""
    monkeypatch.setenv("OMK_CLAUDE", require_claude())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    home = tmp_path / "user-home"
    user = home / ".claude"
    write_skill(user / "skills", "user-private-skill", "USER-SKILL-LEAK handles everything", "USER-SKILL-BODY-LEAK")
    (user / "CLAUDE.md").write_text("USER-MEMORY-LEAK: always mention pineapples\n", encoding="utf-8")
    (user / "settings.json").write_text(json.dumps({"env": {"USER_SETTINGS_LEAK": "1"}}), encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return tmp_path


def sample(base: Path, **fields: Any) -> Sample:
    return Sample(sample_id=fields.pop("sample_id", "s1"), prompt=fields.pop("prompt", "do the task"), base_dir=base, **fields)


def run_target(script: Any, the_sample: Sample, settings: dict | None = None, spec: str = "claude:sonnet"):
    """(result, the fake's requests); the server is on loopback for the call only."""
    with ModelServer(script) as fake:
        import os

        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        try:
            target = make_target(spec, settings=settings or {})
            result = asyncio.run(target.run(the_sample, the_sample.prompt))
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
        return result, fake.requests


def bodies(requests) -> str:
    return "\n".join(r.body.decode("utf-8", errors="replace") for r in requests)


def test_installed_skill_reaches_the_model_and_loads_when_called(env):
    skill = write_skill(env / "skills", "release-notes", "ZEBRA-DESCRIPTION writes release notes", "SKILL-BODY-MARKER-42")
    (skill / "reference.md").write_text("REFERENCE-TEXT", encoding="utf-8")
    script = [tool_use_reply([("Skill", {"skill": "release-notes"})], id_prefix="s"), text_reply("notes written")]
    result, requests = run_target(script, sample(env), {"skill": str(skill), "system": "APPENDED-SYSTEM-TEXT"})
    first = requests[0].body.decode()
    assert "ZEBRA-DESCRIPTION" in first
    assert "release-notes" in first  # listed to the model from the start
    assert "APPENDED-SYSTEM-TEXT" in json.dumps(requests[0].json["system"])
    assert "SKILL-BODY-MARKER-42" not in first  # the body comes when the model loads the skill
    assert "SKILL-BODY-MARKER-42" in requests[1].body.decode()
    assert result.output == "notes written"
    call = result.trace.tool_calls[0]
    assert (call.tool, call.mocked, call.is_error) == ("Skill", False, False)
    assert result.trace.mock_stats.misses == 0  # loading a skill is not a tool the mocks are asked about
    assert not result.trace.notes


def test_bash_and_read_are_answered_by_the_mocks_and_mock_hit_passes(env):
    marker = env / MARKER
    mocks = [
        {"tool": "Bash", "match": {"command_glob": "git log*"}, "return_seq": ["abc123 first", "def456 second"]},
        {"tool": "Read", "match": {"file_path_endswith": "CHANGELOG.md"}, "return": {"version": "1.2.0"}},
    ]
    script = [
        tool_use_reply([("Bash", {"command": f"git log --oneline; touch {marker}"})], id_prefix="a"),
        tool_use_reply([("Read", {"file_path": "/repo/CHANGELOG.md"})], id_prefix="b"),
        tool_use_reply([("Bash", {"command": "git log -1"})], id_prefix="c"),
        text_reply("Version 1.2.0, last commit def456"),
    ]
    result, requests = run_target(script, sample(env, mocks=mocks))
    assert not marker.exists()  # the real command never ran
    seen = [tool_results(r)[0]["content"] for r in requests[1:4]]
    assert MOCK_PREFIX + "abc123 first" in seen[0]
    assert MOCK_PREFIX + '{"version":"1.2.0"}' in seen[1]  # an object goes to the model as compact JSON
    assert MOCK_PREFIX + "def456 second" in seen[2]  # return_seq goes on with the next hit
    calls = result.trace.tool_calls
    assert [(c.tool, c.mocked, c.mock_key, c.is_error) for c in calls] == [
        ("Bash", True, "Bash:1", False),
        ("Read", True, "Read:1", False),
        ("Bash", True, "Bash:1", False),
    ]
    assert calls[1].output == {"version": "1.2.0"}  # the trace keeps the value
    assert result.trace.mock_stats.to_json() == {"hits": 3, "misses": 0, "per_mock": {"Bash:1": 2, "Read:1": 1}}
    checks = [make_spec("mock_hit", value="Bash:1", threshold=2), make_spec("mock_hit", value="Read:1"),
              make_spec("tools_called", values=["Bash", "Read"]), make_spec("tools_called", values=["Write"], **{"not": True})]
    the_sample = sample(env, mocks=mocks)
    assert [r.passed for r in run(checks, make_ctx(result.output, result.trace, the_sample))] == [True, True, True, True]


def test_strict_mode_denies_an_unmatched_call_and_the_command_never_runs(env):
    marker = env / MARKER
    script = [tool_use_reply([("Bash", {"command": f"touch {marker}"})], id_prefix="a"), text_reply("could not")]
    mocks = [{"tool": "Read", "return": "unused"}]
    result, requests = run_target(script, sample(env, mocks=mocks, mocks_strict=True))
    assert not marker.exists()
    assert "tool call denied: no mock matches this Bash call and mocksStrict is on" in tool_results(requests[1])[0]["content"]
    call = result.trace.tool_calls[0]
    assert (call.tool, call.mocked, call.is_error) == ("Bash", False, True)
    assert result.trace.mock_stats.to_json() == {"hits": 0, "misses": 1, "per_mock": {}}


def test_without_strict_an_unmatched_call_really_runs(env):
    """The other side of the strict test: the marker is created when omk lets the call run."""
    marker = env / MARKER
    script = [tool_use_reply([("Bash", {"command": f"touch {marker} && echo made"})], id_prefix="a"), text_reply("ok")]
    result, _ = run_target(script, sample(env, mocks=[{"tool": "Read", "return": "x"}]))
    assert marker.exists()
    call = result.trace.tool_calls[0]
    assert (call.mocked, call.is_error, call.output) == (False, False, "made")
    assert result.trace.mock_stats.misses == 1


def test_the_users_own_claude_setup_does_not_leak_in(env):
    script = [text_reply("plain answer")]
    _, requests = run_target(script, sample(env))
    seen = bodies(requests)
    for leak in ("USER-SKILL-LEAK", "user-private-skill", "USER-MEMORY-LEAK", "pineapples"):
        assert leak not in seen
    # The same home read on purpose (claude.user_config: true) shows the test can see a leak.
    _, requests = run_target(script, sample(env), {"claude": {"user_config": True}})
    seen = bodies(requests)
    assert "USER-SKILL-LEAK" in seen
    assert "USER-MEMORY-LEAK" in seen


def test_cost_tokens_turns_and_session_are_recorded_and_round_trip(env):
    script = [
        tool_use_reply([("Read", {"file_path": "/a.txt"})], input_tokens=120, output_tokens=30, id_prefix="a",
                       cache_read_input_tokens=400, cache_creation_input_tokens=50),
        text_reply("done", input_tokens=200, output_tokens=40, cache_read_input_tokens=600),
    ]
    result, _ = run_target(script, sample(env, mocks=[{"tool": "Read", "return": "A"}]))
    trace = result.trace
    assert trace.tokens == {"input": 320, "output": 70, "cache_read": 1000, "cache_creation": 50}
    assert trace.turns == 2
    assert trace.cost_usd is not None
    assert trace.cost_usd > 0  # the CLI's own price for its model
    assert trace.stop_reason == "end_turn"
    assert trace.session_id
    assert len(trace.session_id) == 36
    assert trace.api_latency_ms is not None
    assert trace.latency_ms >= trace.api_latency_ms
    assert parse_trace(json.loads(json.dumps(trace.to_json()))) == trace  # report.json, the cache, replay


def test_a_conversation_keeps_its_session(env):
    the_sample = sample(env, mocks=[{"tool": "Bash", "return_seq": ["one", "two"]}])
    sandbox = MockSandbox.for_sample(the_sample)
    script = [
        tool_use_reply([("Bash", {"command": "date"})], id_prefix="a"),
        text_reply("FIRST-ANSWER"),
        tool_use_reply([("Bash", {"command": "date"})], id_prefix="b"),
        text_reply("SECOND-ANSWER"),
    ]
    import os

    with ModelServer(script) as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        target = make_target("claude:sonnet", settings={})

        async def both():
            out = []
            for index, prompt in enumerate(["FIRST-QUESTION", "SECOND-QUESTION"]):
                sandbox.start_turn()
                out.append(await target.run(the_sample, prompt, Session(index, 2, sandbox)))
            await target.close()
            return out

        try:
            first, second = asyncio.run(both())
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
        requests = fake.requests
    assert first.trace.session_id == second.trace.session_id
    later = requests[2].body.decode()
    assert "FIRST-QUESTION" in later
    assert "FIRST-ANSWER" in later
    assert "SECOND-QUESTION" in later
    assert MOCK_PREFIX + "two" in tool_results(requests[3])[0]["content"]  # return_seq went on across turns
    assert second.output == "SECOND-ANSWER"
    assert second.trace.mock_stats.per_mock == {"Bash:1": 1}
    assert sandbox.totals.per_mock == {"Bash:1": 2}
    assert not list(Path(tempfile.gettempdir()).glob("omk-claude-*"))  # the workspace went with the last turn


def test_an_api_error_is_an_errored_sample_with_the_clis_message(env):
    from omk.testing import HttpError

    error = HttpError(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "model field is invalid"}})
    with pytest.raises(TargetError, match="API Error: 400 model field is invalid") as caught:
        run_target([error], sample(env))
    assert not caught.value.retryable


def test_max_turns_stops_the_agent_without_an_error(env):
    script = [tool_use_reply([("Read", {"file_path": "/a"})], text="looking", id_prefix=f"t{i}") for i in range(5)]
    result, requests = run_target(script, sample(env, mocks=[{"tool": "Read", "return": "A"}]), {"max_turns": 2})
    assert len(requests) == 2
    assert result.output == "looking"
    assert any("stopped at max_turns (2)" in n for n in result.trace.notes)


def test_files_available_are_copied_in_and_nothing_else(env):
    project = env / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('FIXTURE-CONTENT')\n", encoding="utf-8")
    (project / "secret.txt").write_text("NOT-DECLARED", encoding="utf-8")
    script = [
        tool_use_reply([("Bash", {"command": "cat src/app.py; ls; cat secret.txt"})], id_prefix="a"),
        text_reply("read it"),
    ]
    environment = {"files_available": ["src/app.py", "../outside.txt", "missing.md"]}
    result, _ = run_target(script, sample(env, cwd="project", environment=environment))
    output = result.trace.tool_calls[0].output
    assert "FIXTURE-CONTENT" in output
    assert "NOT-DECLARED" not in output
    assert any("'../outside.txt' is outside" in n for n in result.trace.notes)
    assert any("'missing.md' not found" in n for n in result.trace.notes)


def test_a_hung_cli_is_killed_at_the_timeout_with_its_children(env):
    """The server starts a reply and never finishes it: the CLI waits, omk's timeout kills the
    whole process group and the workspace goes."""
    stalled = Stream(sse_events(text_reply("never finished"))[:2], hang=True)
    scratch = Path(tempfile.gettempdir())
    import os

    with ModelServer([stalled]) as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        target = make_target("claude:sonnet", settings={})
        seen: list[int] = []

        async def go():
            task = asyncio.ensure_future(target.run(sample(env), "hang please"))
            await asyncio.sleep(0)
            assert await asyncio.to_thread(wait_until, lambda: bool(fake.requests), 30)
            seen.extend(processes_in(scratch))
            async with asyncio.timeout(1.5):
                await task

        try:
            with pytest.raises(TimeoutError):
                asyncio.run(go())
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
    assert seen, "the CLI should have been running in the workspace"
    assert wait_until(lambda: not processes_in(scratch), 5), processes_in(scratch)
    assert not list(scratch.glob("omk-claude-*"))


def test_mcp_tools_named_by_mocks_are_offered_and_answered(env):
    mocks = [
        {"tool": "mcp__github__create_issue", "match": {"input": {"title": "Crash on start"}}, "return": {"number": 42}},
        {"tool": "jira.search", "return": "JIRA-7 open"},
    ]
    declared = [{"name": "mcp__github__create_issue", "description": "Open an issue",
                 "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}]
    script = [
        tool_use_reply([("mcp__github__create_issue", {"title": "Crash on start"})], id_prefix="a"),
        tool_use_reply([("mcp__jira__search", {"q": "crash"})], id_prefix="b"),
        tool_use_reply([("mcp__github__create_issue", {"title": "Other"})], id_prefix="c"),
        text_reply("Opened #42"),
    ]
    result, requests = run_target(script, sample(env, mocks=mocks, tools=declared))
    first = requests[0].body.decode()  # offered (as deferred tools, like any MCP server's in this CLI)
    assert "mcp__github__create_issue" in first
    assert "mcp__jira__search" in first
    assert MOCK_PREFIX + '{"number":42}' in tool_results(requests[1])[0]["content"]
    assert MOCK_PREFIX + "JIRA-7 open" in tool_results(requests[2])[0]["content"]
    unmatched = tool_results(requests[3])[0]  # no mock matched: it reached the stand-in server
    assert unmatched["is_error"]
    assert "no mock matches this github.create_issue call" in json.dumps(unmatched)
    calls = result.trace.tool_calls
    assert [(c.tool, c.mocked, c.mock_key) for c in calls] == [
        ("mcp__github__create_issue", True, "mcp__github__create_issue:1"),
        ("mcp__jira__search", True, "jira.search:1"),
        ("mcp__github__create_issue", False, None),
    ]
    checks = [make_spec("tools_called", values=["github.create_issue"]), make_spec("mock_hit", value="jira.search:1")]
    assert [r.passed for r in run(checks, make_ctx(result.output, result.trace, sample(env, mocks=mocks)))] == [True, True]


def test_a_retried_turn_resumes_from_the_last_good_turn(env):
    """A failed attempt of turn 2 leaves nothing in the session the retry resumes."""
    from omk.testing import HttpError

    the_sample = sample(env)
    sandbox = MockSandbox.for_sample(the_sample)
    failure = HttpError(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "refused once"}})

    def script(request):
        body = request.body.decode()
        if "FAILED-ATTEMPT-QUESTION" in body:
            return failure  # every try of that attempt (the CLI retries some errors itself)
        return text_reply("SECOND-ANSWER" if "SECOND-QUESTION" in body else "FIRST-ANSWER")

    import os

    with ModelServer(script) as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        target = make_target("claude:sonnet", settings={})

        async def turns():
            sandbox.start_turn()
            await target.run(the_sample, "FIRST-QUESTION", Session(0, 2, sandbox))
            sandbox.start_turn()
            with pytest.raises(TargetError, match="refused once"):
                await target.run(the_sample, "FAILED-ATTEMPT-QUESTION", Session(1, 2, sandbox))
            sandbox.retry_turn()
            result = await target.run(the_sample, "SECOND-QUESTION", Session(1, 2, sandbox))
            await target.close()
            return result

        try:
            second = asyncio.run(turns())
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
        retried = fake.requests[-1].body.decode()
    assert "FIRST-ANSWER" in retried
    assert "SECOND-QUESTION" in retried
    assert "FAILED-ATTEMPT-QUESTION" not in retried
    assert second.output == "SECOND-ANSWER"
