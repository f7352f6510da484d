"""Run samples through a target, assert, score; stream each result as it finishes.

One failing sample never stops the run: a target error marks that sample `error` and the others
go on. Results are handed to `on_result` in completion order (for `results.jsonl`) and returned
in sample order (for the report).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.engine import evaluate
from omk.model import Sample, SampleResult
from omk.scoring.layers import passes, score_sample
from omk.targets.base import Target, TargetError
from omk.targets.prompt import compose_prompt


@dataclass(slots=True)
class RunConfig:
    threshold: float = 3.5
    concurrency: int = 4
    timeout: float = 120.0
    regex_timeout: float = 2.0
    judge: Any = None
    hooks: Any = None


async def run_sample(sample: Sample, target: Target, cfg: RunConfig) -> SampleResult:
    started = time.perf_counter()
    prompt = compose_prompt(sample)
    result = SampleResult(sample=sample, status="ok", prompt=prompt)
    try:
        produced = await asyncio.wait_for(target.run(sample, prompt), timeout=cfg.timeout)
    except TargetError as exc:
        result.status, result.error = "error", str(exc)
    except TimeoutError:
        result.status, result.error = "error", f"target timed out after {cfg.timeout:g}s"
    except Exception as exc:  # a target bug must not end the run
        result.status, result.error = "error", f"target failed: {type(exc).__name__}: {exc}"
    if result.status == "error":
        result.duration_ms = (time.perf_counter() - started) * 1000
        return result
    result.output, result.trace = produced.output, produced.trace
    ctx = CheckContext(
        output=produced.output,
        trace=produced.trace,
        sample=sample,
        judge=cfg.judge,
        hooks=cfg.hooks,
        regex_timeout_s=cfg.regex_timeout,
    )
    result.assertions = await evaluate(sample.assertions, ctx)
    judge_score = None
    if sample.has_judge_work:
        if cfg.judge is None:
            result.judge_skipped = "no judge configured"
        else:
            result.judge = await cfg.judge.grade(sample, produced.output, produced.trace)
            judge_score = result.judge.get("score") if result.judge else None
    result.scores = score_sample(result.assertions, judge_score)
    result.passed = passes(result.scores, cfg.threshold)
    result.duration_ms = (time.perf_counter() - started) * 1000
    return result


async def run_samples(
    samples: list[Sample],
    target: Target,
    cfg: RunConfig,
    on_result: Callable[[SampleResult], None] | None = None,
) -> list[SampleResult]:
    gate = asyncio.Semaphore(cfg.concurrency)

    async def one(sample: Sample) -> SampleResult:
        async with gate:
            res = await run_sample(sample, target, cfg)
        if on_result is not None:
            on_result(res)
        return res

    return list(await asyncio.gather(*(one(s) for s in samples)))
