"""The real Codex CLI under `omk eval`, offline against omk's scripted Responses API server: a
conversation whose later turn resumes the first one's session (`codex exec … resume`), and
`apply_patch`, which Codex offers as a custom (freeform) tool and sends through omk's hook."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from claude_support import write_skill
from codex_support import omk_eval, require_codex

from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.base import TargetError, TargetResult
from omk.targets.codex.target import CodexTarget
from omk.targets.mocks import MockSandbox
from omk.targets.session import Session
from omk.testing import HttpError, ModelServer, Request, ScriptTurn
from omk.testing.responses import (
    custom_call_reply,
    error_body,
    render,
    text_reply,
    tool_call_reply,
    tool_outputs,
)

KEY = "sk-codex-turns-3e8a1c7b5d9f2e4a6c0b"
TURN_2_USAGE = {"input_tokens": 100, "output_tokens": 50}


def _items(request: Request) -> list[dict[str, Any]]:
    return [i for i in request.json.get("input") or [] if isinstance(i, dict)]


def _text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _said(request: Request, role: str) -> list[str]:
    """What each message of `role` says, in order (Codex's own context messages left out)."""
    said = [_text(i) for i in _items(request) if i.get("type") == "message" and i.get("role") == role]
    return [s for s in said if not s.lstrip().startswith("<")]


def _call(call_id: str, cmd: str, usage: dict[str, int] | None = None) -> dict[str, Any]:
    return tool_call_reply("exec_command", {"cmd": cmd}, call_id, **(usage or {}))


def conversation_model(request: Request) -> dict[str, Any]:
    """Turn 1: write the word down with the shell, then say `noted`. Turn 2: only when the
    request carries turn 1 (its prompt, its call and the reply), read the note back (runs) and
    ask for `git log` (mocked), then answer with all three. By role and by call ids."""
    users, answered = _said(request, "user"), tool_outputs(request)
    if "Which word" not in users[-1]:
        if "memo" not in answered:
            return _call("memo", "printf HELIOTROPE > memo.txt")
        return render(ScriptTurn(text="noted"))
    remembered = any("Remember the word HELIOTROPE" in u for u in users[:-1]) and "noted" in _said(request, "assistant")
    if not remembered or "memo" not in answered:
        return render(ScriptTurn(text="I have no earlier turn", usage=TURN_2_USAGE))
    if "read" not in answered:
        return _call("read", "cat memo.txt", TURN_2_USAGE)
    if "log" not in answered:
        return _call("log", "git log --oneline -1", TURN_2_USAGE)
    note = "HELIOTROPE" if "HELIOTROPE" in answered["read"] else "nothing"
    return render(ScriptTurn(text=f"The word was HELIOTROPE; the note says {note}; last commit: {answered['log']}",
                             usage=TURN_2_USAGE))


def test_a_conversation_resumes_one_codex_session_turn_by_turn(tmp_path):
    codex = require_codex()
    write_skill(tmp_path / "skills", "greeter", "Greets people. Use when asked to greet.", "Say HELLO-FROM-SKILL first.")
    (tmp_path / "omk.yaml").write_text("target: codex:gpt-5\nskill: skills/greeter\n", encoding="utf-8")
    sample = {
        "sample_id": "two-turns",
        "mocks": [{"tool": "Bash", "match": {"command_glob": "*git log*"}, "return": "abc1234 feat: the mocked commit"}],
        "assertions": [{"type": "not_contains", "value": "no earlier turn"}, {"type": "file_contains", "path": "memo.txt",
                                                                            "value": "HELIOTROPE"}],
        "turns": [
            {"prompt": "Remember the word HELIOTROPE and write it down.",
             "assertions": [{"type": "contains", "value": "noted"}, {"type": "tools_called", "values": ["Bash"]}]},
            {"prompt": "Which word was it, and what is the last commit?",
             "assertions": [{"type": "contains", "value": "the note says HELIOTROPE"},
                            {"type": "contains", "value": "abc1234 feat: the mocked commit"},
                            {"type": "mock_hit", "value": "Bash:1"}]},
        ],
    }
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    out = tmp_path / "run"
    with ModelServer(conversation_model) as fake:
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=tmp_path, env=env)
        posts = [r for r in fake.requests if r.method == "POST"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    later = [r for r in posts if "Which word" in _said(r, "user")[-1]]
    assert len(later) == 3
    assert len(posts) == 5
    for request in later:  # every turn-2 request carries turn 1's exchange, and the skill is still listed
        assert _said(request, "user")[0] == "Remember the word HELIOTROPE and write it down."
        assert "noted" in _said(request, "assistant")
        assert "memo" in tool_outputs(request)
        assert "greeter" in request.body.decode()
    result = json.loads((out / "report.json").read_text(encoding="utf-8"))["results"][0]
    assert result["status"] == "ok" and result["passed"], proc.stdout
    first, second = result["turns"]
    assert [a["passed"] for a in first["assertions"]] == [True, True, True, True]
    assert [a["passed"] for a in second["assertions"]] == [True, True, True, True, True]
    assert first["trace"]["session_id"]
    assert first["trace"]["session_id"] == second["trace"]["session_id"]
    assert [(c["tool"], c["mocked"]) for c in first["trace"]["tool_calls"]] == [("Bash", False)]
    read, log = second["trace"]["tool_calls"]
    assert not read["mocked"]
    assert read["output"].strip() == "HELIOTROPE"  # the file turn 1 wrote, in the same folder
    assert log["mocked"]
    assert log["output"] == "abc1234 feat: the mocked commit"
    assert second["trace"]["mock_stats"]["per_mock"] == {"Bash:1": 1}
    assert first["trace"]["tokens"]["input"] == 20
    assert first["trace"]["tokens"]["output"] == 10
    assert second["trace"]["tokens"]["input"] == 300
    assert second["trace"]["tokens"]["output"] == 150  # turn 2's own
    assert result["trace"]["tokens"]["input"] == 320
    assert [c["path"] for c in second["trace"]["workspace"]["created"]] == ["memo.txt"]


PATCH = (
    "*** Begin Patch\n*** Update File: notes.txt\n@@\n-old line\n+new line\n"
    "*** Add File: added.txt\n+ADDED-CONTENT\n*** End Patch\n"
)


def patch_model(request: Request) -> dict[str, Any]:
    """Edit a file and add one with `apply_patch`, then say what came back."""
    offered = {t.get("name"): t.get("type") for t in request.json.get("tools") or []}
    assert offered.get("apply_patch") == "custom", offered
    answered = tool_outputs(request)
    if "patch" not in answered:
        return custom_call_reply("apply_patch", PATCH, call_id="patch")
    return text_reply(f"patch said: {answered['patch']}")


def test_apply_patch_goes_through_the_hook_runs_unmocked_and_is_answered_by_a_mock(tmp_path):
    codex = require_codex()
    (tmp_path / "fixtures" / "notes").mkdir(parents=True)
    (tmp_path / "fixtures" / "notes" / "notes.txt").write_text("old line\n", encoding="utf-8")
    samples = [
        {"sample_id": "patched", "prompt": "Update the notes.", "workspace": "fixtures/notes",
         "assertions": [{"type": "file_contains", "path": "notes.txt", "value": "new line"},
                        {"type": "file_contains", "path": "added.txt", "value": "ADDED-CONTENT"},
                        {"type": "files_changed", "required": ["notes.txt", "added.txt"]},
                        {"type": "tools_called", "values": ["apply_patch"]}]},
        {"sample_id": "mocked", "prompt": "Update the notes.", "workspace": "fixtures/notes", "mocksStrict": True,
         "mocks": [{"tool": "apply_patch", "match": {"input_contains": "Update File: notes.txt"}, "return": "PATCH-MOCKED"}],
         "assertions": [{"type": "contains", "value": "PATCH-MOCKED"}, {"type": "mock_hit", "value": "apply_patch:1"},
                        {"type": "file_contains", "path": "notes.txt", "value": "old line"},
                        {"type": "file_exists", "path": "added.txt", "not": True}]},
    ]
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    out = tmp_path / "run"
    with ModelServer(patch_model) as fake:  # a model Codex's catalogue offers apply_patch to
        env = {"OMK_CODEX": codex, "OPENAI_BASE_URL": fake.openai_url, "OPENAI_API_KEY": KEY, "HOME": str(tmp_path)}
        proc = omk_eval(["eval-samples.yaml", "--target", "codex:gpt-5.5", "--out", str(out)], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {r["sample_id"]: r for r in json.loads((out / "report.json").read_text(encoding="utf-8"))["results"]}
    assert all(r["passed"] for r in results.values()), proc.stdout
    ran = results["patched"]["trace"]
    (call,) = ran["tool_calls"]
    assert call["tool"] == "apply_patch"
    assert not call["mocked"]
    assert call["input"] == {"command": PATCH}
    changes = [line.split(" ", 1) for line in call["output"].splitlines()]  # the file_change item: `kind path` a line
    assert [(kind, Path(path).name) for kind, path in changes] == [("add", "added.txt"), ("update", "notes.txt")]
    assert sorted(c["path"] for c in ran["workspace"]["created"] + ran["workspace"]["changed"]) == ["added.txt", "notes.txt"]
    mocked = results["mocked"]
    (blocked,) = mocked["trace"]["tool_calls"]
    assert blocked["mocked"]
    assert blocked["mock_key"] == "apply_patch:1"
    assert blocked["output"] == "PATCH-MOCKED"
    assert mocked["output"].startswith("patch said: Command blocked by PreToolUse hook: ")  # the model read the mock's answer
    assert not (mocked["trace"].get("workspace") or {}).get("changed")


def test_a_retried_turn_resumes_from_the_last_good_turn(tmp_path, monkeypatch):
    """A failed attempt of turn 2 leaves nothing in the session the retry resumes, and the
    conversation's folder goes with its last turn."""
    monkeypatch.setenv("OMK_CODEX", require_codex())
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    the_sample = Sample(sample_id="retry", prompt="", base_dir=tmp_path)
    sandbox = MockSandbox.for_sample(the_sample)

    def model(request: Request) -> Any:
        asked = _said(request, "user")[-1]
        if asked == "FAILED-ATTEMPT-QUESTION":
            return HttpError(400, error_body(400, "refused once"))
        return render(ScriptTurn(text="SECOND-ANSWER" if asked == "SECOND-QUESTION" else "FIRST-ANSWER"))

    async def turns(target: CodexTarget) -> tuple[Path, TargetResult]:
        sandbox.start_turn()
        await target.run(the_sample, "FIRST-QUESTION", Session(0, 2, sandbox))
        folder = next(iter(target._conversations.values())).root
        sandbox.start_turn()
        with pytest.raises(TargetError, match="refused once"):
            await target.run(the_sample, "FAILED-ATTEMPT-QUESTION", Session(1, 2, sandbox))
        sandbox.retry_turn()
        return folder, await target.run(the_sample, "SECOND-QUESTION", Session(1, 2, sandbox))

    with ModelServer(model) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        folder, second = asyncio.run(turns(CodexTarget("gpt-5", "codex:gpt-5", TargetSettings())))
        retried = fake.requests[-1]
    assert _said(retried, "user") == ["FIRST-QUESTION", "SECOND-QUESTION"]
    assert _said(retried, "assistant") == ["FIRST-ANSWER"]
    assert second.output == "SECOND-ANSWER"
    assert second.trace.session_id
    assert not folder.exists()
