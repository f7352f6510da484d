"""An Anthropic Messages API server on 127.0.0.1 (`POST /v1/messages`).

A request with `"stream": true` (Claude Code always streams) gets a reply step that is a message
as server-sent events, the way the real API streams it (`message_start`, one
`content_block_start`/`_delta`/`_stop` group per block, `message_delta`, `message_stop`).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from servers.base import Drop, FakeServer, Garbage, Request, Slow, Status, Stream

__all__ = [
    "AnthropicFake",
    "Drop",
    "Garbage",
    "Slow",
    "Status",
    "Stream",
    "sse_events",
    "text_reply",
    "tool_results",
    "tool_use_reply",
]


class AnthropicFake(FakeServer):
    """`fake.url` is the base URL to use as ANTHROPIC_BASE_URL (no /v1, as in the SDKs)."""

    path = "/v1/messages"

    def error_body(self, code: int) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(code, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"injected error {code}"}}

    def adapt(self, request: Request, step: Any) -> Any:
        wants_stream = isinstance(request.json, dict) and request.json.get("stream") is True
        if wants_stream and isinstance(step, dict) and step.get("type") == "message":
            return Stream(sse_events(step))
        return step


def sse_events(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """A complete message as the streaming API sends it."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or []):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    tail = {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage.get("output_tokens", 0)}}
    events.append(("message_delta", tail))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


_MESSAGE_IDS = itertools.count(1)


def _message(
    content: list[dict[str, Any]], stop: str, input_tokens: int, output_tokens: int, **cache: int
) -> dict[str, Any]:
    """`cache`: `cache_read_input_tokens` / `cache_creation_input_tokens`, when a test wants them.
    Each message has its own id (Claude Code merges the blocks of messages sharing one)."""
    return {
        "id": f"msg_fake_{next(_MESSAGE_IDS)}",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **cache},
    }


def text_reply(text: str, input_tokens: int = 10, output_tokens: int = 5, **cache: int) -> dict[str, Any]:
    return _message([{"type": "text", "text": text}], "end_turn", input_tokens, output_tokens, **cache)


def tool_use_reply(
    calls: list[tuple[str, Any]],
    text: str | None = None,
    input_tokens: int = 10,
    output_tokens: int = 5,
    id_prefix: str = "toolu_",
    **cache: int,
) -> dict[str, Any]:
    """The model asks for tools: `[(name, input), …]`, optionally after some text. Call ids are
    `{id_prefix}{i}`; a multi-step script for Claude Code gives each step its own prefix."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"{id_prefix}{i}", "name": n, "input": inp} for i, (n, inp) in enumerate(calls)
    ]
    return _message(content, "tool_use", input_tokens, output_tokens, **cache)


def tool_results(request: Request) -> list[dict[str, Any]]:
    """The `tool_result` blocks of the last user message of a request."""
    messages = (request.json or {}).get("messages", [])
    if not messages or not isinstance(messages[-1].get("content"), list):
        return []
    return [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]
