"""OpenAI Chat Completions (`POST /v1/chat/completions`): replies, their stream, and reading a
request. A streamed reply is `chat.completion.chunk` objects as `data:` lines, then `[DONE]`."""

from __future__ import annotations

import json
from typing import Any

from omk.testing.conversation import Exchange
from omk.testing.steps import Request, ScriptTurn


def error_body(code: int, message: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message or f"injected error {code}", "type": "server_error", "code": code}}


def is_completion(step: Any) -> bool:
    return isinstance(step, dict) and step.get("object") == "chat.completion"


def _usage(prompt_tokens: int, completion_tokens: int, cached: int = 0) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def text_reply(text: str, prompt_tokens: int = 10, completion_tokens: int = 5, model: str = "fake") -> dict[str, Any]:
    """A final answer."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _usage(prompt_tokens, completion_tokens),
    }


def tool_call_reply(
    calls: list[tuple[str, Any]], text: str | None = None, prompt_tokens: int = 10, completion_tokens: int = 5
) -> dict[str, Any]:
    """The model asks for tools: `[(name, arguments), …]`; arguments are sent as a JSON string."""
    return _tool_calls([(f"call_{i}", name, args) for i, (name, args) in enumerate(calls)], text, _usage(prompt_tokens, completion_tokens))


def _tool_calls(calls: list[tuple[str, str, Any]], text: str | None, usage: dict[str, Any], model: str = "fake") -> dict[str, Any]:
    tool_calls = [
        {"id": id_, "type": "function", "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
        for id_, name, args in calls
    ]
    message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": usage,
    }


def render(turn: ScriptTurn) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 5, **turn.usage}
    counted = _usage(usage["input_tokens"], usage["output_tokens"], usage.get("cache_read_input_tokens", 0))
    if turn.calls:
        return _tool_calls([(c.id, c.name, c.input) for c in turn.calls], turn.text, counted, turn.model)
    reply = text_reply(turn.text or "", model=turn.model)
    reply["usage"] = counted
    return reply


def chunks(completion: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """A whole completion as the streaming API sends it."""
    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    head = {"id": completion.get("id"), "object": "chat.completion.chunk", "model": completion.get("model", "fake")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str | None, Any]:
        return None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[tuple[str | None, Any]] = [chunk({"role": "assistant", "content": message.get("content") or ""})]
    for index, call in enumerate(message.get("tool_calls") or []):
        events.append(chunk({"tool_calls": [{"index": index, **call}]}))
    events.append(chunk({}, choice.get("finish_reason") or "stop"))
    if completion.get("usage"):
        events.append((None, {**head, "choices": [], "usage": completion["usage"]}))
    events.append((None, "[DONE]"))
    return events


def tool_messages(request: Request) -> list[dict[str, Any]]:
    """The `role: tool` messages a request carried (what the client answered the model's calls with)."""
    return [m for m in (request.json or {}).get("messages", []) if isinstance(m, dict) and m.get("role") == "tool"]


def read_exchange(body: dict[str, Any]) -> Exchange:
    exchange = Exchange()
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            exchange.answered.add(str(message.get("tool_call_id")))
        elif message.get("role") in ("user", "system", "developer"):
            content = message.get("content")
            if isinstance(content, list):
                content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            exchange.listing_from(str(content or ""))
            if message["role"] == "user":
                exchange.prompt_from(str(content or "").strip())
    return exchange
