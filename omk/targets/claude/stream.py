"""Read `claude -p --output-format stream-json --verbose` into omk's trace.

The stream is one JSON object per line: a `system`/`init` line (session id, model, tools, the
skills Claude Code found), `assistant` lines (text and `tool_use` blocks), `user` lines (the
`tool_result` of each call), and a closing `result` line (the final text, `is_error`,
`num_turns`, `total_cost_usd`, token usage, durations, stop reason). Subagents' lines are read
the same way, so their tool calls are in the trace too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from omk.domain.messages import Message, assistant_message, tool_message
from omk.records import CallOutcome, MockStats, Tokens, ToolCall, Trace
from omk.targets.mocks import as_text


@dataclass(slots=True)
class Use:
    """One `tool_use` block and what came back for it."""

    id: str
    tool: str
    input: Any
    result: str | None = None
    is_error: bool = False


@dataclass(slots=True)
class StreamRun:
    init: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    uses: list[Use] = field(default_factory=list)
    steps: list[tuple[str, list[Use]]] = field(default_factory=list)  # (text, calls) per assistant message
    bad_lines: int = 0

    @property
    def session_id(self) -> str | None:
        value = (self.result or {}).get("session_id") or self.init.get("session_id")
        return value if isinstance(value, str) else None

    def last_text(self) -> str:
        return next((text for text, _ in reversed(self.steps) if text), "")


def result_text(content: Any) -> str:
    """A tool_result's content: a string, or blocks whose text parts are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def parse_stream(data: bytes) -> StreamRun:
    run = StreamRun()
    by_id: dict[str, Use] = {}
    for raw in data.splitlines():
        line = raw.strip()
        if not line.startswith(b"{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            run.bad_lines += 1
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        message = found if isinstance(found := event.get("message"), dict) else {}
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)] if isinstance(message.get("content"), list) else []
        if kind == "system" and event.get("subtype") == "init":
            run.init = event
        elif kind == "result":
            run.result = event
        elif kind == "assistant":
            _assistant(run, by_id, blocks)
        elif kind == "user":
            for block in blocks:
                use = by_id.get(str(block.get("tool_use_id")))
                if block.get("type") == "tool_result" and use is not None:
                    use.result = result_text(block.get("content"))
                    use.is_error = bool(block.get("is_error"))
    return run


def _assistant(run: StreamRun, by_id: dict[str, Use], blocks: list[dict[str, Any]]) -> None:
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    calls = []
    for block in blocks:
        if block.get("type") == "tool_use":
            use = Use(id=str(block.get("id")), tool=str(block.get("name") or ""), input=block.get("input"))
            by_id[use.id] = use
            run.uses.append(use)
            calls.append(use)
    if text or calls:
        run.steps.append((text, calls))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None


def tool_calls(run: StreamRun, records: list[dict[str, Any]]) -> list[ToolCall]:
    """Every call in order. The hook's record says whether a mock answered it (its output is the
    mock's value, a success), it was denied, or it ran; a call the hook never saw was refused by
    Claude Code itself before any hook (`outcome`, omk.records.ToolCall)."""
    by_id = {r.get("tool_use_id"): r for r in records if r.get("tool_use_id")}
    calls = []
    for use in run.uses:
        record = by_id.get(use.id)
        decision = record.get("decision") if record is not None else None
        if record is not None and decision == "mock":
            calls.append(ToolCall(use.tool, use.input, record.get("output"), True, record.get("mock_key"), False, "mock"))
        elif record is not None and decision == "deny":
            calls.append(ToolCall(use.tool, use.input, record.get("output"), False, None, True, "denied"))
        else:
            outcome = "ran" if record is not None else unheard_outcome(use.tool, use.result, use.is_error)
            key = record.get("mock_key") if record is not None else None  # a mock with `run: true` let it run
            calls.append(ToolCall(use.tool, use.input, use.result, False, key, use.is_error, outcome))
    return calls


# Claude Code's answer to a call of a tool it does not offer in this session.
NO_SUCH_TOOL = re.compile(r"<tool_use_error>\s*Error: No such tool available")


def unheard_outcome(tool: str, result: Any, is_error: bool) -> CallOutcome:
    """Who answered a call omk's hook never saw: Claude Code refusing a tool it does not offer
    (`unsupported`) or refusing the call by a check of its own before any hook (`refused`: a file
    not read yet, a file that does not exist, an input its schema rejects); a bookkeeping tool the
    hook lets run without a record (loading a skill, the to-do list, a subagent) `ran`."""
    text = result if isinstance(result, str) else ""
    if is_error and NO_SUCH_TOOL.search(text):
        return "unsupported"
    if is_error and "<tool_use_error>" in text:
        return "refused"
    return "ran"


def build_trace(run: StreamRun, calls: list[ToolCall], mock_stats: MockStats | None = None, notes: Sequence[str] = ()) -> Trace:
    result = run.result or {}
    usage = found if isinstance(found := result.get("usage"), dict) else {}
    return Trace(
        turns=_int(result.get("num_turns")),
        tool_calls=tuple(calls),
        cost_usd=_number(result.get("total_cost_usd")),
        tokens=Tokens.of({
            "input": _int(usage.get("input_tokens")),
            "output": _int(usage.get("output_tokens")),
            "cache_read": _int(usage.get("cache_read_input_tokens")),
            "cache_creation": _int(usage.get("cache_creation_input_tokens")),
        }),
        api_latency_ms=_number(result.get("duration_api_ms")),
        stop_reason=result.get("stop_reason") if isinstance(result.get("stop_reason"), str) else None,
        session_id=run.session_id,
        mock_stats=mock_stats,
        notes=tuple(notes),
    )


def history(run: StreamRun, calls: list[ToolCall], output: str) -> list[Message]:
    """The turn as neutral messages (omk.domain.messages): each assistant step with its calls and
    their results, then the final answer."""
    answered = {id(use): call for use, call in zip(run.uses, calls, strict=True)}
    messages: list[Message] = []
    for text, uses in run.steps:
        if not uses:
            continue
        messages.append(assistant_message(text, [(u.id, u.tool, u.input) for u in uses]))
        for use in uses:
            call = answered[id(use)]
            messages.append(tool_message(use.id, use.tool, as_text(call.output), call.is_error))
    messages.append(assistant_message(output))
    return messages
