"""Judge-scored assertions: an LLM judge gives 1-5, the assertion passes at `threshold` (default 3).

The engine skips these when no judge is configured; otherwise each check hands the work to the
judge (omk/judge/judge.py: prompts, parsing, ensembles, Mastra's answer relevancy).
"""

from __future__ import annotations

from omk.assertions.registry import JUDGE_THRESHOLD, RATIO, judge_assertion

DEFAULT_THRESHOLD = 3
_REFERENCE = {"type": "string", "minLength": 1}

semantic_similarity = judge_assertion(
    "semantic_similarity",
    "The judge rates the output's meaning as close to `reference`.",
    module=__name__,
    schema={"required": ["reference"], "properties": {"reference": _REFERENCE, "threshold": JUDGE_THRESHOLD}},
)
faithfulness = judge_assertion(
    "faithfulness",
    "The judge finds the output's claims supported by `reference` or the sample's context.",
    module=__name__,
    schema={"properties": {"reference": _REFERENCE, "threshold": JUDGE_THRESHOLD}},
)
answer_relevancy = judge_assertion(
    "answer_relevancy",
    "The judge finds the output's statements relevant to the prompt (Mastra's method).",
    module=__name__,
    schema={
        "properties": {
            "threshold": JUDGE_THRESHOLD,
            "uncertainty_weight": RATIO,  # weight of "unsure" statements, default 0.3 (Mastra)
            "scale": {"type": "number", "exclusiveMinimum": 0},
        }
    },
)
context_recall = judge_assertion(
    "context_recall",
    "The judge finds the key facts of `reference` or the sample's context covered by the output.",
    module=__name__,
    schema={"properties": {"reference": _REFERENCE, "threshold": JUDGE_THRESHOLD}},
)
