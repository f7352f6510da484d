"""`omk sample --from-run` on a recorded conversation (`turns:`), with the real Claude Code CLI
against the scripted loopback model: the run's conversation is written back as one (its turns'
prompts, one sandbox of mocks for all their calls with a `return_seq` running across turns, each
turn its own path and answer) and replays to a full pass. The scripted model reads the
conversation by role and tool-use ids, never by position."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml
from claude_support import require_claude
from cli_support import run_omk

from omk.records.document import read_document
from omk.testing import ModelServer, Request
from omk.testing.anthropic import text_reply, tool_use_reply

KEY = "sk-ant-e2e-turns-0a9b8c7d6e5f"


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        out += [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return out


def _answered_ids(messages: list[dict[str, Any]]) -> set[str]:
    return {
        b.get("tool_use_id")
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }


def model(request: Request) -> dict[str, Any]:
    body = request.json or {}
    messages = body.get("messages") or []
    said = " ".join(_user_texts(messages))
    if not body.get("tools") or "ORDER-CHAT" not in said:  # a side request of the CLI
        return text_reply("ok")
    turn = 2 if "second question" in said else 1
    if not any(str(i).startswith(f"turn{turn}_") for i in _answered_ids(messages)):
        return tool_use_reply([("Bash", {"command": "order-status A1001", "description": "状态 look up"})], id_prefix=f"turn{turn}_")
    result = next(
        b for m in messages if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"] if isinstance(b, dict) and b.get("tool_use_id", "").startswith(f"turn{turn}_")
    )
    text = str(result.get("content"))
    status = re.search(r"STATUS-(\w+)", text)
    return text_reply(f"Turn {turn}: the order is {status.group(1) if status else 'unknown'}.")


SAMPLE = {
    "sample_id": "order-chat",
    "mocks": [{"tool": "Bash", "match": {"command_glob": "order-status*"}, "return_seq": ["STATUS-packed"], "return": "STATUS-shipped"}],
    "turns": [
        {"prompt": "ORDER-CHAT: where is order A1001?", "assertions": [{"type": "contains", "value": "packed"}]},
        {"prompt": "ORDER-CHAT second question: and now?", "assertions": [{"type": "contains", "value": "shipped"}]},
    ],
}


def omk(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=("ANTHROPIC_", "OMK_", "CLAUDE_"), columns=200, timeout=400)


def test_a_recorded_conversation_becomes_a_conversation_that_replays_to_a_full_pass(tmp_path):
    claude = require_claude()
    project = tmp_path / "project"
    project.mkdir()
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [SAMPLE]}), encoding="utf-8")
    (project / "omk.yaml").write_text("target: claude:sonnet\nmax_turns: 6\ntimeout: 200\n", encoding="utf-8")
    env = {"OMK_CLAUDE": claude, "ANTHROPIC_API_KEY": KEY, "HOME": str(tmp_path)}

    def run(samples: str, out: str) -> subprocess.CompletedProcess:
        with ModelServer(model) as fake:
            return omk(["eval", samples, "--out", out, "--no-judge", "--no-cache"], project, {**env, "ANTHROPIC_BASE_URL": fake.url})

    first = run("eval-samples.yaml", "run1")
    assert first.returncode == 0, first.stdout + first.stderr
    made = omk(["sample", "--from-run", "run1", "--output", "recorded.yaml"], project, env)
    assert made.returncode == 0, made.stderr
    assert "not recorded" not in made.stderr
    written = yaml.safe_load((project / "recorded.yaml").read_text(encoding="utf-8"))["samples"]
    (sample,) = written
    assert "prompt" not in sample
    assert [t["prompt"] for t in sample["turns"]] == [t["prompt"] for t in SAMPLE["turns"]]
    (mock,) = sample["mocks"]  # the same call in both turns: one mock, its answers in order
    assert mock["return_seq"] == ["STATUS-packed", "STATUS-shipped"]
    assert sample["mocksStrict"] is True
    assert [a["reference"] for t in sample["turns"] for a in t["assertions"] if a["type"] == "rouge_n_min"] == [
        "Turn 1: the order is packed.",
        "Turn 2: the order is shipped.",
    ]

    again = run("recorded.yaml", "run2")
    assert again.returncode == 0, again.stdout + again.stderr
    (replayed,) = read_document(project / "run2").results
    assert replayed.passed
    assert [t.passed for t in replayed.turns] == [True, True]
    assert [t.output for t in replayed.turns] == ["Turn 1: the order is packed.", "Turn 2: the order is shipped."]
    assert not [n for n in replayed.trace.notes if "drift" in n]
