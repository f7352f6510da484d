"""Run samples through a target, assert, score; stream each result as it finishes.

One failing sample never stops the run: a target error marks that sample `error` and the others
go on. Results are handed to `on_result` in completion order (for `results.jsonl`) and returned
in sample order (for the report).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from omk.assertions.context import CheckContext, Hooks
from omk.assertions.evaluate import evaluate
from omk.cache import ResponseCache, cache_key, identity_kind
from omk.compose import compose_prompt
from omk.judge import NO_JUDGE, Judge
from omk.mock_defs import DRIFT_PREFIX, RECORDED, drift_notes
from omk.model import Layer, Sample, Status, Turn
from omk.process import DEFAULT_MAX_OUTPUT_BYTES
from omk.records import AssertionResult, SampleResult, Scores, Trace
from omk.runner.retry import RetryPolicy, TargetFailure, call_with_retries
from omk.scoring.layers import passes, score_sample
from omk.secrets import Masker
from omk.targets.base import Target, TargetResult
from omk.tasks import run_bounded
from omk.workspace import WorkFolder, checks_workspace

if TYPE_CHECKING:
    from omk.records.judging import JudgeBlock


@dataclass(slots=True)
class RunConfig:
    threshold: float = 3.5
    concurrency: int = 4
    timeout: float = 120.0
    regex_timeout: float = 2.0
    judge: Judge | None = None
    no_judge: str = NO_JUDGE  # why judge items are skipped when `judge` is None
    hooks: Hooks | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cache: ResponseCache | None = None  # None: --no-cache, or no cache for this target
    mask: Masker = field(default_factory=Masker)  # the run's secrets, masked in what checks and hooks say
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES  # output kept from a `command_passes` command
    skills: tuple[str, ...] | None = None  # the skills the run installs (CheckContext.skills)


async def produce(
    sample: Sample, prompt: str, target: Target, cfg: RunConfig, repeat: int = 0
) -> tuple[TargetResult, int, bool]:
    """(result, calls made, from cache). Only successful calls are cached; raises TargetFailure."""
    cache = cfg.cache if cfg.cache is None or not checks_workspace(sample) else None  # the folder an agent leaves is not cached
    identity = target.cache_identity() if cache is not None else None
    if cache is None or identity is None:  # not cached: --no-cache, or a target that is never cached
        produced, attempts = await call_with_retries(target, sample, prompt, cfg.timeout, cfg.retry)
        return produced, attempts, False
    key = cache_key(identity, sample, prompt, repeat)
    if (hit := await cache.fetch(key)) is not None:
        return hit, 0, True
    produced, attempts = await call_with_retries(target, sample, prompt, cfg.timeout, cfg.retry)
    cache.store(key, produced, identity_kind(identity))
    return produced, attempts, False


async def run_sample(sample: Sample, target: Target, cfg: RunConfig, repeat: int = 0) -> SampleResult:
    if sample.turns:
        from omk.runner.conversation import run_conversation

        return await run_conversation(sample, target, cfg, repeat)
    started = time.perf_counter()
    prompt = compose_prompt(sample)
    try:
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


@dataclass(slots=True)
class Grading:
    """One output's checks, judge and scores, and its trace with any mock drift noted."""

    trace: Trace
    assertions: tuple[AssertionResult, ...]
    scores: Scores
    passed: bool
    judge: JudgeBlock | None = None
    judge_skipped: str | None = None
    error: str | None = None  # the judge gave up on this output


async def grade(
    sample: Sample,
    output: str,
    trace: Trace,
    cfg: RunConfig,
    *,
    turn: Turn | None = None,
    history: list[tuple[str, str]] | None = None,
    workspace: WorkFolder | None = None,
) -> Grading:
    """Assert, judge and score one output (a sample's, or one turn's with `sample` its view)."""
    ctx = CheckContext(
        output=output,
        trace=trace,
        sample=sample,
        judge=cfg.judge,
        no_judge=cfg.no_judge,
        hooks=cfg.hooks,
        regex_timeout_s=cfg.regex_timeout,
        skills=cfg.skills,
        turn=turn,
        history=history,
        workspace=workspace.folder if workspace is not None else None,
        command_timeout_s=cfg.timeout,
        max_output_bytes=cfg.max_output_bytes,
    )
    assertions = await evaluate(sample.assertions, ctx)
    drift, trace = _drift(sample, trace)
    if drift and sample.mocks_strict:
        assertions.append(drift_failure(drift))
    if cfg.mask:
        assertions = [masked(a, cfg.mask) for a in assertions]
    block: JudgeBlock | None = None
    skipped = None
    if sample.has_judge_work:
        if cfg.judge is None:
            skipped = cfg.no_judge
        else:
            from omk.records.judging import JudgeBlock

            extra = {"history": history} if history else {}  # the conversation so far, for a later turn
            block = JudgeBlock.read(await cfg.judge.grade(sample, output, trace, **extra))  # read once, typed
    scores = score_sample(assertions, block.score if block is not None else None)
    error = cfg.judge.failure(ctx, block) if cfg.judge is not None else None
    passed = passes(scores, cfg.threshold) and not (drift and sample.mocks_strict)
    return Grading(trace, tuple(assertions), scores, passed, block, skipped, error)


def _drift(sample: Sample, trace: Trace) -> tuple[list[str], Trace]:
    """A recorded sample's tool calls no recorded mock answered, and the trace with them noted."""
    if sample.provenance != RECORDED:
        return [], trace
    from omk.targets.mocks import mock_matches  # only a recorded sample's calls are matched again here

    found = drift_notes(sample.provenance, sample.mocks, trace.tool_calls, mock_matches)
    new = [n for n in found if n not in trace.notes]
    drift = [n for n in found if n.startswith(DRIFT_PREFIX)]
    return drift, dataclasses.replace(trace, notes=(*trace.notes, *new)) if new else trace


def drift_failure(drift: list[str]) -> AssertionResult:
    """Under mocksStrict a recorded sample whose agent drifted fails, the drift named: a
    failed behavior check, so every report format shows why."""
    message = "; ".join(n.removeprefix("mock drift: ") for n in drift)
    return AssertionResult(
        type="mock_drift", layer=Layer.BEHAVIOR, status=Status.FAILED, weight=1.0, negate=False, message=message
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


def masked(result: AssertionResult, mask: Masker) -> AssertionResult:
    """`result` with the run's secrets masked in its message and its children's: a custom hook's
    words (its message, its exception, a crashed worker's stderr) enter the records here."""
    if not mask or (result.message is None and not result.children):
        return result
    message = mask(result.message) if result.message is not None else None
    children = tuple(masked(c, mask) for c in result.children)
    if message == result.message and all(new is old for new, old in zip(children, result.children, strict=True)):
        return result  # no secret in it: the record as it is (most are)
    return dataclasses.replace(result, message=message, children=children)
