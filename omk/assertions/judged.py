"""Judge-scored assertions: an LLM judge gives 1-5, the assertion passes at `threshold` (default 3).

The engine skips these when no judge is configured; otherwise each check hands the work to the
judge (omk/judge/judge.py: prompts, parsing, ensembles, Mastra's answer relevancy).
"""

from __future__ import annotations

from omk.assertions.context import CheckContext
from omk.assertions.registry import JUDGE_THRESHOLD, RATIO, assertion
from omk.model import AssertionSpec, Layer, Outcome

DEFAULT_THRESHOLD = 3
_REFERENCE = {"type": "string", "minLength": 1}


@assertion(
    "semantic_similarity",
    layer=Layer.FACT,
    kind="judge",
    schema={"required": ["reference"], "properties": {"reference": _REFERENCE, "threshold": JUDGE_THRESHOLD}},
)
async def semantic_similarity(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge rates the output's meaning as close to `reference`."""
    return await ctx.judge.check_assertion(spec, ctx)


@assertion(
    "faithfulness",
    layer=Layer.FACT,
    kind="judge",
    schema={"properties": {"reference": _REFERENCE, "threshold": JUDGE_THRESHOLD}},
)
async def faithfulness(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge finds the output's claims supported by `reference` or the sample's context."""
    return await ctx.judge.check_assertion(spec, ctx)


@assertion(
    "answer_relevancy",
    layer=Layer.FACT,
    kind="judge",
    schema={
        "properties": {
            "threshold": JUDGE_THRESHOLD,
            "uncertainty_weight": RATIO,  # weight of "unsure" statements, default 0.3 (Mastra)
            "scale": {"type": "number", "exclusiveMinimum": 0},
        }
    },
)
async def answer_relevancy(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge finds the output's statements relevant to the prompt (Mastra's method)."""
    return await ctx.judge.check_assertion(spec, ctx)


@assertion(
    "context_recall",
    layer=Layer.FACT,
    kind="judge",
    schema={"properties": {"reference": _REFERENCE, "threshold": JUDGE_THRESHOLD}},
)
async def context_recall(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge finds the key facts of `reference` or the sample's context covered by the output."""
    return await ctx.judge.check_assertion(spec, ctx)
