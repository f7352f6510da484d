"""Read a trace written by someone else (a replay file, a command's reply) into `Trace`; the
response cache and resume read their stored traces back through it too.

Our field names (those of report.json) are primary; omk 0.54's camelCase names are accepted too, so recorded
0.54 outputs replay unchanged.
"""

from __future__ import annotations

import math
from typing import Any

from omk.core.errors import InputError
from omk.records import CALL_OUTCOMES, MockStats, Tokens, ToolCall, Trace, WorkspaceChanges
from omk.records.result import EMPTY_TRACE
from omk.records.wire import convert

_ALIASES = {
    "turns": ("turns", "numTurns", "num_turns"),
    "tool_calls": ("tool_calls", "toolCalls"),
    "cost_usd": ("cost_usd", "costUSD"),
    "latency_ms": ("latency_ms", "durationMs", "duration_ms"),
    "mock_stats": ("mock_stats", "mockStats"),
    "api_latency_ms": ("api_latency_ms", "durationApiMs", "duration_api_ms"),
    "stop_reason": ("stop_reason", "stopReason"),
    "session_id": ("session_id", "sessionId"),
}
# Prompt-cache token counts: ours inside `tokens`, 0.54's camelCase at the top level.
_CACHE_TOKENS = {"cache_read": "cacheReadTokens", "cache_creation": "cacheCreationTokens"}


class TraceFormatError(ValueError):
    """A trace field has the wrong shape; the message names the field."""


def _first(data: dict[str, Any], name: str) -> Any:
    for key in _ALIASES[name]:
        if key in data and data[key] is not None:
            return data[key]
    return None


def _number(value: Any, field: str, *, integer: bool = False) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise TraceFormatError(f"trace.{field} must be a non-negative number (got {value!r})")
    if integer and int(value) != value:
        raise TraceFormatError(f"trace.{field} must be a whole number (got {value!r})")
    return int(value) if integer else value


def _tool_call(call: dict[str, Any]) -> ToolCall:
    """One call of a program's trace (its `tool` or `name` checked to be text)."""
    return ToolCall(
        tool=call.get("tool") or call["name"],
        input=call.get("input"),
        output=call.get("output"),
        mocked=bool(call.get("mocked", False)),
        mock_key=call.get("mock_key"),
        is_error=bool(call.get("is_error", call.get("success") is False)),
        outcome=call["outcome"] if call.get("outcome") in CALL_OUTCOMES else None,
    )


def parse_trace(data: Any) -> Trace:
    if data is None:
        return EMPTY_TRACE
    if not isinstance(data, dict):
        raise TraceFormatError("trace must be an object")
    turns = _first(data, "turns")
    if isinstance(turns, list):  # a list of turn records: count them
        turns = len(turns)
    calls_raw = _first(data, "tool_calls") or []
    if not isinstance(calls_raw, list):
        raise TraceFormatError("trace.tool_calls must be a list")
    calls = []
    for i, call in enumerate(calls_raw):
        if not isinstance(call, dict) or not isinstance(call.get("tool") or call.get("name"), str):
            raise TraceFormatError(f"trace.tool_calls[{i}] must be an object with a string 'tool'")
        calls.append(_tool_call(call))
    if not isinstance(tokens_raw := data.get("tokens") or {}, dict):
        raise TraceFormatError("trace.tokens must be an object")
    tokens = {
        "input": _number(tokens_raw.get("input", data.get("inputTokens")), "tokens.input", integer=True),
        "output": _number(tokens_raw.get("output", data.get("outputTokens")), "tokens.output", integer=True),
    }
    for name, legacy in _CACHE_TOKENS.items():
        if tokens_raw.get(name, data.get(legacy)) is not None:
            tokens[name] = _number(tokens_raw.get(name, data.get(legacy)), f"tokens.{name}", integer=True)
    stats_raw = _first(data, "mock_stats")
    stats = None
    if stats_raw is not None:
        if not isinstance(stats_raw, dict):
            raise TraceFormatError("trace.mock_stats must be an object")
        per_mock = stats_raw.get("per_mock", stats_raw.get("perMock")) or {}
        if not isinstance(per_mock, dict):
            raise TraceFormatError("trace.mock_stats.per_mock must be an object")
        stats = MockStats(
            hits=_number(stats_raw.get("hits", 0), "mock_stats.hits", integer=True),
            misses=_number(stats_raw.get("misses", 0), "mock_stats.misses", integer=True),
            per_mock={str(k): _number(v, f"mock_stats.per_mock.{k}", integer=True) for k, v in per_mock.items()},
        )
    return Trace(
        turns=_number(turns, "turns", integer=True),
        tool_calls=tuple(calls),
        cost_usd=_number(_first(data, "cost_usd"), "cost_usd"),
        latency_ms=_number(_first(data, "latency_ms"), "latency_ms"),
        tokens=Tokens.of(tokens),
        mock_stats=stats,
        notes=tuple(str(n) for n in notes_raw) if isinstance(notes_raw := data.get("notes"), list) else (),
        api_latency_ms=_number(_first(data, "api_latency_ms"), "api_latency_ms"),
        stop_reason=_text(_first(data, "stop_reason"), "stop_reason"),
        session_id=_text(_first(data, "session_id"), "session_id"),
        workspace=_workspace(data.get("workspace")),
    )


def _workspace(value: Any) -> WorkspaceChanges | None:
    """The files an agent left in its folder, as `Trace.to_json` writes them (the cache keeps them)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TraceFormatError("trace.workspace must be an object")
    try:
        return convert(value, WorkspaceChanges, "trace", nulls=True)
    except InputError as exc:
        raise TraceFormatError(f"trace.workspace: {exc}") from None


def _text(value: Any, field: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TraceFormatError(f"trace.{field} must be a string (got {value!r})")
