"""Run a conversation (a sample with `turns`): send the turns in order, check each on its own.

Turn k is sent with turns 0..k-1 (prompts and replies, tool exchanges included) as history and
with the conversation's one mock sandbox, so mocks keep their state across turns. Each turn is
asserted and judged on its own (the judge also sees the conversation so far); the sample's
scores are the means over the turns (`omk.scoring.layers.score_turns`) and it passes when every
graded turn passes. A target failure on a turn makes the sample `error`: the turns before it
keep their results and the turns after it are reported as `skipped` (never sent).

The response cache holds whole conversations: a hit replays every turn, a miss runs them all.
"""

from __future__ import annotations

import dataclasses
import time

from omk.core.tasks import gather_all
from omk.domain.compose import compose_turn_prompt
from omk.domain.messages import reply_messages, user_message
from omk.domain.workspace import WorkFolder, checks_workspace
from omk.records import MockStats, SampleResult, Tokens, Trace, TurnResult
from omk.runner.grading import RunConfig, grade
from omk.runner.retry import TargetFailure, call_with_retries
from omk.samples.model import Sample
from omk.scoring.layers import is_graded, score_turns
from omk.store.cache import conversation_key, identity_kind
from omk.targets.base import Target, TargetResult
from omk.targets.mocks import MockSandbox
from omk.targets.session import Session


def turn_view(sample: Sample, index: int) -> Sample:
    """The sample as one turn sees it: the turn's prompt and context, the sample's assertions
    then the turn's, the turn's rubric (else the sample's) and the dimensions of both (the
    turn's win on a shared name). Custom hooks get its `raw`: the sample's fields with this
    turn's `prompt`/`context` and `turn: {index, count}`."""
    turn = sample.turns[index]
    raw = {**sample.raw, "prompt": turn.prompt, "turn": {"index": index, "count": len(sample.turns)}}
    if turn.context is not None:
        raw["context"] = turn.context
    return dataclasses.replace(
        sample,
        prompt=turn.prompt,
        context=turn.context,
        assertions=[*sample.assertions, *turn.assertions],
        rubric=turn.rubric or sample.rubric,
        dimensions={**(sample.dimensions or {}), **(turn.dimensions or {})} or None,
        raw=raw,
        turns=(),
    )


async def produce_turns(
    sample: Sample, prompts: list[str], target: Target, cfg: RunConfig, repeat: int
) -> tuple[list[tuple[TargetResult, int]], TargetFailure | None, bool]:
    """(each sent turn's result and calls made, the failure that stopped it or None, from cache)."""
    cache = None if checks_workspace(sample) else cfg.cache  # the folder an agent leaves is not cached
    identity = target.cache_identity() if cache is not None else None
    if cache is None or identity is None:  # not cached: --no-cache, or a target that is never cached
        return (*await _send_turns(sample, prompts, target, cfg), False)
    key = conversation_key(identity, sample, prompts, repeat)
    if (hit := await cache.fetch_turns(key)) is not None and len(hit) == len(prompts):
        return [(r, 0) for r in hit], None, True
    done, failure = await _send_turns(sample, prompts, target, cfg)
    if failure is None:  # only a whole conversation is cached
        cache.store_turns(key, [r for r, _ in done], identity_kind(identity))
    return done, failure, False


async def _send_turns(
    sample: Sample, prompts: list[str], target: Target, cfg: RunConfig
) -> tuple[list[tuple[TargetResult, int]], TargetFailure | None]:
    """Send the turns in order: each turn's result and calls made, and the failure that stopped them."""
    sandbox = MockSandbox.for_sample(sample)
    history: list[dict] = []
    done: list[tuple[TargetResult, int]] = []
    try:
        for index, prompt in enumerate(prompts):
            sandbox.start_turn()
            session = Session(index=index, count=len(prompts), sandbox=sandbox, history=list(history))
            try:
                produced, attempts = await call_with_retries(target, sample, prompt, cfg.timeout, cfg.retry, session)
            except TargetFailure as exc:
                return done, exc
            done.append((produced, attempts))
            history += [user_message(prompt), *reply_messages(produced.output, produced.messages)]
        return done, None
    finally:  # what the target started for the conversation (an MCP server) ends with it
        await sandbox.close()


async def run_conversation(sample: Sample, target: Target, cfg: RunConfig, repeat: int = 0) -> SampleResult:
    started = time.perf_counter()
    prompts = [compose_turn_prompt(sample, i) for i in range(len(sample.turns))]
    produced, failure, cached = await produce_turns(sample, prompts, target, cfg, repeat)
    outputs = [out.output or "" for out, _ in produced]
    folder = produced[-1][0].workspace if produced and failure is None else None
    try:  # every turn's checks see the folder as the last turn left it
        sent = await gather_all(*(_sent_turn(sample, i, prompts[i], done, outputs, cfg, folder) for i, done in enumerate(produced)))
    finally:
        for out, _ in produced:
            if out.workspace is not None:
                out.workspace.remove()
    turns = (*sent, *_unsent_turns(prompts, len(sent), failure))
    broken = next((t for t in turns if t.status == "error"), None)
    graded = [t for t in turns if t.passed is not None]
    return SampleResult.start(
        sample,
        prompts[0],
        repeat,
        status="ok" if broken is None else "error",
        error=None if broken is None else f"turn {broken.index + 1}: {broken.error}",
        output=sent[-1].output if sent else None,
        trace=combine_traces([t.trace for t in sent]),
        scores=score_turns([t.scores for t in turns]) if broken is None else None,
        passed=broken is None and bool(graded) and all(t.passed for t in graded),
        duration_ms=(time.perf_counter() - started) * 1000,
        attempts=sum(t.attempts for t in turns),
        cached=cached,
        turns=turns,
    )


def _unsent_turns(prompts: list[str], sent: int, failure: TargetFailure | None) -> list[TurnResult]:
    """The turns after the last one sent: the one the target failed on, then those never sent."""
    turns = [TurnResult(index=i, prompt=prompts[i], status="skipped") for i in range(sent, len(prompts))]
    if failure is not None and turns:
        turns[0] = TurnResult(index=sent, prompt=prompts[sent], status="error", error=str(failure), attempts=failure.attempts)
    return turns


async def _sent_turn(
    sample: Sample,
    index: int,
    prompt: str,
    done: tuple[TargetResult, int],
    outputs: list[str],
    cfg: RunConfig,
    folder: WorkFolder | None,
) -> TurnResult:
    """A sent turn's result: what the target said, checked, judged and scored."""
    (out, attempts), history = done, [(sample.turns[k].prompt, outputs[k]) for k in range(index)]
    graded = await grade(
        turn_view(sample, index),
        out.output or "",
        out.trace,
        cfg,
        turn=sample.turns[index],
        history=history,
        workspace=folder,
    )
    return TurnResult(
        index=index,
        prompt=prompt,
        status="error" if graded.error else "ok",
        error=graded.error,
        output=out.output,
        trace=graded.trace,
        assertions=graded.assertions,
        judge=graded.judge,
        judge_skipped=graded.judge_skipped,
        scores=graded.scores,
        passed=False if graded.error else (graded.passed if is_graded(graded.scores) else None),
        attempts=attempts,
    )


def _sum(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def combine_traces(traces: list[Trace]) -> Trace:
    """The whole conversation's trace: every turn's tool calls in order, summed model turns,
    cost, latency and tokens (None when no turn reported one), summed mock statistics; the last
    turn's stop reason and session."""
    stats = [t.mock_stats for t in traces if t.mock_stats is not None]
    mock_stats = None
    if stats:
        per_mock: dict[str, int] = {}
        for s in stats:
            for key, n in s.per_mock.items():
                per_mock[key] = per_mock.get(key, 0) + n
        mock_stats = MockStats(hits=sum(s.hits for s in stats), misses=sum(s.misses for s in stats), per_mock=per_mock)
    cost = _sum([t.cost_usd for t in traces])
    latency = _sum([t.latency_ms for t in traces])
    api_latency = _sum([t.api_latency_ms for t in traces])
    counts = [t.tokens.to_json() for t in traces]
    token_keys = dict.fromkeys(k for c in counts for k in c)  # input, output, then cache_* if any
    tokens = {k: _sum([c.get(k) for c in counts]) for k in {"input": None, "output": None, **token_keys}}
    model_turns = _sum([t.turns for t in traces])
    last = traces[-1] if traces else Trace()
    return Trace(
        turns=int(model_turns) if model_turns is not None else None,
        tool_calls=tuple(c for t in traces for c in t.tool_calls),
        cost_usd=round(cost, 6) if cost is not None else None,
        latency_ms=round(latency, 1) if latency is not None else None,
        tokens=Tokens.of({k: int(v) if v is not None else None for k, v in tokens.items()}),
        mock_stats=mock_stats,
        notes=tuple(f"turn {i + 1}: {note}" for i, t in enumerate(traces) for note in t.notes),
        api_latency_ms=round(api_latency, 1) if api_latency is not None else None,
        stop_reason=last.stop_reason,
        session_id=last.session_id,
        workspace=last.workspace,
    )
