"""The `codex:` target without a model: its checks before the run (CLI, version, key, an API
that answers), the command line it builds, its hook and how it reads `codex exec --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk
from preflight_support import closed_port, omk_eval, one_problem

from omk.core.errors import ConfigError
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets import make_target
from omk.targets.codex import hook
from omk.targets.codex.stream import parse_events, tool_calls
from omk.targets.codex.target import CodexTarget, _failure
from omk.targets.codex.workspace import CodexWorkspace


def fake_codex(folder: Path, version_exit: int = 0) -> Path:
    """A stand-in `codex` that knows its version (enough for the checks before the run)."""
    path = folder / "codex"
    path.write_text(f"#!{sys.executable}\nimport sys\nprint('codex-cli 0.171.0')\nsys.exit({version_exit})\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_missing_codex_cli_stops_the_run(tmp_path):
    line = one_problem(omk_eval(tmp_path, "codex:gpt-5", {"PATH": str(tmp_path), "OPENAI_API_KEY": "k"}))
    assert "the Codex CLI (`codex`) was not found on PATH; install it with `npm install -g @openai/codex`" in line


def test_codex_without_a_key_stops_the_run_naming_it(tmp_path):
    line = one_problem(omk_eval(tmp_path, "codex:gpt-5", {"OMK_CODEX": str(fake_codex(tmp_path))}))
    assert line == "target 'codex:gpt-5': no API key: set OPENAI_API_KEY (omk runs the CLI without your login)"


def test_an_unreachable_api_behind_codex_stops_the_run(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    env = {"OMK_CODEX": str(fake_codex(tmp_path)), "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "k"}
    assert one_problem(omk_eval(tmp_path, "codex:gpt-5", env)).startswith(f"target 'codex:gpt-5': connection refused: {url}")


def test_a_cli_whose_version_fails_stops_the_run(tmp_path):
    env = {"OMK_CODEX": str(fake_codex(tmp_path, version_exit=3)), "OPENAI_API_KEY": "k"}
    assert "--version failed" in one_problem(omk_eval(tmp_path, "codex:gpt-5", env))


def _target(tmp_path: Path, monkeypatch, settings: dict | None = None) -> CodexTarget:
    monkeypatch.setenv("OMK_CODEX", str(fake_codex(tmp_path)))
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    target = make_target("codex:gpt-5", settings=settings)
    assert target.describe()["cli"]["version"] == "0.171.0"
    return CodexTarget("gpt-5", "codex:gpt-5", TargetSettings.of(settings))


def test_the_command_line_isolates_and_switches_off_unmockable_tools_under_strict(tmp_path, monkeypatch):
    target = _target(tmp_path, monkeypatch)
    loose = Sample(sample_id="a", prompt="hi", base_dir=tmp_path)
    space = CodexWorkspace(target.cfg, loose)
    try:
        argv = target.argv(loose, space)
        assert "--ignore-user-config" in argv
        assert "--json" in argv
        assert argv[argv.index("--cd") + 1] == str(space.work)
        assert any(a.startswith("hooks.PreToolUse=") and str(space.state_dir) in a for a in argv)
        assert any("http://127.0.0.1:9/v1" in a and "supports_websockets=false" in a for a in argv)
        assert 'web_search="disabled"' not in argv
        strict = Sample(sample_id="b", prompt="hi", base_dir=tmp_path, mocks_strict=True)
        strict_argv = target.argv(strict, space)
        assert 'web_search="disabled"' in strict_argv
        assert "view_image" in strict_argv
    finally:
        space.remove()


def test_a_conversation_keeps_its_session_and_a_later_turn_resumes_it(tmp_path, monkeypatch):
    target = _target(tmp_path, monkeypatch)
    sample = Sample(sample_id="a", prompt="hi", base_dir=tmp_path)
    single, conversation = CodexWorkspace(target.cfg, sample), CodexWorkspace(target.cfg, sample, conversation=True)
    try:
        # never --ephemeral: the session file in the sample's own CODEX_HOME is read for unsupported calls
        assert "--ephemeral" not in target.argv(sample, single)
        assert "--ephemeral" not in target.argv(sample, conversation)
        assert "resume" not in target.argv(sample, conversation)
        conversation.keep_session("thread-1", {"input_tokens": 20})
        later = target.argv(sample, conversation)
        assert later[-3:] == ["resume", "thread-1", "-"]
        assert later.index("--cd") < later.index("resume")
    finally:
        single.remove()
        conversation.remove()


def test_the_cache_key_follows_the_skill_and_the_cli_version(tmp_path, monkeypatch):
    skill = tmp_path / "skills" / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: d\n---\nbody\n", encoding="utf-8")
    first = _target(tmp_path, monkeypatch, {"skill": str(skill)}).cache_identity()
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: d\n---\nother body\n", encoding="utf-8")
    second = _target(tmp_path, monkeypatch, {"skill": str(skill)}).cache_identity()
    assert first != second
    assert first.program["version"] == "0.171.0"


def _hook(state: Path, event: dict) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", hook.__file__, str(state)], input=json.dumps(event),
                          capture_output=True, text=True, timeout=30, env={"PATH": os.environ["PATH"]})


def test_the_hook_blocks_with_the_mock_and_says_nothing_to_let_a_call_run(tmp_path):
    (tmp_path / "mocks.json").write_text(json.dumps({
        "mocks": [{"tool": "Bash", "match": {"command_glob": "git log*"}, "return": "abc feat"}],
        "strict": False, "base_dir": str(tmp_path)}), encoding="utf-8")
    (tmp_path / "state.json").write_text(json.dumps({"calls": []}), encoding="utf-8")
    mocked = _hook(tmp_path, {"tool_name": "Bash", "tool_input": {"command": "git log -1"}, "tool_use_id": "c1"})
    reply = json.loads(mocked.stdout)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny"
    assert reply["permissionDecisionReason"].endswith("abc feat")
    allowed = _hook(tmp_path, {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "c2"})
    assert allowed.returncode == 0
    assert allowed.stdout == ""  # Codex refuses an explicit "allow"
    broken = _hook(tmp_path / "missing", {"tool_name": "Bash", "tool_input": {}})
    assert broken.returncode == 2
    assert "blocked" in broken.stderr


def test_only_a_plain_read_of_an_installed_skill_counts_as_one(tmp_path):
    skills = tmp_path / ".codex" / "skills"
    (skills / "pdf").mkdir(parents=True)
    assert hook.reads_a_skill(f"cat {skills}/pdf/SKILL.md", skills)
    assert hook.reads_a_skill("sed -n '1,200p' \"$CODEX_HOME/skills/pdf/SKILL.md\"", skills)
    assert not hook.reads_a_skill(f"cat {skills}/pdf/SKILL.md; rm -rf /", skills)
    assert not hook.reads_a_skill(f"cat {skills}/../../etc/passwd", skills)
    assert not hook.reads_a_skill(f"rm {skills}/pdf/SKILL.md", skills)
    assert not hook.reads_a_skill(f"cat $(echo {skills}/pdf/SKILL.md)", skills)


EVENTS = b"""{"type":"thread.started","thread_id":"t-1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"a.txt\\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":4,"output_tokens":10}}
"""


def test_the_trace_pairs_the_hook_records_with_the_calls_that_ran():
    run = parse_events(EVENTS)
    records = [
        {"tool": "Bash", "input": {"command": "git log"}, "decision": "mock", "output": "abc", "mock_key": "Bash:1"},
        {"tool": "Bash", "input": {"command": "ls"}, "decision": "allow"},
    ]
    calls = tool_calls(run, records)
    assert [(c.mocked, c.output) for c in calls] == [(True, "abc"), (False, "a.txt\n")]
    assert run.output == "done"
    assert run.thread_id == "t-1"
    assert run.usage["cached_input_tokens"] == 4


def test_failures_name_the_refused_connection_and_the_missing_key(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    refused = _failure(parse_events(b'{"type":"turn.failed","error":{"message":"Connection failed: error sending request"}}'), 1, b"")
    assert str(refused).startswith("codex: connection refused: http://127.0.0.1:9/v1")
    assert refused.retryable
    no_key = _failure(parse_events(b'{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}'), 1, b"")
    assert "no API key: set OPENAI_API_KEY" in str(no_key)
    assert not no_key.retryable


def test_an_unknown_codex_setting_stops_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OMK_CODEX", str(fake_codex(tmp_path)))
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ConfigError, match=r"omk.yaml codex.user_config: unknown setting; expected one of args, env, path"):
        make_target("codex:gpt-5", settings={"codex": {"user_config": True}})


HUNG_CODEX = """#!{python}
import os, subprocess, sys, time
if "--version" in sys.argv:
    print("codex-cli 0.171.0")
    sys.exit(0)
child = subprocess.Popen(["sleep", "300"])
with open(os.environ["PIDS_FILE"], "w") as f:
    f.write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(300)
"""


def test_a_hung_codex_and_its_children_are_killed_at_the_timeout(tmp_path):
    from claude_support import alive, wait_until

    from omk.testing import ModelServer

    fake = tmp_path / "codex"
    fake.write_text(HUNG_CODEX.format(python=sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    pids = tmp_path / "pids"
    (tmp_path / "omk.yaml").write_text(f"codex: {{path: {fake}, env: [PIDS_FILE]}}\n", encoding="utf-8")
    with ModelServer([]) as model:  # what the checks before the run look for: an API that answers
        env = {"PIDS_FILE": str(pids), "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model.openai_url, "OMK_RETRY_BASE_S": "0"}
        (tmp_path / "eval-samples.yaml").write_text("samples:\n  - { sample_id: a, prompt: hi }\n", encoding="utf-8")
        full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OMK_", "CODEX_"))} | env
        done = run_omk(
            "eval", "eval-samples.yaml", "--target", "codex:gpt-5", "--timeout", "2", "--retries", "0", "--no-judge", "--quiet", "--out", str(tmp_path / "run"),
            cwd=tmp_path, base=full, drop=(), columns=None, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    assert result["status"] == "error"
    assert "timed out" in result["error"]
    cli, child = (int(p) for p in pids.read_text().split())
    assert wait_until(lambda: not alive(cli) and not alive(child), 5), (alive(cli), alive(child))
