"""The OpenAI Chat Completions wire format (any OpenAI-compatible server).

The base URL includes `/v1`, as in the official SDKs (`http://localhost:11434/v1` for Ollama).
"""

from __future__ import annotations

import json
from typing import Any

from omk.llm.client import Message, ModelClient, ModelTurn, RequestedCall, Tool, ToolResult, usage_tokens


def _wire(message: Message) -> dict[str, Any]:
    """A neutral message as a Chat Completions message."""
    role = message.get("role")
    if role == "tool":
        return {"role": "tool", "tool_call_id": message.get("tool_call_id"), "content": message.get("content") or ""}
    if role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": message.get("content") or None}
        calls = message.get("tool_calls") or []
        if calls:
            out["tool_calls"] = [
                {
                    "id": c.get("id"),
                    "type": "function",
                    "function": {"name": c.get("tool"), "arguments": json.dumps(c.get("input"), ensure_ascii=False)},
                }
                for c in calls
            ]
        elif out["content"] is None:
            out["content"] = ""
        return out
    return {"role": "user", "content": message.get("content") or ""}


def _arguments(raw: Any) -> Any:
    """Tool arguments arrive as a JSON string; keep the raw text when it is not JSON."""
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw if raw is not None else {}


class OpenAIChat(ModelClient):
    kind = "openai"
    default_base_url = "https://api.openai.com/v1"

    def endpoint(self) -> tuple[str, dict[str, str]]:
        headers = {"content-type": "application/json"}
        if self.provider.api_key:
            headers["authorization"] = f"Bearer {self.provider.api_key}"
        return f"{self.provider.base_url}/chat/completions", headers

    def history(self, messages: list[Message]) -> list[dict[str, Any]]:
        return [_wire(m) for m in messages]

    def request(self, system: str | None, messages: list[dict[str, Any]], tools: list[Tool], params: dict[str, Any]) -> dict[str, Any]:
        head = [{"role": "system", "content": system}] if system else []
        payload: dict[str, Any] = {**params, "model": self.model, "messages": [*head, *messages]}
        if tools:
            payload["tools"] = [
                {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
                for t in tools
            ]
        return payload

    def parse(self, data: dict[str, Any]) -> ModelTurn:
        message = self._message(data)
        calls = []
        for i, raw in enumerate(message.get("tool_calls") or []):
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise self.garbage("a tool call without a function name", data)
            calls.append(RequestedCall(id=str(raw.get("id") or f"call_{i}"), name=fn["name"], input=_arguments(fn.get("arguments"))))
        assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            assistant["tool_calls"] = message["tool_calls"]
        usage = data.get("usage")
        content = message.get("content")
        return ModelTurn(
            text=content if isinstance(content, str) else "",
            calls=calls,
            input_tokens=usage_tokens(usage, "prompt_tokens"),
            output_tokens=usage_tokens(usage, "completion_tokens"),
            assistant=assistant,
        )

    def _message(self, data: dict[str, Any]) -> dict[str, Any]:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.garbage("no choices in the reply", data)
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise self.garbage("no message in choices[0]", data)
        return message

    def tool_results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": r.call_id, "content": r.text} for r in results]
