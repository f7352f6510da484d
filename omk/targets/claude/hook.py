"""Claude Code's PreToolUse hook for omk: answers tool calls from the sample's mocks.

Claude Code starts it once per tool call (`<python> -I hook.py <state dir>`) with the call as
JSON on stdin. It answers through the same `MockSandbox` as the API targets:

- a matching mock → the call is denied with the reason
  `[mock] simulated tool output — treat as successful result:\\n<result>` (the real tool never
  runs; the model reads the mock's output, as in omk 0.54);
- no match under `mocksStrict` → denied with the sandbox's denial text;
- no match otherwise → allowed: the real tool runs in the sample's working folder;
- a matching mock with `run: true` → allowed, counted as that mock's hit: the real tool runs (a
  recorded Read of a file carried over from the recorded run's workspace, so that Claude Code
  knows the file was read when a recorded Edit of it follows);
- Claude Code's own bookkeeping tools (loading a skill, searching deferred tools, the to-do list,
  starting a subagent) run unless a mock names them: they touch nothing outside the session.

`<state dir>/mocks.json` holds `{mocks, strict, base_dir}`; `<state dir>/state.json` holds the
mock totals (so `return_seq` goes on across calls and turns) and one record per answered call,
updated under a file lock because Claude Code may run several calls at once. If the hook itself
fails it exits 2, which makes Claude Code block the call: nothing runs unanswered.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run by path: make the omk package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from omk.targets.mocks import MockCounter, MockSandbox, ToolAnswer  # noqa: E402

MOCK_PREFIX = "[mock] simulated tool output — treat as successful result:\n"
BOOKKEEPING_TOOLS = frozenset({"Skill", "ToolSearch", "TodoWrite", "Task", "Agent"})
MOCKS_FILE = "mocks.json"
STATE_FILE = "state.json"


@contextlib.contextmanager
def locked_state(path: Path) -> Iterator[dict[str, Any]]:
    """The state file's content, written back when the block ends, under an exclusive lock."""
    with open(path, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        state = json.loads(handle.read() or "{}")
        yield state
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(state, ensure_ascii=False))


def _decision(decision: str, reason: str | None = None) -> dict[str, Any]:
    output: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    if reason is not None:
        output["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": output}


def decide(event: dict[str, Any], state_dir: Path) -> dict[str, Any]:
    """The hook's JSON answer for one PreToolUse event; records the call in the state file."""
    tool = str(event.get("tool_name") or "")
    call_input = event.get("tool_input")
    config = json.loads((state_dir / MOCKS_FILE).read_text(encoding="utf-8"))
    with locked_state(state_dir / STATE_FILE) as state:
        sandbox = MockSandbox(config["mocks"], strict=bool(config["strict"]), base_dir=Path(config["base_dir"]))
        sandbox.totals = MockCounter.of(state.get("totals") or {})
        index = sandbox.find(tool, call_input)
        runs = index is not None and config["mocks"][index].get("run") is True  # the real tool answers, as recorded
        answer: ToolAnswer | None = sandbox.match(tool, call_input)
        if answer is None and tool in BOOKKEEPING_TOOLS:
            return _decision("allow")
        if answer is None:
            sandbox.count_miss()
            answer = sandbox.denial(tool) if sandbox.strict else None
        record = {"tool_use_id": event.get("tool_use_id"), "tool": tool, "input": call_input}
        if answer is None:
            record.update(decision="allow")
        elif runs:
            record.update(decision="allow", mock_key=answer.mock_key)
        else:
            record.update(decision="mock" if answer.mocked else "deny", output=answer.output, mock_key=answer.mock_key)
        state.setdefault("calls", []).append(record)
        state["totals"] = sandbox.totals.to_json()
    if answer is None or runs:
        return _decision("allow")
    return _decision("deny", MOCK_PREFIX + answer.text if answer.mocked else answer.text)


def main(argv: list[str]) -> int:
    try:
        event = json.loads(sys.stdin.read())
        reply = decide(event, Path(argv[1]))
    except Exception as exc:  # noqa: BLE001 - any failure must block the call, never let it run
        sys.stderr.write(f"[omk] the mock hook failed, so the call was blocked: {type(exc).__name__}: {exc}\n")
        return 2
    sys.stdout.write(json.dumps(reply, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
