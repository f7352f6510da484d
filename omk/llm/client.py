"""A model behind a provider's API: its settings, its HTTP clients, and one request and reply.

A provider (`OpenAIChat`, `AnthropicMessages`) supplies its wire format: the endpoint and auth
headers, the request body, the parsing of the reply into a `ModelTurn`, and how omk's neutral
messages (omk.domain.messages) are written for it.

Every error message starts with the client's `label` and has the API key masked.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from omk.domain.messages import Message
from omk.llm.errors import CallError
from omk.llm.http import ClientPool, ProviderSettings, redact
from omk.llm.pricing import cost_usd, price_of

Tool = dict[str, Any]  # a tool offered to the model: {"name", "description", "parameters" (JSON Schema)}


@dataclass(slots=True)
class RequestedCall:
    id: str
    name: str
    input: Any


@dataclass(slots=True)
class ModelTurn:
    """One reply: its text, the tool calls it asks for, its token counts, and the reply as the
    provider's own message (to send back as history in the next request)."""

    text: str
    calls: list[RequestedCall] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    assistant: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ToolResult:
    call_id: str
    text: str
    is_error: bool = False


def usage_tokens(usage: Any, name: str) -> int | None:
    """A token count from a reply's `usage` object; None when it is missing or not a whole number."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ModelClient:
    kind: str  # "openai" | "anthropic": the omk.yaml section
    default_base_url: str

    def __init__(self, model: str, provider: ProviderSettings, label: str):
        self.model = model
        self.provider = provider
        self.label = label  # what error messages start with: the target kind, or the judge's spec
        self.price = provider.price or price_of(model)
        self._http: ClientPool | None = None  # opened on the first call: a cached rerun never needs it

    # --- the provider's wire format -------------------------------------------------------------

    def endpoint(self) -> tuple[str, dict[str, str]]:
        """The URL to post to and the headers (with the key, when there is one)."""
        raise NotImplementedError

    def history(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Neutral messages as the provider's messages."""
        raise NotImplementedError

    def request(self, system: str | None, messages: list[dict[str, Any]], tools: list[Tool], params: dict[str, Any]) -> dict[str, Any]:
        """The body of one request: `params` (temperature, max_tokens…), the model, the system
        prompt, the messages so far (the provider's own) and the tools offered."""
        raise NotImplementedError

    def parse(self, data: dict[str, Any]) -> ModelTurn:
        """The reply; a reply that is JSON but not what the API returns raises `garbage`."""
        raise NotImplementedError

    def tool_results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        """The messages that answer the last turn's tool calls."""
        raise NotImplementedError

    # --- shared ---------------------------------------------------------------------------------

    async def send(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """POST the request; the JSON reply, or a classified `CallError`. With `timeout`, a call
        that takes longer fails as a retryable timeout."""
        if self._http is None:
            self._http = ClientPool(self.provider.base_url, max_bytes=self.provider.max_reply_bytes)
        url, headers = self.endpoint()
        call = self._http.post_json(url, payload, headers, self.label, self.provider.secrets())
        if timeout is None:
            return await call
        try:
            async with asyncio.timeout(timeout):
                return await call
        except TimeoutError:  # the pool turns its own timeouts into CallError: this one is ours
            raise CallError(f"{self.label}: timed out after {timeout:g}s", retryable=True) from None

    def garbage(self, why: str, data: dict[str, Any]) -> CallError:
        """The error for a reply that parsed as JSON but is not what the API returns."""
        body = json.dumps(data, ensure_ascii=False)[:200]
        return CallError(redact(f"{self.label}: unexpected reply: {why}: {body}", self.provider.secrets()))

    def cost(self, turn: ModelTurn) -> float | None:
        return cost_usd(self.price, turn.input_tokens, turn.output_tokens)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
