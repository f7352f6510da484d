"""`anthropic:MODEL`: the Anthropic Messages API, with the agent loop.

Base URL from `ANTHROPIC_BASE_URL` (or omk.yaml `anthropic.base_url`; without `/v1`, as in the
official SDKs), key from `ANTHROPIC_API_KEY` (or `anthropic.api_key_env`), extra body fields from
`anthropic.params` (`max_tokens` defaults to 4096: the API requires one).
"""

from __future__ import annotations

from typing import Any

from omk.targets.agent_loop import ModelTurn, RequestedCall
from omk.targets.api import ApiTarget, usage_tokens
from omk.targets.mocks import ToolAnswer
from omk.targets.session import Message

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


def _wire(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages (omk.targets.session) as Messages API turns: text and tool_use blocks for
    the assistant, the tool results of one step together in the user message that follows."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                value = call.get("input")
                blocks.append(
                    {"type": "tool_use", "id": call.get("id"), "name": call.get("tool"), "input": value if isinstance(value, dict) else {"input": value}}
                )
            if blocks:  # the API refuses an empty assistant message
                out.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": message.get("content") or "",
                "is_error": bool(message.get("is_error")),
            }
            last = out[-1] if out else None
            if last and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "user", "content": message.get("content") or ""})
    return out


class _MessagesConversation:
    def __init__(self, target: AnthropicTarget, system: str | None, messages: list[Message], tools: list[dict[str, Any]]):
        self.target = target
        self.system = system
        self.messages: list[dict[str, Any]] = _wire(messages)
        self.tools = [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in tools
        ]

    async def step(self) -> ModelTurn:
        payload: dict[str, Any] = {"max_tokens": DEFAULT_MAX_TOKENS, **self.target.provider.params}
        payload["model"] = self.target.model
        payload["messages"] = self.messages
        if self.system:
            payload["system"] = self.system
        if self.tools:
            payload["tools"] = self.tools
        data = await self.target.post(payload)
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise self.target.garbage("no content blocks in the reply", data)
        texts, calls = [], []
        for i, block in enumerate(blocks):
            if not isinstance(block, dict):
                raise self.target.garbage(f"content[{i}] is not an object", data)
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise self.target.garbage(f"content[{i}] is a tool_use without a name", data)
                calls.append(RequestedCall(id=str(block.get("id") or f"toolu_{i}"), name=block["name"], input=block.get("input", {})))
        self.messages.append({"role": "assistant", "content": blocks})
        usage = data.get("usage")
        return ModelTurn(
            text="".join(texts),
            calls=calls,
            input_tokens=usage_tokens(usage, "input_tokens"),
            output_tokens=usage_tokens(usage, "output_tokens"),
        )

    def add_results(self, results: list[tuple[RequestedCall, ToolAnswer]]) -> None:
        content = [
            {"type": "tool_result", "tool_use_id": call.id, "content": answer.text, "is_error": answer.is_error}
            for call, answer in results
        ]
        self.messages.append({"role": "user", "content": content})


class AnthropicTarget(ApiTarget):
    kind = "anthropic"
    default_base_url = DEFAULT_BASE_URL

    def endpoint(self) -> tuple[str, dict[str, str]]:
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if self.provider.api_key:
            headers["x-api-key"] = self.provider.api_key
        return f"{self.provider.base_url}/v1/messages", headers

    def conversation(self, system: str | None, messages: list[Message], tools: list[dict[str, Any]]) -> _MessagesConversation:
        return _MessagesConversation(self, system, messages, tools)
