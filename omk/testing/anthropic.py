"""The Anthropic Messages API (`POST /v1/messages`): replies, their stream, and reading a request.

A request with `"stream": true` (Claude Code always streams) gets a message as server-sent events,
the way the real API streams it (`message_start`, one `content_block_start`/`_delta`/`_stop`
group per block, `message_delta`, `message_stop`).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from omk.testing.conversation import Exchange, strip_reminders
from omk.testing.steps import Request, ScriptTurn

_MESSAGE_IDS = itertools.count(1)


def error_body(code: int, message: str | None = None) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(code, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message or f"injected error {code}"}}


def is_message(step: Any) -> bool:
    return isinstance(step, dict) and step.get("type") == "message"


def sse_events(message: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """A complete message as the streaming API sends it."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
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
    end: dict[str, Any] = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    tail = {"type": "message_delta", "delta": end, "usage": {"output_tokens": usage.get("output_tokens", 0)}}
    events.append(("message_delta", tail))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _message(content: list[dict[str, Any]], stop: str, usage: dict[str, int], model: str = "fake") -> dict[str, Any]:
    """Each message has its own id (Claude Code merges the blocks of messages sharing one)."""
    return {
        "id": f"msg_fake_{next(_MESSAGE_IDS)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def text_reply(text: str, input_tokens: int = 10, output_tokens: int = 5, **cache: int) -> dict[str, Any]:
    """A final answer; `cache`: `cache_read_input_tokens` / `cache_creation_input_tokens`."""
    usage = {"input_tokens": input_tokens, "output_tokens": output_tokens, **cache}
    return _message([{"type": "text", "text": text}], "end_turn", usage)


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
    return _message(content, "tool_use", {"input_tokens": input_tokens, "output_tokens": output_tokens, **cache})


def render(turn: ScriptTurn) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in turn.calls]
    usage = {"input_tokens": 10, "output_tokens": 5, **turn.usage}
    return _message(content, "tool_use" if turn.calls else "end_turn", usage, turn.model)


def tool_results(request: Request) -> list[dict[str, Any]]:
    """The `tool_result` blocks of the last user message of a request."""
    users = [m for m in (request.json or {}).get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    if not users or not isinstance(users[-1].get("content"), list):
        return []
    return [b for b in users[-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [str(b.get("text", "")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def read_exchange(body: dict[str, Any]) -> Exchange:
    """The user's latest prompt, the tool calls answered since and the skills listed to the model,
    read by role and by ids."""
    exchange = Exchange()
    for text in _texts(body.get("system")):
        exchange.listing_from(text)
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") not in ("user", "system"):
            continue  # assistant turns
        content = message.get("content")
        for text in _texts(content):
            exchange.listing_from(text)
        if message["role"] == "system":
            continue  # the `system` messages newer clients append: the environment, the skill listing
        if isinstance(content, str):
            exchange.prompt_from(strip_reminders(content))
            continue
        blocks = [b for b in content or [] if isinstance(b, dict)]
        answered = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        if answered:
            exchange.answered.update(answered)
            continue
        exchange.prompt_from(strip_reminders("\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")))
    return exchange
