"""`omk eval --target codex:…` as a real subprocess: the real Codex CLI against omk's scripted
server speaking the Responses API (streamed), offline: a skill installed and used, a mocked shell
call, a strict denial that leaves the workspace unchanged, tokens in the trace, and a planted
user config that never reaches the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from claude_support import require_claude, write_skill
from codex_support import omk_eval, require_codex

from omk.testing import ModelServer, Request, ScriptTurn, ToolRequest
from omk.testing.anthropic import render as anthropic_render
from omk.testing.anthropic import tool_results
from omk.testing.responses import render

KEY = "sk-codex-e2e-7a1b3c5d9e2f4a6b8c0d"
PLANTED = "PLANTED-USER-INSTRUCTIONS-9f3e"


def _outputs(request: Request) -> list[dict[str, Any]]:
    return [i for i in request.json.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"]


def model(request: Request) -> dict[str, Any]:
    """Read the skill, then ask for `git log` (mocked) and answer with what it returned; for the
    strict sample, try to create a file (denied) and say what came back. By call ids, never by
    position."""
    body = json.dumps(request.json)
    answered = {o["call_id"]: str(o.get("output")) for o in _outputs(request)}
    if "STRICT-SAMPLE" in body:
        if "read-skill" not in answered:  # a plain read of an installed skill runs even under mocksStrict
            command = 'cat "$CODEX_HOME/skills/greeter/SKILL.md"'
            return render(ScriptTurn(calls=(ToolRequest("read-skill", "exec_command", {"cmd": command}),)))
        if "touch" not in answered:
            return render(ScriptTurn(calls=(ToolRequest("touch", "exec_command", {"cmd": "touch made.txt"}),)))
        return render(ScriptTurn(text=f"tool said: {answered['touch']}", usage={"input_tokens": 30, "output_tokens": 7}))
    if "read-skill" not in answered:
        command = 'cat "$CODEX_HOME/skills/greeter/SKILL.md"'
        return render(ScriptTurn(calls=(ToolRequest("read-skill", "exec_command", {"cmd": command}),)))
    if "log" not in answered:
        return render(ScriptTurn(calls=(ToolRequest("log", "exec_command", {"cmd": "git log --oneline -1"}),)))
    skill_said = "HELLO-FROM-SKILL" in answered["read-skill"]
    return render(ScriptTurn(text=f"skill read: {skill_said}; last commit: {answered['log']}",
                             usage={"input_tokens": 120, "output_tokens": 40, "cache_read_input_tokens": 64}))


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    write_skill(project / "skills", "greeter", "Greets people. Use when asked to greet.", "Say HELLO-FROM-SKILL first.")
    (project / "omk.yaml").write_text("target: codex:gpt-5\nskill: skills/greeter\n", encoding="utf-8")
    samples = [
        {
            "sample_id": "mocked-shell",
            "prompt": "Greet me and tell me the last commit.",
            "mocks": [{"tool": "Bash", "match": {"command_glob": "*git log*"}, "return": "abc1234 feat: the mocked commit"}],
            "assertions": [
                {"type": "contains", "value": "skill read: True"},
                {"type": "contains", "value": "abc1234 feat: the mocked commit"},
                {"type": "skill_used", "value": "greeter"},
                {"type": "mock_hit", "value": "Bash:1"},
            ],
        },
        {
            "sample_id": "strict-denial",
            "prompt": "STRICT-SAMPLE: create a file.",
            "mocksStrict": True,
            "assertions": [{"type": "file_exists", "path": "made.txt", "not": True}, {"type": "skill_used", "value": "greeter"}],
        },
    ]
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": samples}, allow_unicode=True), encoding="utf-8")
    return project


def _planted_home(tmp_path: Path) -> Path:
    """A user's own Codex setup, which the run must never read."""
    home = tmp_path / "userhome"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(f'developer_instructions = "{PLANTED}"\nmodel = "o3"\n', encoding="utf-8")
    (home / ".codex" / "AGENTS.md").write_text(f"{PLANTED} from AGENTS.md\n", encoding="utf-8")
    (home / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY": "sk-planted-user-login"}', encoding="utf-8")
    return home


def test_codex_runs_the_skill_with_mocks_offline_isolated(tmp_path):
    codex = require_codex()
    project = _project(tmp_path)
    home = _planted_home(tmp_path)
    out = tmp_path / "run"
    with ModelServer(model) as fake:
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY,
               "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=project, env=env)
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    posts = [r for r in requests if r.method == "POST"]
    assert posts
    assert all(r.path == "/v1/responses" and r.json.get("stream") is True for r in posts)
    bodies = "".join(r.body.decode() for r in requests)
    assert PLANTED not in bodies
    assert "sk-planted-user-login" not in "".join(str(r.headers) for r in requests)
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in posts)
    assert "greeter" in posts[0].body.decode()  # the skill was listed to the model
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    target = report["target"]
    assert target["kind"] == "codex"
    assert target["cli"]["version"]
    assert target["isolation"]["isolated"]
    assert target["skills"][0]["installed_as"] == "$CODEX_HOME/skills/greeter/"
    assert "web_search" in target["self_answered_tools"]["available"]
    results = {r["sample_id"]: r for r in report["results"]}
    assert all(r["passed"] for r in results.values()), proc.stdout
    shell = results["mocked-shell"]["trace"]
    assert [c["tool"] for c in shell["tool_calls"]] == ["Bash", "Bash"]
    assert not shell["tool_calls"][0]["mocked"]
    assert "HELLO-FROM-SKILL" in shell["tool_calls"][0]["output"]
    assert shell["tool_calls"][1]["mocked"]
    assert shell["tool_calls"][1]["output"] == "abc1234 feat: the mocked commit"
    assert shell["tokens"]["input"] == 10 + 10 + 120
    assert shell["tokens"]["output"] == 5 + 5 + 40
    assert shell["cost_usd"] > 0
    assert shell["session_id"]
    strict = results["strict-denial"]["trace"]
    read, touch = strict["tool_calls"]
    assert "HELLO-FROM-SKILL" in read["output"]
    assert not read["is_error"]
    assert touch["is_error"]
    assert not touch["mocked"]
    assert "mocksStrict" in touch["output"]
    assert not (strict.get("workspace") or {}).get("changes")
    assert any("switched off" in note for note in strict["notes"])
    strict_request = next(r for r in posts if "STRICT-SAMPLE" in r.body.decode())
    assert "web_search" not in [t.get("type") for t in strict_request.json.get("tools") or []]
    assert KEY not in "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


def both_agents(request: Request) -> dict[str, Any]:
    """Claude Code (Anthropic Messages) and Codex (Responses) on one server: each asks for
    `git log` (mocked), then answers with what came back. By call ids, never by position."""
    if request.api == "responses":
        answered = {o["call_id"]: str(o.get("output")) for o in _outputs(request)}
        if "log" not in answered:
            return render(ScriptTurn(calls=(ToolRequest("log", "exec_command", {"cmd": "git log --oneline -1"}),)))
        return render(ScriptTurn(text=f"codex: {answered['log']}"))
    results = {str(b.get("tool_use_id")): anthropic_text(b.get("content")) for b in tool_results(request)}
    if "toolu_log" not in results:
        return anthropic_render(ScriptTurn(calls=(ToolRequest("toolu_log", "Bash", {"command": "git log --oneline -1"}),)))
    return anthropic_render(ScriptTurn(text=f"claude: {results['toolu_log']}"))


def anthropic_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def test_one_skill_compared_on_claude_and_codex_as_two_variants(tmp_path):
    codex, claude = require_codex(), require_claude()
    project = _project(tmp_path)
    (project / "omk.yaml").write_text(
        "skill: skills/greeter\nvariants:\n"
        '  - { name: claude, role: control, target: "claude:sonnet" }\n'
        '  - { name: codex, role: treatment, target: "codex:gpt-5" }\n',
        encoding="utf-8",
    )
    sample = {"sample_id": "last-commit", "prompt": "Tell me the last commit.",
              "mocks": [{"tool": "Bash", "match": {"command_glob": "*git log*"}, "return": "abc1234 feat: the mocked commit"}],
              "assertions": [{"type": "contains", "value": "abc1234"}, {"type": "mock_hit", "value": "Bash:1"}]}
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    out = tmp_path / "run"
    with ModelServer(both_agents) as fake:
        env = {"OMK_CODEX": codex, "OMK_CLAUDE": claude, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY,
               "ANTHROPIC_BASE_URL": fake.root, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=project, env=env)
        apis = {r.api for r in fake.requests if r.method == "POST"}
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert apis == {"anthropic", "responses"}
    outputs = {}
    for name in ("claude", "codex"):
        report = json.loads((out / "variants" / name / "report.json").read_text(encoding="utf-8"))
        assert report["target"]["kind"] == name
        result = report["results"][0]
        assert result["passed"], result
        outputs[name] = result["output"]
    for name, output in outputs.items():  # each model read the mock's output through its own CLI's hook
        assert output.startswith(f"{name}: ")
        assert "abc1234 feat: the mocked commit" in output
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["experiment"]


def test_a_mocked_mcp_tool_is_offered_by_a_stand_in_server_and_answered_by_the_hook(tmp_path):
    codex = require_codex()

    def mcp_model(request: Request) -> dict[str, Any]:
        answered = {o["call_id"]: str(o.get("output")) for o in _outputs(request)}
        offered = {t.get("name"): t for t in request.json.get("tools") or []}
        if "issue" not in answered:  # Codex offers an MCP server's tools as a namespace
            assert [t["name"] for t in offered["mcp__github"]["tools"]] == ["create_issue"]
            reply = render(ScriptTurn(calls=(ToolRequest("issue", "create_issue", {"title": "bug"}),)))
            reply["output"][0]["namespace"] = "mcp__github"
            return reply
        return render(ScriptTurn(text=f"done: {answered['issue']}"))

    sample = {"sample_id": "mcp", "prompt": "File a bug.", "mocksStrict": True,
              "mocks": [{"tool": "mcp__github__create_issue", "return": "issue #42 created"}],
              "assertions": [{"type": "contains", "value": "issue #42 created"},
                             {"type": "mock_hit", "value": "mcp__github__create_issue:1"}]}
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    with ModelServer(mcp_model) as fake:
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--target", "codex:gpt-5", "--out", str(tmp_path / "run")], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    assert [(c["tool"], c["mocked"]) for c in result["trace"]["tool_calls"]] == [("mcp__github__create_issue", True)]
