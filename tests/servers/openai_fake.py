"""An OpenAI-compatible Chat Completions server on 127.0.0.1 (`POST /v1/chat/completions`)."""

from __future__ import annotations

import json
from typing import Any

from servers.base import Drop, FakeServer, Garbage, Request, Slow, Status

__all__ = ["Drop", "Garbage", "OpenAIFake", "Slow", "Status", "text_reply", "tool_call_reply", "tool_messages"]


class OpenAIFake(FakeServer):
    """`fake.url` is the base URL to use as OPENAI_BASE_URL (it ends in /v1)."""

    path = "/v1/chat/completions"
    url_suffix = "/v1"

    def error_body(self, code: int) -> dict[str, Any]:
        return {"error": {"message": f"injected error {code}", "type": "server_error", "code": code}}


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


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
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for i, (name, args) in enumerate(calls)
    ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "tool_calls": tool_calls},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": _usage(prompt_tokens, completion_tokens),
    }


def tool_messages(request: Request) -> list[dict[str, Any]]:
    """The `role: tool` messages a request carried (what omk answered the model's calls with)."""
    return [m for m in (request.json or {}).get("messages", []) if m.get("role") == "tool"]
