"""`openai:MODEL` and `anthropic:MODEL` judges: one request per call, through the model-call layer
the API targets use (omk/llm: provider settings from omk.yaml and the environment, the request and
reply formats, error classification, secret redaction, the price table).

A `@URL` suffix (`openai:llama3@http://127.0.0.1:8080/v1`) points the judge at its own server, so
a local judge can grade a hosted target.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from omk.core.errors import ConfigError
from omk.domain.target_identity import CacheIdentity, environment, selected, without_credentials
from omk.judge.clients import Reply
from omk.llm.client import ModelClient
from omk.llm.http import ProviderSettings, is_local_url, provider_settings, public_url

JUDGE_PARAMS = {"temperature": 0}
JUDGE_DEFAULTS: dict[str, dict[str, Any]] = {"anthropic": {"max_tokens": 2048}}  # the API requires one


def _provider(name: str, arg: str, spec: str, settings: Mapping[str, Any], default_base: str) -> tuple[str, ProviderSettings]:
    """(model, provider settings); `MODEL@URL` overrides the base URL for the judge alone."""
    model, sep, url = arg.partition("@")
    model = model.strip()
    if not model:
        raise ConfigError(f"judge {spec!r}: expected {name}:MODEL")
    if not sep:
        try:
            return model, provider_settings(name, settings, default_base, f"judge {spec}")
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("target 'judge ", "judge '")) from None
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"judge {spec!r}: the part after @ must be an http(s) base URL")
    block = (settings or {}).get(name) or {}
    named = block.get("api_key_env") if isinstance(block, dict) else None
    key_env = named if isinstance(named, str) else f"{name.upper()}_API_KEY"
    provider = ProviderSettings(
        name=name, base_url=url.rstrip("/"), api_key=os.environ.get(key_env) or None, api_key_env=key_env, params={}
    )
    if provider.api_key is None and not is_local_url(url):
        from omk.io.process import key_missing

        if not key_missing(message := f"judge {spec!r}: no API key: set {key_env} (a local base URL needs none)"):
            raise ConfigError(message)
    return model, provider


class ModelJudge:
    """`openai:MODEL` or `anthropic:MODEL`: one request per call, through the model-call layer."""

    def __init__(self, spec: str, client: ModelClient):
        self.spec = spec
        self.client = client
        self.kind = client.kind
        self.model = client.model
        self.provider = client.provider

    def identity(self) -> CacheIdentity:
        """The model at its endpoint, through the proxy the environment names, with its params."""
        return CacheIdentity(
            kind=self.kind,
            model=self.model,
            endpoint=without_credentials(self.provider.base_url),
            program=None,
            environment=environment(selected(routing=False)),
            settings={"params": self.provider.params},
        )

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "kind": self.kind, "model": self.model, "base_url": public_url(self.provider.base_url)}

    async def complete(self, system: str, prompt: str, timeout: float) -> Reply:
        params = {k: v for k, v in self.provider.params.items() if k != "tools"}  # the judge offers no tools
        params = {**JUDGE_DEFAULTS.get(self.kind, {}), **JUDGE_PARAMS, **params}
        payload = self.client.request(system, self.client.history([{"role": "user", "content": prompt}]), [], params)
        turn = self.client.parse(await self.client.send(payload, timeout=timeout))
        return Reply(turn.text, self.client.cost(turn), {"input": turn.input_tokens, "output": turn.output_tokens})

    async def close(self) -> None:
        await self.client.close()


def openai_judge(arg: str, spec: str, *, settings: Mapping[str, Any]) -> ModelJudge:
    from omk.llm.openai_chat import OpenAIChat

    return model_judge(OpenAIChat, "openai", arg, spec, settings)


def anthropic_judge(arg: str, spec: str, *, settings: Mapping[str, Any]) -> ModelJudge:
    from omk.llm.anthropic_messages import AnthropicMessages

    return model_judge(AnthropicMessages, "anthropic", arg, spec, settings)


def model_judge(client_class: type[ModelClient], kind: str, arg: str, spec: str, settings: Mapping[str, Any]) -> ModelJudge:
    """The judge for `KIND:MODEL` or `KIND:MODEL@URL`, speaking `client_class`'s wire format."""
    model, provider = _provider(kind, arg, spec, settings, client_class.default_base_url)
    # the label reports carry: a `user:password@` in a judge URL never reaches them
    label = f"{kind}:{model}@{public_url(provider.base_url)}" if "@" in arg else spec
    return ModelJudge(label, client_class(model, provider, label=label))
