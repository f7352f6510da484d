"""`openai:MODEL`: any OpenAI-compatible Chat Completions endpoint, with the agent loop.

Base URL from `OPENAI_BASE_URL` (or omk.yaml `openai.base_url`; it includes `/v1`, as in the
official SDKs: `http://localhost:11434/v1` for Ollama), key from `OPENAI_API_KEY` (or the
variable omk.yaml `openai.api_key_env` names), extra body fields from `openai.params`.
"""

from __future__ import annotations

import json
from typing import Any

from omk.targets.agent_loop import ModelTurn, RequestedCall
from omk.targets.api import ApiTarget, usage_tokens
from omk.targets.mocks import ToolAnswer
from omk.targets.session import Message

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _wire(message: Message) -> dict[str, Any]:
    """A neutral message (omk.targets.session) as a Chat Completions message."""
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


class _ChatConversation:
    def __init__(self, target: OpenAITarget, system: str | None, messages: list[Message], tools: list[dict[str, Any]]):
        self.target = target
        self.messages: list[dict[str, Any]] = []
        if system:
            self.messages.append({"role": "system", "content": system})
        self.messages += [_wire(m) for m in messages]
        self.tools = [
            {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
            for t in tools
        ]

    async def step(self) -> ModelTurn:
        payload: dict[str, Any] = {**self.target.provider.params, "model": self.target.model, "messages": self.messages}
        if self.tools:
            payload["tools"] = self.tools
        data = await self.target.post(payload)
        message = self._message(data)
        calls = []
        for i, raw in enumerate(message.get("tool_calls") or []):
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise self.target.garbage("a tool call without a function name", data)
            calls.append(RequestedCall(id=str(raw.get("id") or f"call_{i}"), name=fn["name"], input=_arguments(fn.get("arguments"))))
        assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            assistant["tool_calls"] = message["tool_calls"]
        self.messages.append(assistant)
        usage = data.get("usage")
        content = message.get("content")
        return ModelTurn(
            text=content if isinstance(content, str) else "",
            calls=calls,
            input_tokens=usage_tokens(usage, "prompt_tokens"),
            output_tokens=usage_tokens(usage, "completion_tokens"),
        )

    def _message(self, data: dict[str, Any]) -> dict[str, Any]:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.target.garbage("no choices in the reply", data)
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise self.target.garbage("no message in choices[0]", data)
        return message

    def add_results(self, results: list[tuple[RequestedCall, ToolAnswer]]) -> None:
        for call, answer in results:
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": answer.text})


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


class OpenAITarget(ApiTarget):
    kind = "openai"
    default_base_url = DEFAULT_BASE_URL

    def endpoint(self) -> tuple[str, dict[str, str]]:
        headers = {"content-type": "application/json"}
        if self.provider.api_key:
            headers["authorization"] = f"Bearer {self.provider.api_key}"
        return f"{self.provider.base_url}/chat/completions", headers

    def conversation(self, system: str | None, messages: list[Message], tools: list[dict[str, Any]]) -> _ChatConversation:
        return _ChatConversation(self, system, messages, tools)
