"""Codex's PreToolUse hook for omk: answers tool calls from the sample's mocks.

Codex starts it once per tool call (`<python> -I hook.py <state dir>`) with the call as JSON on
stdin, in the same shape as Claude Code's (`tool_name`, `tool_input`, `tool_use_id`); a shell
call is named `Bash` with `{"command": …}`. The decision is Claude Code's hook's
(omk.targets.claude.hook): a mock's answer or a strict denial blocks the call with the text the
model reads; otherwise the hook prints nothing, which lets the call run (Codex refuses an
explicit `allow`). If the hook itself fails it exits 2, which makes Codex block the call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run by path: make the omk package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from omk.targets.claude.hook import decide  # noqa: E402


def main(argv: list[str]) -> int:
    try:
        event = json.loads(sys.stdin.read())
        reply = decide(event, Path(argv[1]))
    except Exception as exc:  # noqa: BLE001 - any failure must block the call, never let it run
        sys.stderr.write(f"[omk] the mock hook failed, so the call was blocked: {type(exc).__name__}: {exc}\n")
        return 2
    if reply["hookSpecificOutput"]["permissionDecision"] != "allow":
        sys.stdout.write(json.dumps(reply, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
