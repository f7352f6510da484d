"""Before the run, every target checks what it can cheaply, and a failed check stops the run with
exit 2 and one line naming the target, the cause and the fix; during the run, failures name
themselves (a refused connection, a CLI without a key); many samples with one error are said once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import run_omk
from preflight_support import closed_port, omk_eval, one_problem

from omk.core.errors import ConfigError
from omk.targets import make_target
from omk.targets.claude.target import _failure
from omk.targets.preflight import check_reachable, proxy_for


def fake_claude(folder: Path) -> Path:
    """A stand-in `claude` that knows its version (enough for the checks before the run)."""
    path = folder / "claude"
    path.write_text(f"#!{sys.executable}\nprint('2.1.0 (Claude Code)')\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_unreachable_api_stops_the_run_at_once(tmp_path, kind):
    url = f"http://127.0.0.1:{closed_port()}" + ("/v1" if kind == "openai" else "")
    started = time.monotonic()
    done = omk_eval(tmp_path, f"{kind}:m", {f"{kind.upper()}_BASE_URL": url, f"{kind.upper()}_API_KEY": "k"})
    line = one_problem(done)
    assert time.monotonic() - started < 15
    assert line == f"target '{kind}:m': connection refused: {url}; start the server there, or check {kind.upper()}_BASE_URL or omk.yaml {kind}.base_url"
    assert not (tmp_path / "run" / "results.jsonl").exists() or not (tmp_path / "run" / "results.jsonl").read_text()


def test_an_unreachable_api_behind_claude_code_stops_the_run(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    env = {"OMK_CLAUDE": str(fake_claude(tmp_path)), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
    assert one_problem(omk_eval(tmp_path, "claude:sonnet", env)).startswith(f"target 'claude:sonnet': connection refused: {url}")


def test_a_proxy_is_what_is_checked_when_one_is_set(monkeypatch):
    port = closed_port()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert proxy_for("https://api.example.com/v1") == f"http://127.0.0.1:{port}"
    with pytest.raises(ConfigError, match=rf"connection refused: proxy http://127.0.0.1:{port} \(for https://api.example.com/v1\); check HTTPS_PROXY"):
        check_reachable("openai:m", "https://api.example.com/v1", "OPENAI_BASE_URL")
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert proxy_for("https://api.example.com/v1") is None


def test_claude_without_credentials_stops_the_run_naming_the_key(tmp_path):
    line = one_problem(omk_eval(tmp_path, "claude:sonnet", {"OMK_CLAUDE": str(fake_claude(tmp_path))}))
    assert line.startswith("target 'claude:sonnet': no API key: set ANTHROPIC_API_KEY (omk runs the CLI without your login)")


@pytest.mark.parametrize("setup", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"])
def test_each_documented_credential_setup_passes_the_check(tmp_path, monkeypatch, setup):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMK_CLAUDE", str(fake_claude(tmp_path)))
    monkeypatch.setenv(setup, "1")
    assert make_target("claude:sonnet").describe()["cli"]["version"] == "2.1.0"


def test_a_missing_key_for_an_api_target_stops_the_run(tmp_path):
    assert one_problem(omk_eval(tmp_path, "openai:gpt-4o")) == "target 'openai:gpt-4o': no API key: set OPENAI_API_KEY (a local base URL such as http://127.0.0.1:8000 needs none)"


def test_a_missing_claude_cli_stops_the_run(tmp_path):
    line = one_problem(omk_eval(tmp_path, "claude:sonnet", {"PATH": str(tmp_path), "ANTHROPIC_API_KEY": "k"}))
    assert "the Claude Code CLI (`claude`) was not found on PATH; install it with" in line


def test_a_misspelt_script_stops_the_run(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "reviewer.py").write_text("print('hi')\n", encoding="utf-8")
    line = one_problem(omk_eval(tmp_path, "cmd:python agents/reveiwer.py"))
    assert line.startswith("target 'cmd:python agents/reveiwer.py': script not found: agents/reveiwer.py")


def test_a_program_without_its_run_bit_stops_the_run_saying_chmod(tmp_path):
    (tmp_path / "agent.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    line = one_problem(omk_eval(tmp_path, "cmd:./agent.sh"))
    assert line == "target 'cmd:./agent.sh': ./agent.sh is not executable: run `chmod +x ./agent.sh`, or name its interpreter (cmd:python ./agent.sh)"
    (tmp_path / "agent.sh").chmod(0o755)
    assert make_target("cmd:./agent.sh", base_dir=tmp_path).spec == "cmd:./agent.sh"


def test_a_model_name_without_its_kind_gets_a_suggestion():
    with pytest.raises(ConfigError, match=r"did you mean openai:gpt-4o-mini\?"):
        make_target("gpt-4o-mini")
    with pytest.raises(ConfigError, match=r"did you mean anthropic:claude-sonnet-4-5 "):
        make_target("claude-sonnet-4-5")
    with pytest.raises(ConfigError, match="expected KIND:ARG"):
        make_target("something-else")


def test_eval_help_lists_every_target_kind():
    from omk.targets import KINDS

    done = run_omk("eval", "--help", drop=(), columns=None)
    assert done.returncode == 0, done.stderr
    help_text = " ".join(done.stdout.split())
    for kind in KINDS.names():
        assert f"{kind}:" in help_text, kind


def test_a_refused_connection_during_the_run_says_so_with_the_url(tmp_path, monkeypatch):
    import asyncio

    from omk.samples.model import Sample

    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    target = make_target("openai:m")

    async def go():
        try:
            return await target.run(Sample("s", "p"), "p")
        finally:
            await target.close()

    with pytest.raises(Exception, match=rf"^openai: connection refused: {url}/chat/completions$") as caught:
        asyncio.run(go())
    assert caught.value.retryable
    assert "timed out" not in str(caught.value)


def test_not_logged_in_from_the_isolated_cli_names_the_key(monkeypatch):
    error = _failure({"is_error": True, "result": "Not logged in · Please run /login"}, 1, b"")
    assert str(error) == "claude: no API key: set ANTHROPIC_API_KEY (omk runs the CLI without your login)"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    refused = _failure({"is_error": True, "result": "API Error: Connection error."}, 1, b"")
    assert str(refused).startswith("claude: connection refused: http://127.0.0.1:9")
    assert refused.retryable


def test_many_samples_with_one_error_are_said_once_with_the_count_and_ids(tmp_path):
    (tmp_path / "agent.py").write_text("import sys\nsys.stdin.read()\nsys.exit('cannot start: the agent broke')\n", encoding="utf-8")
    done = omk_eval(tmp_path, f"cmd:{sys.executable} agent.py")
    assert done.returncode != 0
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    errors = [r["error"] for r in report["results"]]
    assert len(errors) == 5
    assert len(set(errors)) == 1
    assert "the agent broke" in errors[0]  # the report keeps each
    assert "5 samples, the same error: s0, s1, s2, s3, s4" in done.stdout
    assert done.stdout.count("the agent broke") == 1, done.stdout


def _eval_into(cwd: Path, out: str, env: dict[str, str], samples: int = 5) -> subprocess.CompletedProcess[str]:
    import os

    (cwd / "eval-samples.yaml").write_text("samples:\n" + "".join(f"  - {{ sample_id: s{i}, prompt: hi {i}, assertions: [{{ type: contains, value: hello }}] }}\n" for i in range(samples)), encoding="utf-8")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "OMK_", "CLAUDE_", "CODEX_"))}
    return run_omk(
        "eval", "--target", "anthropic:m", "--no-judge", "--quiet", "--out", str(cwd / out),
        cwd=cwd, base={**full, **env}, drop=(), columns=None, timeout=120,
    )  # fmt: skip


def test_a_run_answered_wholly_from_the_cache_makes_no_check_and_no_request(tmp_path):
    from omk.testing import ModelServer
    from omk.testing.anthropic import text_reply

    with ModelServer([text_reply("hello")]) as model:
        env = {"ANTHROPIC_BASE_URL": model.root, "ANTHROPIC_API_KEY": "k"}
        first = _eval_into(tmp_path, "run1", env)
        assert first.returncode == 0, first.stderr
        assert len(model.requests) == 5
        assert model.connections > 0
        seen = model.connections
        again = _eval_into(tmp_path, "run2", env)  # every sample in the cache
        assert again.returncode == 0, again.stderr
        assert (len(model.requests), model.connections) == (5, seen)  # not a request, not even the check's connection
        assert "connect" not in again.stderr
        assert "preflight" not in again.stderr.lower()  # and nothing said about it
        more = _eval_into(tmp_path, "run3", env, samples=6)  # one sample calls the target: the check is made
        assert more.returncode == 0, more.stderr
        assert len(model.requests) == 6
        assert model.connections >= seen + 2
    down = env  # the same URL (the cache key has it), where nothing listens now
    cached = _eval_into(tmp_path, "run4", down, samples=6)
    assert cached.returncode == 0, cached.stderr  # a fully cached rerun needs no server
    line = one_problem(_eval_into(tmp_path, "run5", down, samples=7))
    assert line.startswith("target 'anthropic:m': connection refused:")
