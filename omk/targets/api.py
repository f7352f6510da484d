"""What the model-API targets (`openai:`, `anthropic:`) share around the agent loop.

Settings (provider, system prompt, max_turns, price), what the report and the cache record, the
lazily opened HTTP client, how an unexpected reply is reported, and `run`: the messages of a
sample or a conversation turn, its mocks, one agent loop. A provider subclass supplies only its
wire format: the endpoint and auth headers (`endpoint`), and a `Conversation` that builds the
request body and parses the reply (`conversation`).
"""

from __future__ import annotations

import json
from typing import Any

from omk.model import Sample
from omk.targets.agent_loop import Conversation, max_turns, run_agent_loop, system_prompt
from omk.targets.base import TargetError, TargetResult
from omk.targets.http import ClientPool, provider_settings, public_url, redact
from omk.targets.mocks import MockSandbox, offered_tools
from omk.targets.prelude import history_for, system_for
from omk.targets.pricing import price_of
from omk.targets.session import Message, Session, user_message


def usage_tokens(usage: Any, name: str) -> int | None:
    """A token count from a reply's `usage` object; None when it is missing or not a whole number."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ApiTarget:
    kind: str  # "openai" | "anthropic": the target kind, the omk.yaml section and the error prefix
    default_base_url: str

    def __init__(self, model: str, spec: str, settings: dict[str, Any] | None = None):
        self.model = model
        self.spec = spec
        self.provider = provider_settings(self.kind, settings, self.default_base_url, spec)
        self.system = system_prompt(settings)
        self.max_turns = max_turns(settings)
        self.price = self.provider.price or price_of(model)
        self._http: ClientPool | None = None  # opened on the first call: a cached rerun never needs it

    # --- the provider's wire format -------------------------------------------------------------

    def endpoint(self) -> tuple[str, dict[str, str]]:
        """The URL to post to and the headers (with the key, when there is one)."""
        raise NotImplementedError

    def conversation(self, system: str | None, messages: list[Message], tools: list[dict[str, Any]]) -> Conversation:
        raise NotImplementedError

    # --- shared ---------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "spec": self.spec,
            "model": self.model,
            "base_url": public_url(self.provider.base_url),
            "params": self.provider.params,
            "system": self.system.describe(),
            "max_turns": self.max_turns,
        }

    def cache_identity(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": self.model,
            "base_url": public_url(self.provider.base_url),
            "params": self.provider.params,
            "system": self.system.text,
            "max_turns": self.max_turns,
        }

    async def post(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self._http is None:
            self._http = ClientPool(self.provider.base_url)
        url, headers = self.endpoint()
        return await self._http.post_json(url, payload, headers, self.kind, self.provider.secrets())

    def garbage(self, why: str, data: dict[str, Any]) -> TargetError:
        """The error for a reply that parsed as JSON but is not what the API returns."""
        body = redact(json.dumps(data, ensure_ascii=False), self.provider.secrets())[:200]  # masked, then cut
        return TargetError(f"{self.kind}: unexpected reply: {why}: {body}")

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        messages = session.messages(prompt) if session else [*history_for(sample), user_message(prompt)]
        conversation = self.conversation(system_for(self.system.text, sample), messages, offered_tools(sample))
        sandbox = session.sandbox if session else MockSandbox.for_sample(sample)
        turns = 1 if sample.single_step else self.max_turns  # Big Sky: one model call, its tool calls recorded
        return await run_agent_loop(conversation, sandbox, max_turns=turns, price=self.price, record_unanswered=sample.single_step)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
