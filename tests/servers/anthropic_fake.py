"""An Anthropic Messages API server on 127.0.0.1 (`POST /v1/messages`)."""

from __future__ import annotations

from typing import Any

from servers.base import Drop, FakeServer, Garbage, Request, Slow, Status

__all__ = ["AnthropicFake", "Drop", "Garbage", "Slow", "Status", "text_reply", "tool_results", "tool_use_reply"]


class AnthropicFake(FakeServer):
    """`fake.url` is the base URL to use as ANTHROPIC_BASE_URL (no /v1, as in the SDKs)."""

    path = "/v1/messages"

    def error_body(self, code: int) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(code, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"injected error {code}"}}


def _message(content: list[dict[str, Any]], stop: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def text_reply(text: str, input_tokens: int = 10, output_tokens: int = 5) -> dict[str, Any]:
    return _message([{"type": "text", "text": text}], "end_turn", input_tokens, output_tokens)


def tool_use_reply(
    calls: list[tuple[str, Any]], text: str | None = None, input_tokens: int = 10, output_tokens: int = 5
) -> dict[str, Any]:
    """The model asks for tools: `[(name, input), …]`, optionally after some text."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": inp} for i, (n, inp) in enumerate(calls)]
    return _message(content, "tool_use", input_tokens, output_tokens)


def tool_results(request: Request) -> list[dict[str, Any]]:
    """The `tool_result` blocks of the last user message of a request."""
    messages = (request.json or {}).get("messages", [])
    if not messages or not isinstance(messages[-1].get("content"), list):
        return []
    return [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]
