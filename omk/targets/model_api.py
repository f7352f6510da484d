"""What the model-API targets (`openai:`, `anthropic:`) share around the agent loop.

Settings (provider, system prompt, max_turns, price), what the report and the cache record, and
`run`: the messages of a sample or a conversation turn, its mocks, one agent loop. The request
and the reply are the model-call layer's (omk/llm): a subclass names its `ModelClient` class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.domain.messages import Message, user_message
from omk.domain.target_identity import CacheIdentity, environment, selected, without_credentials
from omk.llm.client import ModelClient, ModelTurn, RequestedCall, Tool, ToolResult
from omk.llm.http import provider_settings, public_url
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.agent_loop import max_turns, run_agent_loop, system_prompt
from omk.targets.base import TargetResult
from omk.targets.mocks import MockSandbox, ToolAnswer, offered_tools
from omk.targets.preflight import check_reachable
from omk.targets.prelude import history_for, system_for
from omk.targets.session import Session


class _Conversation:
    """The agent loop's view of one model: the messages so far in the provider's format."""

    def __init__(self, client: ModelClient, system: str | None, messages: list[Message], tools: list[Tool]):
        self.client = client
        self.system = system
        self.tools = tools
        self.messages = client.history(messages)

    async def step(self) -> ModelTurn:
        payload = self.client.request(self.system, self.messages, self.tools, self.client.provider.params)
        turn = self.client.parse(await self.client.send(payload))
        self.messages.append(turn.assistant)
        return turn

    def add_results(self, results: list[tuple[RequestedCall, ToolAnswer]]) -> None:
        self.messages += self.client.tool_results([ToolResult(call.id, answer.text, answer.is_error) for call, answer in results])


class ApiTarget:
    kind: str  # "openai" | "anthropic": the target kind, the omk.yaml section and the error prefix
    client_class: type[ModelClient]

    def __init__(self, model: str, spec: str, settings: TargetSettings | None = None):
        settings = settings or TargetSettings()
        self.model = model
        self.spec = spec
        self.provider = provider_settings(self.kind, settings, self.client_class.default_base_url, spec)
        self.block = dict(settings.get(self.kind) or {})  # omk.yaml's block for the kind: no key is ever in it
        if isinstance(self.block.get("base_url"), str):
            self.block["base_url"] = without_credentials(self.block["base_url"])
        self.client = self.client_class(model, self.provider, label=self.kind)
        self.system = system_prompt(settings)
        self.max_turns = max_turns(settings)
        self.price = self.client.price

    @classmethod
    def from_spec(cls, arg: str, spec: str, *, base_dir: Path | None, settings: TargetSettings) -> ApiTarget:
        return cls(arg.strip(), spec, settings)

    def preflight(self) -> None:
        """Before the run: the base URL (or the proxy in front of it) accepts a connection."""
        where = f"{self.kind.upper()}_BASE_URL or omk.yaml {self.kind}.base_url"
        check_reachable(self.spec, self.provider.base_url, where)

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

    def cache_identity(self) -> CacheIdentity:
        """The model at its endpoint, through the proxy the environment names, with omk.yaml's
        block for the kind (params, price…), the system text and max_turns."""
        return CacheIdentity(
            kind=self.kind,
            model=self.model,
            endpoint=without_credentials(self.provider.base_url),
            program=None,
            environment=environment(selected(routing=False)),  # the proxy variables the calls go through
            settings={
                "block": self.block,
                "params": self.provider.params,
                "price": self.provider.price,  # a cached trace keeps the cost it was priced at
                "system": self.system.text,
                "max_turns": self.max_turns,
            },
        )

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        messages = session.messages(prompt) if session else [*history_for(sample), user_message(prompt)]
        conversation = _Conversation(self.client, system_for(self.system.text, sample), messages, offered_tools(sample))
        sandbox = session.sandbox if session else MockSandbox.for_sample(sample)
        turns = 1 if sample.single_step else self.max_turns  # Big Sky: one model call, its tool calls recorded
        return await run_agent_loop(conversation, sandbox, max_turns=turns, price=self.price, record_unanswered=sample.single_step)

    async def close(self) -> None:
        await self.client.close()
