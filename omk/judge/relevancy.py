"""Answer relevancy as Mastra computes it.

Two judge calls: split the output into statements, then give each statement a verdict against the
question: "yes" counts 1, "unsure" counts `uncertainty_weight` (default 0.3), anything else 0.
The ratio is their mean (0 when there are no statements). Mastra reports `ratio × scale`; omk maps
the ratio to 1-5 as `1 + 4·ratio` so it sits beside the other judge-scored types and their
threshold. Mastra's fourth step (an LLM-written reason) is replaced by a reason built from the
verdicts: it costs no call and cannot contradict the score.
"""

from __future__ import annotations

from collections import Counter

from omk.scoring.layers import round2

DEFAULT_UNCERTAINTY_WEIGHT = 0.3


def relevancy_ratio(verdicts: list[str], uncertainty_weight: float = DEFAULT_UNCERTAINTY_WEIGHT) -> float:
    if not verdicts:
        return 0.0
    weights = {"yes": 1.0, "unsure": uncertainty_weight}
    return sum(weights.get(v.strip().lower(), 0.0) for v in verdicts) / len(verdicts)


def ratio_to_five(ratio: float) -> float:
    return round2(1 + 4 * ratio)


def mastra_score(ratio: float, scale: float = 1.0) -> float:
    """Mastra's own number: the ratio times `scale`, rounded half-up to 2 places."""
    return round2(ratio * scale)


def relevancy_reason(statements: list[str], verdicts: list[dict[str, str]], score: float) -> str:
    if not statements:
        return f"score {score:g}: the output holds no statement"
    counts = Counter(v["result"] for v in verdicts)
    head = (
        f"score {score:g}: {len(statements)} statement(s), {counts.get('yes', 0)} relevant, "
        f"{counts.get('unsure', 0)} partly, {len(statements) - counts.get('yes', 0) - counts.get('unsure', 0)} not"
    )
    off = [f"{s!r} ({v['reason']})" if v["reason"] else repr(s) for s, v in zip(statements, verdicts, strict=True) if v["result"] != "yes"]
    return head + ("; not directly relevant: " + "; ".join(off[:3]) if off else "")
