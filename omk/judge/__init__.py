"""The LLM judge: rubric, dimensions and judge-scored assertions (spec §5, docs/judge.md).

`build_judge(settings)` returns None when no judge is configured; then rubric, dimensions and
judge-scored assertions are reported as skipped. Otherwise it returns a `Judge` (omk/judge/judge.py):

    describe(results=None) -> dict          # the report's "judge" block (models, prompt hash, agreement)
    async grade(sample, output, trace) -> dict | None   # {"score", "rubric", "dimensions", ...}
    async check_assertion(spec, ctx) -> Outcome          # semantic_similarity, faithfulness, ...
    failure(ctx, judge_block) -> str | None              # why the judge failed on a sample
    spent_usd() -> float | None                          # judge cost of this run
    async close() -> None
"""

from __future__ import annotations

from typing import Any

from omk.errors import ConfigError

NO_JUDGE = "no judge configured"
JUDGE_OFF = "judge turned off (--no-judge)"


def why_no_judge(settings: Any) -> str:
    """Why judge items are skipped when `build_judge` gives None: none configured, or `--no-judge`."""
    return JUDGE_OFF if getattr(settings, "judge_off", False) else NO_JUDGE


def build_judge(settings: Any) -> Any | None:
    if not settings.judge:
        return None
    from omk.judge.clients import make_client
    from omk.judge.judge import Judge
    from omk.run.retry import RetryPolicy
    from omk.secrets import Masker

    if len(settings.judge) > 8:
        raise ConfigError(f"--judge: {len(settings.judge)} judges is too many for an ensemble (at most 8)")
    clients = [make_client(spec, settings.extra) for spec in settings.judge]
    return Judge(
        clients,
        lang=settings.lang,
        debias_length=getattr(settings, "debias_length", True),
        repeat=getattr(settings, "judge_repeat", 1),
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retry=RetryPolicy(retries=settings.retries),
        mask=Masker.for_run(settings.extra),
    )
