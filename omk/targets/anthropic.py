"""`anthropic:MODEL`: the Anthropic Messages API, with the agent loop.

Base URL from `ANTHROPIC_BASE_URL` (or omk.yaml `anthropic.base_url`; without `/v1`, as in the
official SDKs), key from `ANTHROPIC_API_KEY` (or `anthropic.api_key_env`), extra body fields from
`anthropic.params` (`max_tokens` defaults to 4096: the API requires one).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from omk.model import Sample
from omk.targets.agent_loop import (
    ModelTurn,
    RequestedCall,
    max_turns,
    run_agent_loop,
    system_prompt,
)
from omk.targets.base import TargetError, TargetResult
from omk.targets.http import new_client, post_json, provider_settings, public_url, redact
from omk.targets.mocks import MockSandbox, ToolAnswer, offered_tools
from omk.targets.prelude import history_for, system_for
from omk.targets.pricing import price_of
from omk.targets.session import Message, Session, user_message

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


def _tokens(usage: Any, name: str) -> int | None:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
            input_tokens=_tokens(usage, "input_tokens"),
            output_tokens=_tokens(usage, "output_tokens"),
        )

    def add_results(self, results: list[tuple[RequestedCall, ToolAnswer]]) -> None:
        content = [
            {"type": "tool_result", "tool_use_id": call.id, "content": answer.text, "is_error": answer.is_error}
            for call, answer in results
        ]
        self.messages.append({"role": "user", "content": content})


class AnthropicTarget:
    def __init__(self, model: str, spec: str, settings: dict[str, Any] | None = None):
        self.model = model
        self.spec = spec
        self.provider = provider_settings("anthropic", settings, DEFAULT_BASE_URL, spec)
        self.system = system_prompt(settings)
        self.max_turns = max_turns(settings)
        self.price = self.provider.price or price_of(model)
        self._client: httpx.AsyncClient | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "anthropic",
            "spec": self.spec,
            "model": self.model,
            "base_url": public_url(self.provider.base_url),
            "params": self.provider.params,
            "system": self.system.describe(),
            "max_turns": self.max_turns,
        }

    def cache_identity(self) -> dict[str, Any]:
        return {
            "kind": "anthropic",
            "model": self.model,
            "base_url": public_url(self.provider.base_url),
            "params": self.provider.params,
            "system": self.system.text,
            "max_turns": self.max_turns,
        }

    async def post(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self._client is None:
            self._client = new_client()
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if self.provider.api_key:
            headers["x-api-key"] = self.provider.api_key
        url = f"{self.provider.base_url}/v1/messages"
        return await post_json(self._client, url, payload, headers, "anthropic", self.provider.secrets())

    def garbage(self, why: str, data: dict[str, Any]) -> TargetError:
        body = json.dumps(data, ensure_ascii=False)[:200]
        return TargetError(redact(f"anthropic: unexpected reply: {why}: {body}", self.provider.secrets()))

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        messages = session.messages(prompt) if session else [*history_for(sample), user_message(prompt)]
        conversation = _MessagesConversation(self, system_for(self.system.text, sample), messages, offered_tools(sample))
        sandbox = session.sandbox if session else MockSandbox.for_sample(sample)
        turns = 1 if sample.single_step else self.max_turns  # Big Sky: one model call, its tool calls recorded
        return await run_agent_loop(conversation, sandbox, max_turns=turns, price=self.price, record_unanswered=sample.single_step)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
