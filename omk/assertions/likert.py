"""The Microsoft 365 Agents Toolkit LLM evaluators as judge-scored assertions (1-5, pass at 3).

`relevance`, `coherence`, `groundedness` (needs `context`: the assertion's, else the sample's)
and `similarity` (needs `reference`, the expected answer). Skipped without a judge, like every
judge-scored type; the prompts live in omk/judge/likert.py.
"""

from __future__ import annotations

from omk.assertions.registry import JUDGE_THRESHOLD, judge_assertion

_TEXT = {"type": "string", "minLength": 1}
_QUERY = {"type": "string"}  # the question judged against; default: the (turn's) prompt

relevance = judge_assertion(
    "relevance",
    "The judge rates how well the output addresses the prompt (M365 Relevance).",
    module=__name__,
    schema={"properties": {"threshold": JUDGE_THRESHOLD, "query": _QUERY}},
)
coherence = judge_assertion(
    "coherence",
    "The judge rates how logical and well organised the output is (M365 Coherence).",
    module=__name__,
    schema={"properties": {"threshold": JUDGE_THRESHOLD, "query": _QUERY}},
)
groundedness = judge_assertion(
    "groundedness",
    "The judge rates how well the output is supported by `context` (M365 Groundedness).",
    module=__name__,
    schema={"properties": {"threshold": JUDGE_THRESHOLD, "query": _QUERY, "context": _TEXT}},
)
similarity = judge_assertion(
    "similarity",
    "The judge rates the output as equivalent to the expected answer `reference` (M365 Similarity).",
    module=__name__,
    schema={"required": ["reference"], "properties": {"reference": _TEXT, "threshold": JUDGE_THRESHOLD, "query": _QUERY}},
)
