"""The model that drafts samples: a target built as `omk eval` builds it (omk.yaml's provider
settings and keys, the secrets masked, the checks made before a run), called with the run's
per-call timeout and retries. A drafting call sends the request as the sample's prompt, with no
mocks and no tools, so an API target answers in one call and a `cmd:` program gets one request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from omk.core.secrets import Masker
from omk.domain.target_result import TargetResult
from omk.llm.retry import RetryPolicy
from omk.samples.model import Sample
from omk.settings.config import Settings

# omk.yaml settings that give the target a skill, a system prompt or tools: a drafting call
# must not carry them (the skill drafted from is in the request itself).
NOT_FOR_DRAFTING = ("skill", "skills", "system", "mcp_config")


class _Model(Protocol):
    """What drafting uses of a target (omk.targets.Target, built by the engine)."""

    spec: str

    async def run(self, sample: Sample, prompt: str) -> TargetResult: ...

    async def close(self) -> None: ...


@dataclass(slots=True)
class TargetAsker:
    target: _Model
    timeout: float
    policy: RetryPolicy
    lang: str = "en"  # omk.yaml's `lang:`: the language of the command's lines
    mask: Masker = field(default_factory=Masker)  # the run's secrets, as `omk eval` knows them from omk.yaml and the environment

    @classmethod
    def open(cls, spec: str | None, cwd: Path, *, timeout: float | None = None, retries: int | None = None) -> TargetAsker:
        """The target `spec` (or omk.yaml's `target:`); ConfigError (exit 2) when it cannot run."""
        from omk.engine.inputs import build_target
        from omk.settings.config import load_settings

        settings: Settings = load_settings([], cwd, {"target": spec, "timeout": timeout, "retries": retries})
        mask = Masker.for_run(settings.blocks())
        for name in NOT_FOR_DRAFTING:
            setattr(settings, name, None)
        return cls(build_target(settings), settings.timeout, RetryPolicy(retries=settings.retries), settings.lang, mask)

    @property
    def spec(self) -> str:
        return self.target.spec

    async def ask(self, prompt: str) -> str:
        """The model's answer; `CallFailure` (one line) when it gives none in time."""
        from omk.llm.retry import call_with_retry

        request = Sample(sample_id="omk-sample-draft", prompt=prompt)

        async def call(_attempt: int) -> TargetResult:
            return await self.target.run(request, prompt)

        result, _ = await call_with_retry(call, self.timeout, self.policy)
        return result.output

    async def close(self) -> None:
        await self.target.close()
