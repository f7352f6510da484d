"""Codex's PreToolUse hook for omk: answers tool calls from the sample's mocks.

Codex starts it once per tool call (`<python> -I hook.py <state dir>`) with the call as JSON on
stdin, in the same shape as Claude Code's (`tool_name`, `tool_input`, `tool_use_id`); a shell
call is named `Bash` with `{"command": …}`. The decision is Claude Code's hook's
(omk.targets.claude.hook): a mock's answer or a strict denial blocks the call with the text the
model reads; otherwise the hook prints nothing, which lets the call run (Codex refuses an
explicit `allow`). If the hook itself fails it exits 2, which makes Codex block the call.

Codex has no tool for loading a skill: the model reads the skill's files with the shell. A plain
read (`cat`, `head`, `sed -n`, `nl`) of files under `$CODEX_HOME/skills/`, with nothing else in
the command, runs unless a mock names it, even under `mocksStrict`, as Claude Code's `Skill` tool
does: it touches nothing outside the session.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run by path: make the omk package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from omk.targets.claude.hook import MOCKS_FILE, STATE_FILE, decide, locked_state  # noqa: E402
from omk.targets.mocks import MockSandbox  # noqa: E402

READERS = frozenset({"cat", "head", "sed", "nl"})
SHELL_SIGNS = re.compile(r"[;&|<>`()\n]|\$\(")


def reads_a_skill(command: Any, skills: Path) -> bool:
    """`command` only reads files under `skills` (see the module's text)."""
    if not isinstance(command, str) or SHELL_SIGNS.search(command):
        return False
    try:
        words = shlex.split(command.replace("$CODEX_HOME", str(skills.parent)).replace("${CODEX_HOME}", str(skills.parent)))
    except ValueError:
        return False
    paths = [w for w in words[1:] if not w.startswith("-") and not re.fullmatch(r"\d+(,\d+)?p", w)]
    if not words or words[0] not in READERS or not paths:
        return False
    return all(Path(p).resolve().is_relative_to(skills.resolve()) for p in paths)


def skill_read(event: dict[str, Any], state_dir: Path) -> bool:
    """Let an unmocked read of an installed skill run, and record it."""
    home = os.environ.get("CODEX_HOME")
    call_input = event.get("tool_input")
    command = call_input.get("command") if isinstance(call_input, dict) else None
    if not home or event.get("tool_name") != "Bash" or not reads_a_skill(command, Path(home) / "skills"):
        return False
    config = json.loads((state_dir / MOCKS_FILE).read_text(encoding="utf-8"))
    sandbox = MockSandbox(config["mocks"], strict=bool(config["strict"]), base_dir=Path(config["base_dir"]))
    if sandbox.find("Bash", call_input) is not None:
        return False
    with locked_state(state_dir / STATE_FILE) as state:
        state.setdefault("calls", []).append(
            {"tool_use_id": event.get("tool_use_id"), "tool": "Bash", "input": call_input, "decision": "allow"}
        )
    return True


def main(argv: list[str]) -> int:
    try:
        event = json.loads(sys.stdin.read())
        if skill_read(event, Path(argv[1])):
            return 0
        reply = decide(event, Path(argv[1]))
    except Exception as exc:  # noqa: BLE001 - any failure must block the call, never let it run
        sys.stderr.write(f"[omk] the mock hook failed, so the call was blocked: {type(exc).__name__}: {exc}\n")
        return 2
    if reply["hookSpecificOutput"]["permissionDecision"] != "allow":
        sys.stdout.write(json.dumps(reply, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
