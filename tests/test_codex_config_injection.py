"""Nothing from a sample or omk.yaml is spliced into Codex's configuration: the real Codex CLI,
offline against omk's scripted Responses server. A mock whose tool name carries TOML is refused
when the samples load; text that reaches the configuration (omk.yaml `system:`) arrives at the
model exactly as written and starts nothing. And the writer's own rules, unit by unit."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
import yaml
from codex_support import omk_eval, require_codex

from omk.domain.toolnames import name_problem
from omk.targets.codex import config
from omk.testing import ModelServer, Request, ScriptTurn
from omk.testing.responses import render

KEY = "sk-codex-inject-5e8d2a"


def _answer(request: Request) -> dict[str, Any]:
    return render(ScriptTurn(text="done"))


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_a_mock_tool_name_carrying_toml_is_refused_when_the_samples_load(tmp_path):
    codex = require_codex()
    marker = tmp_path / "MARKER-from-a-tool-name"
    server = f'evil={{command="touch",args=["{marker}"]}}#'
    sample = {"sample_id": "hostile", "prompt": "File a bug.",
              "mocks": [{"tool": f"mcp__{server}__create_issue", "return": "ok"}],
              "assertions": [{"type": "contains", "value": "done"}]}
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    with ModelServer(_answer) as fake:
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--target", "codex:gpt-5", "--out", str(tmp_path / "run")], cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "eval-samples.yaml:" in proc.stderr
    assert "samples[0] (hostile) mocks[0].tool:" in proc.stderr
    assert "is not a tool name" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()


def test_system_text_that_looks_like_toml_reaches_the_model_exactly_and_starts_nothing(tmp_path):
    codex = require_codex()
    marker = tmp_path / "MARKER-from-system"
    system = (f'Be brief."\nmcp_servers.evil = {{command = "touch", args = ["{marker}"], required = true}}\n'
              f"# a DEL \x7f and a quote ' end")
    (tmp_path / "omk.yaml").write_text(yaml.safe_dump({"target": "codex:gpt-5", "system": system}), encoding="utf-8")
    sample = {"sample_id": "plain", "prompt": "Say done.", "assertions": [{"type": "contains", "value": "done"}]}
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    with ModelServer(_answer) as fake:
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(tmp_path / "run")], cwd=tmp_path, env=env)
        posts = [r for r in fake.requests if r.method == "POST"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert posts and any(system in s for s in _strings(posts[0].json)), "the developer instructions were not the text as written"
    assert not marker.exists()


@pytest.mark.parametrize("text", ['plain', 'a "quote" and \\ back', "line\nbreak\ttab", "del \x7f nul-free \x01", "ünï ✓ \u2028"])
def test_the_writer_gives_text_back_exactly_as_toml(text):
    table = {"mcp_servers.srv": {"command": text, "args": [text, "-I"], "required": True}, "developer_instructions": text}
    argv = config.overrides(table)
    assert argv[0::2] == ["-c", "-c"]
    parsed = [tomllib.loads(f"v = {a.partition('=')[2]}")["v"] for a in argv[1::2]]
    assert parsed == [{"command": text, "args": [text, "-I"], "required": True}, text]
    assert [a.partition("=")[0] for a in argv[1::2]] == ["mcp_servers.srv", "developer_instructions"]


@pytest.mark.parametrize("name", ['a"b', "a.b", "a b", "a=b", "a]", "", "x" * 65, "a\nb", "a#"])
def test_the_writer_refuses_a_key_that_is_not_a_bare_name(name):
    with pytest.raises(ValueError):
        config.key(name)
    with pytest.raises(ValueError):
        config.overrides({f"mcp_servers.{name}.x": {"command": "x"}} if "." not in name else {f"{name}=": 1})
    with pytest.raises(ValueError):
        config.value({name: 1})


def test_the_writer_refuses_a_value_it_cannot_write():
    with pytest.raises(ValueError):
        config.value(object())
    assert tomllib.loads(f"v = {config.value([1, 2.5, False, {'k': 'v'}])}")["v"] == [1, 2.5, False, {"k": "v"}]


@pytest.mark.parametrize("name", ["Bash", "*", "create-issue_2", "mcp__github__create_issue", "github.create_issue", "x" * 64])
def test_tool_names_agent_clis_accept_are_allowed(name):
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ['mcp__evil={command="sh"}#__t', "mcp__a b__t", "a.b.c", "web search", "x" * 65,
                                  "Bash;rm", "tool\n", "café"])
def test_tool_names_agent_clis_refuse_are_refused(name):
    assert name_problem(name) is not None


def test_a_drafted_task_whose_mock_names_a_hostile_tool_is_refused(tmp_path):
    from omk.authoring.draft_check import TASK, DraftError, checked, sample_of

    item = {"prompt": "File a bug.", "mocks": [{"tool": 'mcp__x={command="sh"}#__create', "return": "ok"}],
            "assertions": [{"type": "contains", "value": "bug"}]}
    sample = sample_of(TASK, item, "skill", "drafted-1")
    with pytest.raises(DraftError) as caught:
        checked(TASK, sample, "drafts.yaml", tmp_path)
    lines = caught.value.lines
    assert any(line.startswith("drafts.yaml:") and "samples[0] (drafted-1) mocks[0].tool:" in line for line in lines), lines
    item["mocks"][0]["tool"] = "mcp__github__create_issue"
    assert checked(TASK, sample_of(TASK, item, "skill", "drafted-1"), "drafts.yaml", tmp_path)[0].mocks


def test_a_sample_built_in_code_with_a_hostile_server_name_never_reaches_the_command_line(tmp_path, monkeypatch):
    from omk.samples.model import Sample
    from omk.settings.target_settings import TargetSettings
    from omk.targets.base import TargetError
    from omk.targets.codex.target import CodexTarget
    from omk.targets.codex.workspace import CodexWorkspace

    monkeypatch.setenv("OMK_CODEX", require_codex())
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    target = CodexTarget("gpt-5", "codex:gpt-5", TargetSettings())
    sample = Sample(sample_id="a", prompt="hi", base_dir=tmp_path, mocks=[{"tool": 'mcp__x={command="sh"}#__t', "return": "ok"}])
    space = CodexWorkspace(target.cfg, sample)
    try:
        with pytest.raises(TargetError, match="cannot be a configuration key"):
            target.argv(sample, space)
    finally:
        space.remove()
