"""Read `codex exec --json` into omk's trace.

The output is one JSON event per line: `thread.started` (the session id), `turn.started`,
`item.started` / `item.completed` (an `agent_message` with text, a `command_execution` with its
command, output and exit code, a `file_change`, an `mcp_tool_call`, a `web_search`, a
`reasoning`, an `error` notice), `turn.completed` (token usage) or `turn.failed`, and `error`.
A call omk's hook blocked (a mock's answer, a strict denial) never runs, so it has no item: the
hook's records are the list of calls, and each call the hook let run takes the next item that ran.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from omk.llm.pricing import cost_usd
from omk.records import MockStats, Tokens, ToolCall, Trace

RAN = {"command_execution", "file_change", "mcp_tool_call", "web_search"}


@dataclass(slots=True)
class CodexRun:
    thread_id: str | None = None
    messages: list[str] = field(default_factory=list)
    ran: list[dict[str, Any]] = field(default_factory=list)  # items of a tool that ran, in order
    usage: dict[str, Any] | None = None  # the last turn.completed's
    turns: int = 0
    failure: str | None = None  # turn.failed's message
    errors: list[str] = field(default_factory=list)  # `error` events (reconnects, …)

    @property
    def output(self) -> str | None:
        return self.messages[-1] if self.messages else None


def parse_events(data: bytes) -> CodexRun:
    run = CodexRun()
    for raw in data.splitlines():
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        found = event.get("item")
        item: dict[str, Any] = found if isinstance(found, dict) else {}
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            run.thread_id = event["thread_id"]
        elif kind == "item.completed" and item.get("type") == "agent_message":
            run.messages.append(str(item.get("text") or ""))
        elif kind == "item.completed" and item.get("type") in RAN:
            run.ran.append(item)
        elif kind == "turn.completed":
            run.turns += 1
            run.usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
        elif kind == "turn.failed":
            error = event.get("error")
            run.failure = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "error" and event.get("message"):
            run.errors.append(str(event["message"]))
    return run


def _ran_call(item: dict[str, Any]) -> ToolCall:
    kind = item.get("type")
    if kind == "command_execution":
        code = item.get("exit_code")
        return ToolCall("Bash", {"command": item.get("command")}, item.get("aggregated_output"), False, None,
                        isinstance(code, int) and code != 0)
    if kind == "mcp_tool_call":
        name = f"mcp__{item.get('server')}__{item.get('tool')}"
        return ToolCall(name, item.get("arguments"), item.get("result"), False, None, item.get("status") == "failed")
    if kind == "file_change":  # an apply_patch that ran: what it changed, one `kind path` a line
        listed = item.get("changes")
        changes: list[Any] = listed if isinstance(listed, list) else []
        done = "\n".join(f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict))
        return ToolCall("apply_patch", {"changes": changes}, done, False, None, item.get("status") == "failed")
    return ToolCall(str(kind), {k: v for k, v in item.items() if k not in ("id", "type", "status")}, None, False, None,
                    item.get("status") == "failed")


def tool_calls(run: CodexRun, records: list[dict[str, Any]]) -> list[ToolCall]:
    """The hook's calls in order; an allowed call's output is that of the next item that ran, and
    a call a mock with `run: true` let run keeps that mock's key (its hit, as under claude:).
    Items the hook never saw (a tool Codex answers itself) follow."""
    ran = list(run.ran)
    calls = []
    for record in records:
        decision = record.get("decision")
        tool, call_input = str(record.get("tool")), record.get("input")
        if decision in ("mock", "deny"):
            mocked = decision == "mock"
            calls.append(ToolCall(tool, call_input, record.get("output"), mocked, record.get("mock_key") if mocked else None,
                                  not mocked, "mock" if mocked else "denied"))
            continue
        item = _ran_call(ran.pop(0)) if ran else None
        key = record.get("mock_key")  # set when a mock with `run: true` let the real tool run
        calls.append(ToolCall(tool, call_input, item.output if item else None, False, key, bool(item and item.is_error), "ran"))
    return calls + [_ran_call(item) for item in ran]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _since(usage: dict[str, Any], before: dict[str, Any], key: str) -> int | None:
    """This turn's count: a resumed thread reports its totals, earlier turns included."""
    now, earlier = _int(usage.get(key)), _int(before.get(key))
    if now is None or earlier is None or earlier > now:
        return now
    return now - earlier


def build_trace(
    run: CodexRun, calls: list[ToolCall], price: tuple[float, float] | None, before: dict[str, Any] | None = None, mock_stats: MockStats | None = None
) -> Trace:
    """The trace of one `codex exec`, its cost from `price` (the CLI reports none); `before` is the thread's token totals after the turns
    already run (a resumed conversation), which this turn's counts leave out."""
    usage, before = run.usage or {}, before or {}
    tokens_in, tokens_out = _since(usage, before, "input_tokens"), _since(usage, before, "output_tokens")
    return Trace(
        turns=run.turns or None,
        tool_calls=tuple(calls),
        cost_usd=cost_usd(price, tokens_in, tokens_out),
        tokens=Tokens.of({
            "input": tokens_in,
            "output": tokens_out,
            "cache_read": _since(usage, before, "cached_input_tokens"),
        }),
        session_id=run.thread_id,
        mock_stats=mock_stats,
    )


# Codex's answer to a call of a tool it does not offer (`unsupported call: Skill`,
# `unsupported custom tool call: apply_patch`).
UNSUPPORTED_CALL = re.compile(r"unsupported (?:custom tool )?call\b")


def unsupported_calls(rollout: bytes) -> list[ToolCall]:
    """The calls of the last turn in a Codex session file (`rollout-*.jsonl`) that Codex answered
    `unsupported call: NAME` (or `unsupported custom tool call: NAME`): a tool this Codex and model do not offer (`Skill`, or `apply_patch`
    for a model not given it). No hook and no `--json` event sees them; the session file does
    (`response_item` lines: a `function_call` or `custom_tool_call`, its output joined on
    `call_id`). A turn starts at its `turn_context` line."""
    items: list[dict[str, Any]] = []
    for raw in rollout.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or not isinstance(payload := line.get("payload"), dict):
            continue
        if line.get("type") == "turn_context":
            items = []
        elif line.get("type") == "response_item":
            items.append(payload)
    outputs = {
        p.get("call_id"): p.get("output")
        for p in items
        if p.get("type") in ("function_call_output", "custom_tool_call_output")
    }
    calls = []
    for p in items:
        if p.get("type") not in ("function_call", "custom_tool_call"):
            continue
        output = outputs.get(p.get("call_id"))
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False) if output is not None else ""
        if UNSUPPORTED_CALL.match(text):
            calls.append(ToolCall(str(p.get("name") or ""), _arguments(p), text, False, None, True, "unsupported"))
    return calls


def _arguments(payload: dict[str, Any]) -> Any:
    """A function call's arguments (JSON text, read), or a custom tool call's input text."""
    if payload.get("type") == "custom_tool_call":
        return payload.get("input")
    arguments = payload.get("arguments")
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return arguments
