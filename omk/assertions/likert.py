"""The Microsoft 365 Agents Toolkit LLM evaluators as judge-scored assertions (1-5, pass at 3).

`relevance`, `coherence`, `groundedness` (needs `context`: the assertion's, else the sample's)
and `similarity` (needs `reference`, the expected answer). Skipped without a judge, like every
judge-scored type; the prompts live in omk/judge/likert.py.
"""

from __future__ import annotations

from omk.assertions.context import CheckContext
from omk.assertions.registry import JUDGE_THRESHOLD, assertion
from omk.model import AssertionSpec, Layer, Outcome

_TEXT = {"type": "string", "minLength": 1}
_QUERY = {"type": "string"}  # the question judged against; default: the (turn's) prompt


@assertion("relevance", layer=Layer.FACT, kind="judge", schema={"properties": {"threshold": JUDGE_THRESHOLD, "query": _QUERY}})
async def relevance(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge rates how well the output addresses the prompt (M365 Relevance)."""
    return await ctx.judge.check_assertion(spec, ctx)


@assertion("coherence", layer=Layer.FACT, kind="judge", schema={"properties": {"threshold": JUDGE_THRESHOLD, "query": _QUERY}})
async def coherence(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge rates how logical and well organised the output is (M365 Coherence)."""
    return await ctx.judge.check_assertion(spec, ctx)


@assertion(
    "groundedness",
    layer=Layer.FACT,
    kind="judge",
    schema={"properties": {"threshold": JUDGE_THRESHOLD, "query": _QUERY, "context": _TEXT}},
)
async def groundedness(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge rates how well the output is supported by `context` (M365 Groundedness)."""
    return await ctx.judge.check_assertion(spec, ctx)


@assertion(
    "similarity",
    layer=Layer.FACT,
    kind="judge",
    schema={"required": ["reference"], "properties": {"reference": _TEXT, "threshold": JUDGE_THRESHOLD, "query": _QUERY}},
)
async def similarity(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The judge rates the output as equivalent to the expected answer `reference` (M365 Similarity)."""
    return await ctx.judge.check_assertion(spec, ctx)
