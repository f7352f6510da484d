"""The Microsoft 365 Agents Toolkit LLM evaluators: relevance, coherence, groundedness, similarity.

Each is one judge call that returns an integer 1-5 with a reason, and passes at `threshold`
(default 3), as the Azure AI Evaluation SDK metrics runevals uses do. The wording is ours; the
anchors are the M365 evaluators' (5 = fully meets, 3 = partially, 1 = does not). Templates are hashed like
omk's own (`hashes()`), so reports show which wording graded them.

The question judged against is the assertion's `query` when set (the M365 reader sets it on each
turn of a conversation), else the current turn's prompt, else the sample's prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omk.judge import prompts
from omk.judge.prompts import AssertionTemplate
from omk.samples.model import AssertionSpec, Outcome

if TYPE_CHECKING:
    from omk.assertions.context import CheckContext

KINDS = ("relevance", "coherence", "groundedness", "similarity")
NO_CONTEXT = "skipped: no context to judge groundedness against (give the item or the assertion a `context`); not scored"

_ASK = {
    "en": 'Return only JSON: {"reason": "<short reason>", "score": <integer 1-5>}',
    "zh": '只返回 JSON：{"reason": "<简短理由>", "score": <1-5 的整数>}',
}

TEMPLATES: dict[str, dict[str, AssertionTemplate]] = {
    "relevance": {
        "en": AssertionTemplate(
            system="You rate how relevant an AI response is to the user's query. Return only JSON.",
            sections=("## Query", "## Response"),
            procedure=(
                "Relevance is how well the response addresses the query: does it answer what was asked, "
                "accurately and completely, using only what the query and response contain?"
            ),
            scale=(
                "Scale: 5=fully addresses the query, 4=addresses it with minor gaps, 3=partially addresses it, "
                "2=mostly misses it, 1=does not address the query"
            ),
            debias=False,
        ),
        "zh": AssertionTemplate(
            system="你评估 AI 回答与用户问题的相关性。只返回 JSON。",
            sections=("## 问题", "## 回答"),
            procedure="相关性指回答对问题的回应程度：是否准确、完整地回答了所问的内容（仅依据问题和回答本身）。",
            scale="评分标准：5=完全回应问题, 4=基本回应但有小缺口, 3=部分回应, 2=大部分偏离, 1=没有回应问题",
            debias=False,
        ),
    },
    "coherence": {
        "en": AssertionTemplate(
            system="You rate how coherent an AI response is. Return only JSON.",
            sections=("## Query", "## Response"),
            procedure=(
                "Coherence is how logical and well organised the response is: ideas follow from one another, "
                "the structure is clear, and it reads as one consistent answer to the query."
            ),
            scale=(
                "Scale: 5=clear, logical and well organised, 4=mostly clear, 3=somewhat organised but could be "
                "clearer, 2=hard to follow, 1=incoherent or confused"
            ),
            debias=False,
        ),
        "zh": AssertionTemplate(
            system="你评估 AI 回答的连贯性。只返回 JSON。",
            sections=("## 问题", "## 回答"),
            procedure="连贯性指回答的逻辑性和条理性：观点前后衔接、结构清楚、读来是一个前后一致的回答。",
            scale="评分标准：5=清晰、合乎逻辑、条理分明, 4=大体清晰, 3=有一定条理但可以更清楚, 2=难以理解, 1=不连贯或混乱",
            debias=False,
        ),
    },
    "groundedness": {
        "en": AssertionTemplate(
            system="You rate how well an AI response is grounded in the given context. Return only JSON.",
            sections=("## Query", "## Context", "## Response"),
            procedure=(
                "Groundedness is how far the response's claims are supported by the context (and the sources it "
                "cites). Claims the context does not support, or that contradict it, lower the score."
            ),
            scale=(
                "Scale: 5=fully grounded in the context, 4=mostly grounded (minor unsupported details), "
                "3=partly grounded, 2=mostly unsupported, 1=ungrounded or contradicts the context"
            ),
            debias=True,
        ),
        "zh": AssertionTemplate(
            system="你评估 AI 回答是否以给定上下文为依据。只返回 JSON。",
            sections=("## 问题", "## 上下文", "## 回答"),
            procedure="依据性指回答中的陈述在多大程度上被上下文（及其引用的来源）支持。无依据或与上下文矛盾的陈述会降低分数。",
            scale="评分标准：5=完全有依据, 4=大部分有依据（少量无依据细节）, 3=部分有依据, 2=大部分无依据, 1=毫无依据或与上下文矛盾",
            debias=True,
        ),
    },
    "similarity": {
        "en": AssertionTemplate(
            system="You rate how similar an AI response is to the expected answer, given the query. Return only JSON.",
            sections=("## Query", "## Expected answer", "## Response"),
            procedure="Similarity is semantic equivalence: does the response say what the expected answer says (same meaning, not same wording)?",
            scale=(
                "Scale: 5=semantically equivalent to the expected answer, 4=mostly equivalent, 3=partly matches, "
                "2=barely matches, 1=does not match the expected answer"
            ),
            debias=False,
        ),
        "zh": AssertionTemplate(
            system="你结合问题评估 AI 回答与预期答案的相似程度。只返回 JSON。",
            sections=("## 问题", "## 预期答案", "## 回答"),
            procedure="相似性指语义是否等价：回答表达的意思是否与预期答案一致（含义相同，而非字面相同）。",
            scale="评分标准：5=与预期答案语义等价, 4=大体等价, 3=部分匹配, 2=略有匹配, 1=与预期答案不符",
            debias=False,
        ),
    },
}

_SHORT_DEBIAS = {
    "en": "## Important: length is not a quality signal\nJudge substance; a longer response does not earn a higher score.",
    "zh": "## 重要：长度不是质量信号\n评分时聚焦内容实质，不要因回答更长就给更高分。",
}


def prompt(kind: str, slots: tuple[str, ...], lang: str) -> tuple[str, str]:
    """(system, user) for one Likert judgement."""
    return prompts.render_template(TEMPLATES[kind][lang], slots, _ASK[lang], _SHORT_DEBIAS[lang])


def hashes(lang: str) -> dict[str, str]:
    out = {}
    for kind, by_lang in TEMPLATES.items():
        system, user = prompt(kind, prompts.placeholder_slots(by_lang[lang]), lang)
        out[kind] = prompts._short_hash(f"{kind}-likert-{lang}\n{system}\n{user}")
    return out


def question(spec: AssertionSpec, ctx: CheckContext) -> str:
    """The query this judgement is about: `query`, the current turn's prompt, the sample's prompt."""
    query = spec.get("query")
    if isinstance(query, str) and query.strip():
        return query
    turn = getattr(ctx, "turn", None)
    turn_prompt = getattr(turn, "prompt", None)
    return turn_prompt if isinstance(turn_prompt, str) and turn_prompt.strip() else ctx.sample.prompt


def slots(spec: AssertionSpec, ctx: CheckContext) -> tuple[str, ...] | Outcome:
    """What fills the template, or an error Outcome when a needed input is missing (no call made)."""
    kind = spec.type
    query = question(spec, ctx)
    if kind in ("relevance", "coherence"):
        return (query, ctx.output)
    if kind == "groundedness":
        context = spec.get("context") or ctx.sample.context
        if not isinstance(context, str) or not context.strip():
            # As runevals, a dataset may ask for Groundedness on items without context: the
            # metric is skipped for that item, visibly, and the rest of the item is scored.
            return Outcome(False, message=NO_CONTEXT, skipped=True)
        return (query, context, ctx.output)
    reference = spec.get("reference")
    if not isinstance(reference, str) or not reference.strip():
        return Outcome(False, message="similarity: needs the expected answer (`reference`); no judge call made", error=True)
    return (query, reference, ctx.output)
