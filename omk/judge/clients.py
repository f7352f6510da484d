"""Judge backends: one `complete(system, prompt)` call each, failures classified for retry.

A judge kind is one module with a factory (the `JudgeFactory` below), plus one line in `KINDS`;
`make_client` imports only the kinds it is asked for. Built in: `openai:MODEL` and
`anthropic:MODEL` (omk.judge.model_judge, through the model-call layer the API targets use) and
`cmd:COMMAND`, a program per call (omk.judge.command_judge).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from omk.core.errors import ConfigError
from omk.core.lazy import LazyRegistry
from omk.domain.target_identity import CacheIdentity

__all__ = ["KINDS", "JudgeClient", "JudgeFactory", "Reply", "make_client", "register_judge"]


@dataclass(slots=True)
class Reply:
    text: str
    cost_usd: float | None = None
    tokens: dict[str, int | None] = field(default_factory=lambda: {"input": None, "output": None})


class JudgeClient(Protocol):
    spec: str

    def identity(self) -> CacheIdentity | dict[str, Any]:
        """What decides the reply besides the prompt (for the cache), as a target's cache
        identity (omk.domain.target_identity; a dict from a judge kind of a program's own); never a secret."""
        ...

    def describe(self) -> dict[str, Any]: ...

    async def complete(self, system: str, prompt: str, timeout: float) -> Reply: ...

    async def close(self) -> None: ...


class JudgeFactory(Protocol):
    def __call__(self, arg: str, spec: str, *, settings: Mapping[str, Any]) -> JudgeClient:
        """The judge for `KIND:ARG`; `arg` is what follows the colon, `spec` the whole text."""
        ...


# kind -> its factory, as "module:attr" (in the order error messages list them)
KINDS: LazyRegistry[JudgeFactory] = LazyRegistry(
    {
        "openai": "omk.judge.model_judge:openai_judge",
        "anthropic": "omk.judge.model_judge:anthropic_judge",
        "cmd": "omk.judge.command_judge:CommandJudge.from_spec",
    }
)


def register_judge(kind: str, factory: str) -> None:
    """Add a judge kind: `factory` is the `"module:attr"` of its `JudgeFactory`."""
    KINDS.register(kind, factory)


def make_client(spec: str, settings: Mapping[str, Any] | None = None) -> JudgeClient:
    """The judge client for `KIND:ARG` (the kind is not case-sensitive)."""
    kind, sep, arg = spec.partition(":")
    kind = kind.strip().lower()
    expected = ", ".join(KINDS.names())
    if not sep or not arg.strip():
        raise ConfigError(f"judge {spec!r}: expected KIND:ARG with KIND one of {expected}")
    if kind not in KINDS:
        raise ConfigError(f"judge {spec!r}: unknown kind {kind!r}; expected one of {expected}")
    return KINDS.load(kind)(arg, spec, settings=settings or {})
