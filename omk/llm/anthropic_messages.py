"""The Anthropic Messages wire format.

The base URL has no `/v1`, as in the official SDKs. The API requires `max_tokens`; a request
that sets none asks for `DEFAULT_MAX_TOKENS`.
"""

from __future__ import annotations

from typing import Any

from omk.llm.client import Message, ModelClient, ModelTurn, RequestedCall, Tool, ToolResult, usage_tokens

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


def _wire(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages as Messages API turns: text and tool_use blocks for the assistant, the
    tool results of one step together in the user message that follows."""
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


class AnthropicMessages(ModelClient):
    kind = "anthropic"
    default_base_url = "https://api.anthropic.com"

    def endpoint(self) -> tuple[str, dict[str, str]]:
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if self.provider.api_key:
            headers["x-api-key"] = self.provider.api_key
        return f"{self.provider.base_url}/v1/messages", headers

    def history(self, messages: list[Message]) -> list[dict[str, Any]]:
        return _wire(messages)

    def request(self, system: str | None, messages: list[dict[str, Any]], tools: list[Tool], params: dict[str, Any]) -> dict[str, Any]:
        payload: dict[str, Any] = {"max_tokens": DEFAULT_MAX_TOKENS, **params, "model": self.model, "messages": messages}
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in tools]
        return payload

    def parse(self, data: dict[str, Any]) -> ModelTurn:
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise self.garbage("no content blocks in the reply", data)
        texts, calls = [], []
        for i, block in enumerate(blocks):
            if not isinstance(block, dict):
                raise self.garbage(f"content[{i}] is not an object", data)
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise self.garbage(f"content[{i}] is a tool_use without a name", data)
                calls.append(RequestedCall(id=str(block.get("id") or f"toolu_{i}"), name=block["name"], input=block.get("input", {})))
        usage = data.get("usage")
        return ModelTurn(
            text="".join(texts),
            calls=calls,
            input_tokens=usage_tokens(usage, "input_tokens"),
            output_tokens=usage_tokens(usage, "output_tokens"),
            assistant={"role": "assistant", "content": blocks},
        )

    def tool_results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        content = [{"type": "tool_result", "tool_use_id": r.call_id, "content": r.text, "is_error": r.is_error} for r in results]
        return [{"role": "user", "content": content}]
