"""What grading one output needs and does: the run's settings (`RunConfig`), the checks, the
judge and the scores of one output (`grade`), and the run's secrets masked in what checks say.

A single-output sample (omk.runner.sample_run) and a conversation's turns (omk.runner.conversation)
both grade here, so neither imports the other's module for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from omk.assertions.context import CheckContext, Hooks
from omk.assertions.evaluate import evaluate
from omk.core.secrets import Masker
from omk.domain.mock_defs import DRIFT_PREFIX, RECORDED, drift_notes
from omk.domain.workspace import WorkFolder
from omk.io.process import DEFAULT_MAX_OUTPUT_BYTES
from omk.judge import NO_JUDGE, Judge
from omk.records import AssertionResult, Scores, Trace
from omk.runner.retry import RetryPolicy
from omk.samples.model import Layer, Sample, Status, Turn
from omk.scoring.layers import passes, score_sample
from omk.store.cache import ResponseCache

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
    ctx = CheckContext(  # by position, in the fields' order (made for every output): output, trace, sample, judge,
        # no_judge, hooks, regex_timeout_s, skills, turn, history, workspace, command_timeout_s, max_output_bytes
        output, trace, sample, cfg.judge, cfg.no_judge, cfg.hooks, cfg.regex_timeout, cfg.skills, turn, history,
        workspace.folder if workspace is not None else None, cfg.timeout, cfg.max_output_bytes,
    )  # fmt: skip
    assertions = await evaluate(sample.assertions, ctx)
    drift, trace = _drift(sample, trace) if sample.provenance == RECORDED else (None, trace)
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
    return drift, msgspec.structs.replace(trace, notes=(*trace.notes, *new)) if new else trace


def drift_failure(drift: list[str]) -> AssertionResult:
    """Under mocksStrict a recorded sample whose agent drifted fails, the drift named: a
    failed behavior check, so every report format shows why."""
    message = "; ".join(n.removeprefix("mock drift: ") for n in drift)
    return AssertionResult(
        type="mock_drift", layer=Layer.BEHAVIOR, status=Status.FAILED, weight=1.0, negate=False, message=message
    )


def masked(result: AssertionResult, mask: Masker) -> AssertionResult:
    """`result` with the run's secrets masked in its message and its children's: a custom hook's
    words (its message, its exception, a crashed worker's stderr) enter the records here."""
    if not mask or (result.message is None and not result.children):
        return result
    message = mask(result.message) if result.message is not None else None
    children = tuple(masked(c, mask) for c in result.children)
    if message == result.message and all(new is old for new, old in zip(children, result.children, strict=True)):
        return result  # no secret in it: the record as it is (most are)
    return msgspec.structs.replace(result, message=message, children=children)
