"""Run samples through a target, assert, score; stream each result as it finishes.

One failing sample never stops the run: a target error marks that sample `error` and the others
go on. Results are handed to `on_result` in completion order (for `results.jsonl`) and returned
in sample order (for the report).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from omk.core.tasks import run_bounded
from omk.domain.compose import compose_prompt
from omk.domain.workspace import checks_workspace
from omk.records import SampleResult
from omk.runner.grading import RunConfig, grade
from omk.runner.retry import TargetFailure, answer_at_once, call_with_retries
from omk.samples.model import Sample
from omk.store.cache import cache_key, identity_kind
from omk.targets.base import Target, TargetResult, answers_at_once

__all__ = ["RunConfig", "produce", "run_jobs", "run_sample", "run_samples"]


async def produce(
    sample: Sample, prompt: str, target: Target, cfg: RunConfig, repeat: int = 0
) -> tuple[TargetResult, int, bool]:
    """(result, calls made, from cache). Only successful calls are cached; raises TargetFailure."""
    cache = cfg.cache if cfg.cache is None or not checks_workspace(sample) else None  # the folder an agent leaves is not cached
    identity = target.cache_identity() if cache is not None else None
    if cache is None or identity is None:  # not cached: --no-cache, or a target that is never cached
        if (at_once := answers_at_once(target)) is not None:  # a replay: nothing to wait for
            produced, attempts = answer_at_once(at_once, sample, prompt, cfg.timeout)
        else:
            produced, attempts = await call_with_retries(target, sample, prompt, cfg.timeout, cfg.retry)
        return produced, attempts, False
    key = cache_key(identity, sample, prompt, repeat)
    if (hit := await cache.fetch(key)) is not None:
        return hit, 0, True
    produced, attempts = await call_with_retries(target, sample, prompt, cfg.timeout, cfg.retry)
    cache.store(key, produced, identity_kind(identity))
    return produced, attempts, False


async def run_sample(sample: Sample, target: Target, cfg: RunConfig, repeat: int = 0) -> SampleResult:
    if sample.turns:  # a conversation's machinery (sessions, mocks) loads only for one
        from omk.runner.conversation import run_conversation

        return await run_conversation(sample, target, cfg, repeat)
    started = time.perf_counter()
    prompt = compose_prompt(sample)
    try:
        if cfg.cache is None and (at_once := answers_at_once(target)) is not None:  # a replay: no coroutine to wait on
            produced, attempts = answer_at_once(at_once, sample, prompt, cfg.timeout)
            cached = False
        else:
            produced, attempts, cached = await produce(sample, prompt, target, cfg, repeat)
    except TargetFailure as exc:
        duration_ms = (time.perf_counter() - started) * 1000
        return SampleResult.start(sample, prompt, repeat, status="error", error=str(exc), attempts=exc.attempts, duration_ms=duration_ms)
    try:
        graded = await grade(sample, produced.output, produced.trace, cfg, workspace=produced.workspace)
    finally:
        if produced.workspace is not None:
            produced.workspace.remove()
    return SampleResult.start(
        sample,
        prompt,
        repeat,
        status="error" if graded.error else "ok",  # the judge gave up: the sample errored, it did not fail
        error=graded.error,
        output=produced.output,
        trace=graded.trace,
        assertions=graded.assertions,
        judge=graded.judge,
        judge_skipped=graded.judge_skipped,
        scores=graded.scores,
        passed=graded.passed and not graded.error,
        duration_ms=(time.perf_counter() - started) * 1000,
        attempts=attempts,
        cached=cached,
    )


async def run_samples(
    samples: list[Sample],
    target: Target,
    cfg: RunConfig,
    on_result: Callable[[SampleResult], None] | None = None,
) -> list[SampleResult]:
    return await run_jobs([(s, 0) for s in samples], target, cfg, on_result)


async def run_jobs(
    jobs: list[tuple[Sample, int]],
    target: Target,
    cfg: RunConfig,
    on_result: Callable[[SampleResult], None] | None = None,
) -> list[SampleResult]:
    """Run (sample, repeat index) pairs, at most `cfg.concurrency` at once; results in job order."""

    async def one(sample: Sample, repeat: int) -> SampleResult:
        res = await run_sample(sample, target, cfg, repeat)
        if on_result is not None:
            on_result(res)
        return res

    return await run_bounded([partial(one, s, r) for s, r in jobs], cfg.concurrency)
