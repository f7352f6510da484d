"""The LLM judge: rubric, dimensions and judge-scored assertions (docs/judge.md).

`build_judge(settings)` returns None when no judge is configured; then rubric, dimensions and
judge-scored assertions are reported as skipped. Otherwise it returns a `Judge`: the protocol
below, which the run engine calls, implemented by omk/judge/judge.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from omk.core.errors import ConfigError
from omk.records import Trace
from omk.samples.model import JUDGE_OFF, NO_JUDGE, AssertionSpec, Outcome, Sample

if TYPE_CHECKING:
    from omk.assertions.context import CheckContext
    from omk.judge.clients import JudgeClient
    from omk.records.judging import JudgeBlock
    from omk.settings.config import Settings
    from omk.store.cache import ResponseCache


class Judge(Protocol):
    """What the run engine asks of a judge."""

    @property
    def clients(self) -> Sequence[JudgeClient]:
        """The models that judge, one per `--judge` spec (an ensemble has several)."""
        ...

    def describe(self, results: list[Any] | None = None) -> dict[str, Any]:
        """The report's `judge` block: models, prompt hashes, and (given the results) agreement."""
        ...

    async def grade(
        self, sample: Sample, output: str, trace: Trace, history: list[tuple[str, str]] | None = None
    ) -> dict[str, Any] | None:
        """Rubric and dimensions of one output: `{"score", "rubric", "dimensions", …}`, None
        when the sample has no judge work. `history`: a conversation's earlier (prompt, output)."""
        ...

    async def check_assertion(self, spec: AssertionSpec, ctx: CheckContext) -> Outcome:
        """A judge-scored assertion (semantic_similarity, faithfulness, answer_relevancy, …)."""
        ...

    async def prefer(self, messages: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
        """Which of two outputs is better: `{"preference": 0|1|2|None, "reason", "votes", "error"}`."""
        ...

    def failure(self, ctx: CheckContext, judge_block: JudgeBlock | None) -> str | None:
        """Why the judge failed on this sample (rubric, dimension or assertion), else None."""
        ...

    def spent_usd(self) -> float | None:
        """What the judge's calls of this run cost; None when no call reported a cost."""
        ...

    def use_cache(self, shared: ResponseCache | None = None) -> None:
        """Keep parsed replies in `shared`, or in a cache of the judge's own when None."""
        ...

    async def close(self) -> None: ...


def why_no_judge(settings: Settings) -> str:
    """Why judge items are skipped when `build_judge` gives None: none configured, or `--no-judge`."""
    return JUDGE_OFF if settings.judge_off else NO_JUDGE


def build_judge(settings: Settings) -> Judge | None:
    if not settings.judge:
        return None
    from omk.core.secrets import Masker
    from omk.judge.clients import make_client
    from omk.judge.judge import JudgePanel
    from omk.llm.retry import RetryPolicy

    if len(settings.judge) > 8:
        raise ConfigError(f"--judge: {len(settings.judge)} judges is too many for an ensemble (at most 8)")
    blocks = settings.blocks()
    clients = [make_client(spec, blocks) for spec in settings.judge]
    return JudgePanel(
        clients,
        lang=settings.lang,
        debias_length=settings.debias_length,
        repeat=settings.judge_repeat,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retry=RetryPolicy(retries=settings.retries),
        mask=Masker.for_run(blocks),
    )
