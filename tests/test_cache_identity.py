"""A cached answer is the answer of the model that was asked: every input that changes what a
target answers is in its cache identity (omk.domain.target_identity), for every target kind, so changing
one is a cache miss; and a run against one server never comes back with another server's answers.

Real parts throughout: scripted model servers on 127.0.0.1, the real Claude Code and Codex CLIs,
real `cmd:` programs, `omk eval` as a subprocess for the reported scenario."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_support import require_claude
from cli_support import run_omk
from codex_support import require_codex

import omk
from omk.loader import load_data
from omk.samples.model import Sample
from omk.store.cache import cache_key
from omk.targets import make_target

SAMPLES = """samples:
  - sample_id: who
    prompt: Who answers?
    assertions: [{type: contains, value: "the"}]
"""


def script(folder: Path, answer: str) -> Path:
    """A model script whose every reply is `answer`."""
    path = folder / f"{answer.replace(' ', '-')}.model.yaml"
    path.write_text(f"rules:\n  - answer: {answer}\n", encoding="utf-8")
    return path


def run_report(tmp_path: Path, target: str, env: dict[str, str]) -> dict:
    """`omk eval` in `tmp_path` (its cache in tmp_path/.omk, its key in tmp_path's HOME)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "OMK_"))}
    base.update(env, HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    out = tmp_path / "run"
    done = run_omk(
        "eval", "samples.yaml", "--target", target, "--no-judge", "--out", str(out),
        cwd=tmp_path, base=base, drop=(), columns=None, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    report["terminal"] = done.stdout
    return report


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_a_dry_run_s_answers_never_come_back_from_another_server(kind, scripted_model, tmp_path):
    """The reported scenario: a dry run against one scripted server, then the same samples
    against another server: the second run's answers are the second server's."""
    binary = {"claude": require_claude, "codex": require_codex}[kind]()
    (tmp_path / "samples.yaml").write_text(SAMPLES, encoding="utf-8")
    first, second = scripted_model(script(tmp_path, "the scripted dry run")), scripted_model(script(tmp_path, "the other server"))

    def env(server) -> dict[str, str]:
        if kind == "claude":
            return {"OMK_CLAUDE": binary, "ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_API_KEY": "offline"}
        return {"OMK_CODEX": binary, "OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": "offline"}

    dry = run_report(tmp_path, f"{kind}:", env(first))
    assert dry["results"][0]["output"] == "the scripted dry run"
    assert not dry["results"][0]["cached"]
    other = run_report(tmp_path, f"{kind}:", env(second))
    assert other["results"][0]["output"] == "the other server"
    assert not other["results"][0]["cached"]
    assert second.requests
    again = run_report(tmp_path, f"{kind}:", env(second))  # the cache still serves the server it came from
    assert again["results"][0]["output"] == "the other server"
    assert again["results"][0]["cached"]
    assert again["summary"]["cached"] == 1
    assert "1 of 1 from the cache; --no-cache to call again" in again["terminal"]


def _calls_made(tmp_path: Path, target: str, settings: str = "") -> int:
    """Run the one sample through `target` with `settings` as omk.yaml; the calls it made."""
    (tmp_path / "omk.yaml").write_text(settings or "{}\n", encoding="utf-8")
    report = omk.evaluate([{"sample_id": "who", "prompt": "Who answers?"}], target=target, judge=False, cwd=tmp_path)
    result = report.results[0]
    assert result.status == "ok", result.error
    return result.attempts


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_each_input_of_a_model_api_target_is_a_cache_miss(kind, scripted_model, tmp_path, monkeypatch):
    monkeypatch.setenv("OMK_CACHE_KEY", "k" * 40)
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy") or name.startswith(kind.upper()):
            monkeypatch.delenv(name)
    one, two = scripted_model(script(tmp_path, "one")), scripted_model(script(tmp_path, "two"))
    url = {"openai": lambda s: s.openai_url, "anthropic": lambda s: s.root}[kind]
    monkeypatch.setenv(f"{kind.upper()}_BASE_URL", url(one))
    target = f"{kind}:m"
    assert _calls_made(tmp_path, target) == 1
    assert _calls_made(tmp_path, target) == 0  # unchanged: from the cache
    changes = [
        ("another model", f"{kind}:n", ""),
        ("params", target, f"{kind}: {{params: {{temperature: 0.5}}}}\n"),
        ("price", target, f"{kind}: {{price: {{input: 1, output: 2}}}}\n"),
        ("system", target, "system: be brief\n"),
        ("max_turns", target, "max_turns: 3\n"),
    ]
    for what, spec, settings in changes:
        assert _calls_made(tmp_path, spec, settings) == 1, what
    monkeypatch.setenv(f"{kind.upper()}_BASE_URL", url(two))  # another endpoint
    assert _calls_made(tmp_path, target) == 1
    assert two.requests
    # a proxy the calls would go through (here bypassed for 127.0.0.1 by NO_PROXY, so they still arrive)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert _calls_made(tmp_path, target) == 1
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    assert _calls_made(tmp_path, target) == 1
    assert _calls_made(tmp_path, target) == 0  # and each of those is cached in turn


AGENT = """import json, os, sys
request = json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "output": os.environ.get("AGENT_MODEL", "default") + "@" + os.environ.get("OPENAI_BASE_URL", "-")}))
"""


def test_each_input_of_a_cmd_target_is_a_cache_miss(tmp_path, monkeypatch):
    """A `cmd:` program inherits omk's environment: the variables that pick its model or endpoint,
    and the proxy variables, are part of its identity, as are its command and files."""
    monkeypatch.setenv("OMK_CACHE_KEY", "k" * 40)
    for name in ("AGENT_MODEL", "OPENAI_BASE_URL", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    target = f"cmd:{sys.executable} {tmp_path / 'agent.py'}"
    assert _calls_made(tmp_path, target) == 1
    assert _calls_made(tmp_path, target) == 0
    monkeypatch.setenv("AGENT_MODEL", "big")
    assert _calls_made(tmp_path, target) == 1
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert _calls_made(tmp_path, target) == 1
    monkeypatch.setenv("HTTPS_PROXY", "http://user:secret-pass@127.0.0.1:3128")
    assert _calls_made(tmp_path, target) == 1
    assert _calls_made(tmp_path, target, "system: be brief\n") == 1
    (tmp_path / "agent.py").write_text(AGENT + "# edited\n", encoding="utf-8")
    assert _calls_made(tmp_path, target, "system: be brief\n") == 1
    assert _calls_made(tmp_path, target, "system: be brief\n") == 0
    identity = make_target(target, base_dir=tmp_path).cache_identity()
    assert identity is not None
    assert "secret-pass" not in json.dumps(identity.material())


def _key(spec: str, settings: dict | None, tmp_path: Path) -> str:
    identity = make_target(spec, base_dir=tmp_path, settings=settings).cache_identity()
    assert identity is not None
    return cache_key(identity, Sample(sample_id="who", prompt="Who answers?", base_dir=tmp_path), "Who answers?")


def _agent_cli_keys(kind: str, binary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(what changed, the key) for the agent CLI `kind` under each change of an identity input."""
    prefix = "ANTHROPIC" if kind == "claude" else "OPENAI"
    keys = [("as it was", _key(f"{kind}:", None, tmp_path))]

    def changed(what: str, spec: str = f"{kind}:", settings: dict | None = None) -> None:
        keys.append((what, _key(spec, settings, tmp_path)))

    changed("the model", f"{kind}:other-model")
    monkeypatch.setenv(f"{prefix}_BASE_URL", "http://127.0.0.1:2" + ("" if kind == "claude" else "/v1"))
    changed("the endpoint")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    changed("a proxy")
    monkeypatch.setenv("NO_PROXY", "example.com")
    changed("NO_PROXY")
    if kind == "claude":
        monkeypatch.setenv("ANTHROPIC_MODEL", "claude-x")
        changed("ANTHROPIC_MODEL")
        monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "x-route: b")
        changed("ANTHROPIC_CUSTOM_HEADERS")
    else:
        monkeypatch.setenv("OPENAI_ORGANIZATION", "org-b")
        changed("OPENAI_ORGANIZATION")
    monkeypatch.setenv("EXTRA_ROUTE", "b")
    changed("a variable omk.yaml passes (env)", settings={kind: {"env": ["EXTRA_ROUTE"]}})
    changed("the CLI's arguments", settings={kind: {"args": ["--verbose"]} if kind == "claude" else {"args": ["-c", "x=1"]}})
    changed("the system text", settings={"system": "be brief"})
    wrapper = tmp_path / "bin" / kind
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{binary}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv(f"OMK_{kind.upper()}", str(wrapper))
    changed("another CLI binary")
    if kind == "claude":
        mcp = tmp_path / "mcp.json"
        mcp.write_text('{"mcpServers": {}}', encoding="utf-8")
        changed("an MCP config", settings={"claude": {"mcp_config": str(mcp)}})
        changed("the user's own config", settings={"claude": {"user_config": True}})
    return keys


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_each_input_of_an_agent_cli_target_is_a_cache_miss(kind, tmp_path, monkeypatch):
    """The real CLI (asked for its version once per target): endpoint, proxy and routing
    variables, the variables omk.yaml passes, its arguments, system text, binary and MCP config
    each give another key; the API key is only ever there as `set`."""
    binary = {"claude": require_claude, "codex": require_codex}[kind]()
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_")) or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    monkeypatch.setenv(f"OMK_{kind.upper()}", binary)
    secret = "sk-secret-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY" if kind == "claude" else "OPENAI_API_KEY", secret)
    monkeypatch.setenv("HOME", str(tmp_path))
    keys = _agent_cli_keys(kind, binary, tmp_path, monkeypatch)
    seen: dict[str, str] = {}
    for what, key in keys:
        assert key not in seen, f"{what} gave the same key as {seen.get(key)}"
        seen[key] = what
    identity = make_target(f"{kind}:", base_dir=tmp_path).cache_identity()
    assert identity is not None
    assert secret not in json.dumps(identity.material())
    assert identity.environment["ANTHROPIC_API_KEY" if kind == "claude" else "OPENAI_API_KEY"] == "set"
    monkeypatch.setenv("ANTHROPIC_API_KEY" if kind == "claude" else "OPENAI_API_KEY", secret + "-rotated")
    assert make_target(f"{kind}:", base_dir=tmp_path).cache_identity() == identity  # a rotated key keeps the cache




READER = """import json, sys
json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "output": open("notes.txt").read()}))
"""


def test_the_content_of_a_samples_workspace_and_files_available_is_part_of_the_key(scripted_model, tmp_path, monkeypatch):
    """An agent works on copies of the sample's `workspace:` folder (a `cmd:` program here) and
    `files_available` (the real Claude Code here): an edit to one of those files is a new
    answer, never the answer to the old file."""
    monkeypatch.setenv("OMK_CACHE_KEY", "k" * 40)
    (tmp_path / "reader.py").write_text(READER, encoding="utf-8")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("first", encoding="utf-8")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "more.txt").write_text("one", encoding="utf-8")
    (tmp_path / "omk.yaml").write_text("{}\n", encoding="utf-8")

    def run(target: str, sample: dict) -> tuple[str | None, bool]:
        result = omk.evaluate([sample], target=target, judge=False, cwd=tmp_path).results[0]
        assert result.status == "ok", result.error
        return result.output, result.cached

    reader = f"cmd:{sys.executable} {tmp_path / 'reader.py'}"
    in_workspace = {"sample_id": "read", "prompt": "Read the notes.", "workspace": "ws"}
    assert run(reader, in_workspace) == ("first", False)
    assert run(reader, in_workspace) == ("first", True)
    (tmp_path / "ws" / "notes.txt").write_text("second", encoding="utf-8")
    assert run(reader, in_workspace) == ("second", False)

    monkeypatch.setenv("OMK_CLAUDE", require_claude())
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted_model(script(tmp_path, "read it")).root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    with_files = {"sample_id": "files", "prompt": "Read data/more.txt.", "environment": {"files_available": ["data"]}}
    assert run("claude:", with_files) == ("read it", False)
    assert run("claude:", with_files) == ("read it", True)
    (tmp_path / "data" / "more.txt").write_text("two", encoding="utf-8")
    assert run("claude:", with_files) == ("read it", False)
    assert run("claude:", with_files) == ("read it", True)


def test_a_name_the_system_refuses_in_files_available_is_keyed_not_a_traceback(tmp_path, monkeypatch):
    """A `files_available` entry too long for the file system loads (the agent's copy says it is
    missing); the cache key of its sample is still made, and the run goes on."""
    monkeypatch.setenv("OMK_CACHE_KEY", "k" * 40)
    (tmp_path / "reader.py").write_text(READER, encoding="utf-8")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("first", encoding="utf-8")
    sample = {"sample_id": "long", "prompt": "p", "workspace": "ws", "environment": {"files_available": ["x" * 300]}}
    (loaded,) = load_data([sample], base_dir=tmp_path).samples
    assert len(cache_key({"kind": "cmd"}, loaded, "p")) == 64
    reader = f"cmd:{sys.executable} {tmp_path / 'reader.py'}"
    result = omk.evaluate([sample], target=reader, judge=False, cwd=tmp_path).results[0]
    assert result.status == "ok", result.error
    assert result.output == "first"


JUDGE = """import json, os, sys
json.loads(sys.stdin.readline())
score = 5 if os.environ.get("JUDGE_MODEL") == "smaller" else SCORE
print(json.dumps({"output": json.dumps({"reasoning": "ok", "score": score, "reason": "fine"})}))
"""


def test_the_judge_cache_keys_on_the_same_identity_as_a_target(scripted_model, tmp_path, monkeypatch):
    """The judge's cached replies follow the same identity: a `cmd:` judge whose program changed,
    or that a routing variable points elsewhere, and a model judge behind a proxy, are asked again."""
    monkeypatch.setenv("OMK_CACHE_KEY", "k" * 40)
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name.startswith("OPENAI_") or name == "JUDGE_MODEL":
            monkeypatch.delenv(name)
    (tmp_path / "s.yaml").write_text("- {sample_id: a, prompt: hi, rubric: Greets}\n", encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"sample_id": "a", "output": "hello"}\n', encoding="utf-8")
    judge = tmp_path / "judge.py"

    def score(spec: str) -> float | None:
        report = omk.evaluate(tmp_path / "s.yaml", target=f"replay:{tmp_path / 'r.jsonl'}", judge=spec, cwd=tmp_path)
        return report.results[0].scores.judge

    judge.write_text(JUDGE.replace("SCORE", "4"), encoding="utf-8")
    command = f"cmd:{sys.executable} {judge}"
    assert score(command) == 4
    judge.write_text(JUDGE.replace("SCORE", "2"), encoding="utf-8")
    assert score(command) == 2  # the judge's program changed: asked again
    assert score(command) == 2  # unchanged: from the cache
    monkeypatch.setenv("JUDGE_MODEL", "smaller")
    assert score(command) == 5  # another model picked by the environment: asked again

    reply = {"choices": [{"message": {"role": "assistant", "content": json.dumps({"reasoning": "r", "score": 3, "reason": "x"})}}]}
    server = scripted_model([reply] * 4)
    monkeypatch.setenv("OPENAI_API_KEY", "offline")
    model = f"openai:m@{server.openai_url}"
    assert score(model) == 3
    assert len(server.requests) == 1
    assert score(model) == 3
    assert len(server.requests) == 1  # from the cache
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert score(model) == 3
    assert len(server.requests) == 2  # through a proxy now (bypassed here): asked again


def test_an_experiment_says_how_many_answers_came_from_the_cache_in_every_format(tmp_path):
    """The bundled experiment run twice: the second run's terminal, summary.md, report.html and
    junit.xml say its answers came from the cache, and report.json marks each variant's result."""
    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "samples", tmp_path / "samples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMK_")}
    env.update(HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"), COLUMNS="200")

    def run(out: str) -> subprocess.CompletedProcess[str]:
        args = ["samples/experiment/eval-samples.yaml", "--format", "md,html,junit", "--out", out, "--no-judge"]
        return run_omk("eval", *args, cwd=tmp_path, base=env, drop=(), columns=None, timeout=300)

    first = run("one")
    assert "from the cache" not in first.stdout, first.stdout + first.stderr
    second = run("two")
    report = json.loads((tmp_path / "two" / "report.json").read_text(encoding="utf-8"))
    cases = [c for r in report["experiment"]["runs"].values() for c in r["results"]]
    assert cases
    assert all(c["cached"] is True for c in cases)
    line = f"{len(cases)} of {len(cases)} from the cache; --no-cache to call again"
    assert line in second.stdout
    assert line in (tmp_path / "two" / "summary.md").read_text(encoding="utf-8")
    assert line in (tmp_path / "two" / "report.html").read_text(encoding="utf-8")
    junit = (tmp_path / "two" / "junit.xml").read_text(encoding="utf-8")
    assert f'<property name="cached" value="{len(cases)}" />' in junit
    assert '<property name="cached" value="true" />' in junit


KEY_OF = """import sys
from pathlib import Path
from omk.store.cache import cache_key
from omk.samples.model import Sample
from omk.targets import make_target
identity = make_target(sys.argv[1] + ":", base_dir=Path.cwd()).cache_identity()
print(cache_key(identity, Sample(sample_id="who", prompt="p", base_dir=Path.cwd()), "p"))
"""


@pytest.mark.parametrize(("kind", "writer"), [("claude", "workspace.py"), ("codex", "target.py")])
def test_a_change_to_what_omk_writes_for_an_agent_cli_is_a_cache_miss(kind, writer, tmp_path):
    """The settings, hook and flags omk hands the CLI are omk's own code: an omk whose code that
    writes them differs (a copy of omk with one such file edited) keys its answers apart."""
    binary = {"claude": require_claude, "codex": require_codex}[kind]()
    root = Path(__file__).resolve().parent.parent
    copy = tmp_path / "copy"
    shutil.copytree(root / "omk", copy / "omk", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "OMK_"))}
    env.update({f"OMK_{kind.upper()}": binary, "ANTHROPIC_API_KEY": "offline", "OPENAI_API_KEY": "offline"})

    def key(package: Path) -> str:
        done = subprocess.run([sys.executable, "-c", KEY_OF, kind], cwd=tmp_path, env={**env, "PYTHONPATH": str(package)},
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    before = key(copy)
    assert key(copy) == before
    with (copy / "omk" / "targets" / kind / writer).open("a", encoding="utf-8") as f:
        f.write("\n# a different omk writes this CLI's setup\n")
    assert key(copy) != before


def test_editing_the_module_a_cmd_target_runs_with_dash_m_is_a_cache_miss(tmp_path, monkeypatch):
    """`cmd:python -m agents.echo` names no file on its command line: the module it runs (found
    on PYTHONPATH, without importing it) is part of its identity, so editing it calls again."""
    monkeypatch.setenv("OMK_CACHE_KEY", "k" * 40)
    package = tmp_path / "lib" / "agents"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "echo.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "lib"))
    target = f"cmd:{sys.executable} -m agents.echo"
    assert _calls_made(tmp_path, target) == 1
    assert _calls_made(tmp_path, target) == 0
    (package / "echo.py").write_text(AGENT + "# edited\n", encoding="utf-8")
    assert _calls_made(tmp_path, target) == 1
    assert _calls_made(tmp_path, target) == 0
