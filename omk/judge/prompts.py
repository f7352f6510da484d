"""The judge's prompt templates, English and Chinese, and their version hashes.

The rubric template is byte-exact to omk 0.23 for Chinese: its frozen
hashes are `v3-cot-length = 629bf3b8c41d` and `v2-cot = fdc81b19c721` (tests/test_judge_prompts.py
keeps them so). The English template says the same things in English and carries its own version
tag and hash. A hash is `sha256(VERSION + "\\n" + template filled with "<P>","<R>","<O>","<T>")`,
first 12 hex characters: reports with the same hash asked the judge the same way.

Any change to a template here changes its hash: bump the version tag when you mean it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from omk.records import Trace

LANGS = ("en", "zh")

VERSIONS = {
    ("zh", True): "v3-cot-length",
    ("zh", False): "v2-cot",
    ("en", True): "v3-cot-length-en",
    ("en", False): "v2-cot-en",
}

RUBRIC_SYSTEM = {
    "zh": "你是一个严格的 AI 输出质量评审员。先逐条对照评分标准做推理，再给最终分数。只返回 JSON，不要其他内容。",
    "en": (
        "You are a strict reviewer of AI output quality. Reason through the scoring criteria one by "
        "one first, then give the final score. Return only JSON, nothing else."
    ),
}

LENGTH_DEBIAS = {
    "zh": "\n".join(
        [
            "## 重要：长度不是质量信号",
            "评分时聚焦内容实质与正确性。回答的篇幅、行文丰富度、结构复杂度本身不是质量指标 ——",
            "简洁正确的回答不应因短而扣分；冗长但偏题或重复的回答不应因长而加分。",
            "研究显示 LLM 评委容易隐性偏向更长的回答，请在打分前先警觉这一点。",
        ]
    ),
    "en": "\n".join(
        [
            "## Important: length is not a quality signal",
            "Judge substance and correctness. Length, richness of wording and structural complexity are not quality in themselves —",
            "a concise correct answer must not lose points for being short; a long answer that drifts or repeats must not gain points for being long.",
            "LLM judges are known to favour longer answers without noticing; watch for this before you score.",
        ]
    ),
}

_RUBRIC_TEXT = {
    "zh": {
        "head": "请对以下 AI 输出进行质量评分（template {version}）。",
        "task": "## 原始任务",
        "criteria": "## 评分标准",
        "output": "## AI 输出",
        "trace": "## Agent 执行过程",
        "trace_note": "请同时考虑执行过程的合理性（工具选择、步骤效率、错误恢复）。",
        "procedure": "## 评分流程",
        "step1": "1. 逐条对照评分标准，先做推理（reasoning）：列出 AI 输出哪些点对应哪条标准，哪些缺失，哪些有歧义。",
        "step2": "2. 基于推理给出最终分数（1-5 的整数）和简短理由。",
        "ask": "请返回 JSON（不要包含 markdown 代码块标记）：",
        "json": '{"reasoning": "<对照标准的逐条推理>", "score": <1-5的整数>, "reason": "<最终结论的简短理由>"}',
        "scale": "评分标准：1=完全不达标, 2=部分涉及, 3=基本达标, 4=较好, 5=优秀",
    },
    "en": {
        "head": "Please score the quality of the following AI output (template {version}).",
        "task": "## Original task",
        "criteria": "## Scoring criteria",
        "output": "## AI output",
        "trace": "## Agent execution",
        "trace_note": "Also weigh how reasonable the process was (tool choice, step efficiency, error recovery).",
        "procedure": "## Scoring procedure",
        "step1": "1. Go through the criteria one by one and reason first: which points of the AI output meet which criterion, what is missing, what is ambiguous.",
        "step2": "2. From that reasoning, give the final score (an integer 1-5) and a short reason.",
        "ask": "Return JSON (without markdown code fences):",
        "json": '{"reasoning": "<criterion-by-criterion reasoning>", "score": <integer 1-5>, "reason": "<short reason for the verdict>"}',
        "scale": "Scale: 1=fails completely, 2=partly addressed, 3=basically meets, 4=good, 5=excellent",
    },
}


def rubric_version(lang: str, debias: bool) -> str:
    return VERSIONS[(lang, debias)]


def rubric_prompt(prompt: str, rubric: str, output: str, trace_summary: str | None, lang: str, debias: bool) -> str:
    """The user message for one rubric (or one dimension) judgement."""
    t = _RUBRIC_TEXT[lang]
    version = rubric_version(lang, debias)
    trace = ["", t["trace"], trace_summary, "", t["trace_note"]] if trace_summary else []
    debias_block = ["", LENGTH_DEBIAS[lang]] if debias else []
    return "\n".join(
        [
            t["head"].format(version=version),
            "",
            t["task"],
            prompt,
            "",
            t["criteria"],
            rubric,
            "",
            t["output"],
            output,
            *trace,
            *debias_block,
            "",
            t["procedure"],
            t["step1"],
            t["step2"],
            "",
            t["ask"],
            t["json"],
            "",
            t["scale"],
        ]
    )


_CONVERSATION_TEXT = {
    "zh": {"earlier": "### 此前的对话", "user": "【用户】", "assistant": "【助手】", "now": "### 本轮（请评分的这一轮）"},
    "en": {"earlier": "### The conversation so far", "user": "[User]", "assistant": "[Assistant]", "now": "### This turn (the one to score)"},
}


def with_history(prompt: str, history: list[tuple[str, str]] | None, lang: str) -> str:
    """The task of one turn of a conversation: the earlier turns, then this turn's prompt.

    It fills the template's task slot, so the template (and its hash) is the same as for a
    single prompt; with no history the prompt is returned unchanged."""
    if not history:
        return prompt
    t = _CONVERSATION_TEXT[lang]
    lines = [t["earlier"]]
    for user, assistant in history:
        lines += [f"{t['user']} {user}", f"{t['assistant']} {assistant}", ""]
    return "\n".join([*lines, t["now"], prompt])


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def rubric_hash(lang: str, debias: bool) -> str:
    version = rubric_version(lang, debias)
    return _short_hash(version + "\n" + rubric_prompt("<P>", "<R>", "<O>", "<T>", lang, debias))


def dimension_criterion(name: str, criterion: str) -> str:
    """What the rubric slot holds when one dimension is judged: its name and its criterion."""
    return f"{name}: {criterion}"


# --- agent trace summary -------------------------------------------------------------------------

_TRACE_TEXT = {
    "zh": {
        "count": "共调用 {n} 个工具：",
        "ok": "  成功 {s}/{n}",
        "failed": "  失败 {f}/{n}",
        "dist": "  工具分布：{d}",
        "failed_tools": "  失败工具：{names}",
        "steps": "执行轨迹摘要：",
        "more": "  ... 还有 {k} 步",
        "error": "错误",
    },
    "en": {
        "count": "{n} tool call(s):",
        "ok": "  succeeded {s}/{n}",
        "failed": "  failed {f}/{n}",
        "dist": "  tools used: {d}",
        "failed_tools": "  failed tools: {names}",
        "steps": "Trace summary:",
        "more": "  ... {k} more step(s)",
        "error": "error",
    },
}

MAX_STEPS = 10
PREVIEW_CHARS = 100


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text[:PREVIEW_CHARS] + ("..." if len(text) > PREVIEW_CHARS else "")


def trace_summary(trace: Trace, lang: str) -> str | None:
    """A short account of the tool calls for the judge; None when the output used no tool."""
    calls = trace.tool_calls
    if not calls:
        return None
    t = _TRACE_TEXT[lang]
    n = len(calls)
    failed = [c for c in calls if c.is_error]
    dist: dict[str, int] = {}
    for c in calls:
        dist[c.tool] = dist.get(c.tool, 0) + 1
    lines = [t["count"].format(n=n), t["ok"].format(s=n - len(failed), n=n)]
    if failed:
        lines.append(t["failed"].format(f=len(failed), n=n))
    lines.append(t["dist"].format(d=", ".join(f"{k}({v})" for k, v in dist.items())))
    if failed:
        lines.append(t["failed_tools"].format(names=", ".join(dict.fromkeys(c.tool for c in failed))))
    lines += ["", t["steps"]]
    for i, c in enumerate(calls[:MAX_STEPS], start=1):
        status = f" [{t['error']}]" if c.is_error else ""
        lines.append(f"  [{i}] {c.tool}({_preview(c.input)}){status} -> {_preview(c.output)}")
    if n > MAX_STEPS:
        lines.append(t["more"].format(k=n - MAX_STEPS))
    return "\n".join(lines)


# --- judge-scored assertions (omk 0.23's types) ----------------------------------------------------


class AssertionTemplate(msgspec.Struct, frozen=True, gc=False):
    system: str
    sections: tuple[str, ...]  # headings, one per filled slot, in order
    procedure: str | None  # extra scoring steps, or None
    scale: str
    debias: bool  # the RAG types always carry the length-debias block


_ASK = {
    "zh": '请只返回 JSON：{"score": <1-5的整数>, "reason": "<简短理由>"}',
    "en": 'Return only JSON: {"score": <integer 1-5>, "reason": "<short reason>"}',
}

ASSERTION_TEMPLATES: dict[str, dict[str, AssertionTemplate]] = {
    "semantic_similarity": {
        "zh": AssertionTemplate(
            system="你是一个语义相似度评审员。只返回 JSON。",
            sections=("## 参考文本", "## 待评估文本"),
            procedure="请判断待评估文本与参考文本在语义上的相似程度（含义是否一致，而不是字面是否相同）。",
            scale="评分标准：1=完全无关, 2=略有关联, 3=部分相似, 4=大致相同, 5=高度一致",
            debias=False,
        ),
        "en": AssertionTemplate(
            system="You are a reviewer of semantic similarity. Return only JSON.",
            sections=("## Reference text", "## Text under evaluation"),
            procedure="Judge how close the text under evaluation is in meaning to the reference text (same meaning, not same wording).",
            scale="Scale: 1=unrelated, 2=slightly related, 3=partly similar, 4=mostly the same, 5=highly consistent",
            debias=False,
        ),
    },
    "faithfulness": {
        "zh": AssertionTemplate(
            system="你是一个事实忠实度评审员，检查输出是否被给定 context 支持。只返回 JSON。",
            sections=("## 参考 context", "## 待评估输出"),
            procedure="## 评分流程\n1. 列出输出中的事实性陈述。\n2. 逐条对照 context 检查是否被支持。\n3. 给出分数。",
            scale="评分标准：5=全部被支持, 4=大部分被支持（1-2 处小的无依据内容）, 3=约一半被支持, 2=大部分无依据, 1=捏造或与 context 矛盾",
            debias=True,
        ),
        "en": AssertionTemplate(
            system="You are a reviewer of faithfulness: you check whether an output is supported by the given context. Return only JSON.",
            sections=("## Reference context", "## Output under evaluation"),
            procedure="## Scoring procedure\n1. List the factual claims in the output.\n2. Check each claim against the context.\n3. Give the score.",
            scale="Scale: 5=all supported, 4=mostly supported (1-2 minor unsupported details), 3=about half supported, 2=mostly unsupported, 1=fabricated or contradicts the context",
            debias=True,
        ),
    },
    "context_recall": {
        "zh": AssertionTemplate(
            system="你是一个召回率评审员，检查参考中的关键事实是否被输出覆盖。只返回 JSON。",
            sections=("## 参考 gold", "## AI 输出"),
            procedure="## 评分流程\n1. 列出参考中的关键事实。\n2. 逐条检查 AI 输出是否覆盖。\n3. 给出分数。",
            scale="评分标准：5=全部关键事实被覆盖, 4=大部分覆盖（缺 1-2 条次要事实）, 3=约一半覆盖, 2=仅覆盖少量, 1=完全未覆盖",
            debias=True,
        ),
        "en": AssertionTemplate(
            system="You are a reviewer of recall: you check whether the key facts of a reference are covered by an output. Return only JSON.",
            sections=("## Reference (gold)", "## AI output"),
            procedure="## Scoring procedure\n1. List the key facts in the reference.\n2. Check whether the AI output covers each one.\n3. Give the score.",
            scale="Scale: 5=all key facts covered, 4=mostly covered (1-2 minor facts missing), 3=about half covered, 2=only a few covered, 1=none covered",
            debias=True,
        ),
    },
}

_SHORT_DEBIAS = {
    "zh": "## 重要：长度不是质量信号\n评分时聚焦内容实质，不要因输出更长就给更高分。\n简洁正确的回答与冗长正确的回答应得相同分数。",
    "en": "## Important: length is not a quality signal\nJudge substance; do not give a higher score because an output is longer.\nA concise correct answer and a verbose correct answer deserve the same score.",
}


def render_template(tpl: AssertionTemplate, slots: tuple[str, ...], ask: str, debias_block: str) -> tuple[str, str]:
    """(system, user) for one 1-5 call: each section's heading and slot, the debias block when the
    template carries it, the procedure, then `ask` and the scale. Shared by the judge-scored
    assertions here and the M365 Likert evaluators (omk/judge/likert.py), which differ only in
    their templates, `ask` and debias wording."""
    parts: list[str] = []
    for heading, text in zip(tpl.sections, slots, strict=True):
        parts += [heading, text, ""]
    if tpl.debias:
        parts += [debias_block, ""]
    if tpl.procedure:
        parts += [tpl.procedure, ""]
    parts += [ask, "", tpl.scale]
    return tpl.system, "\n".join(parts)


def placeholder_slots(tpl: AssertionTemplate) -> tuple[str, ...]:
    """The slot fillers a template is hashed with: "<0>", "<1>", …"""
    return tuple(f"<{i}>" for i in range(len(tpl.sections)))


def assertion_prompt(kind: str, slots: tuple[str, ...], lang: str) -> tuple[str, str]:
    """(system, user) for a single-call 1-5 judge-scored assertion."""
    return render_template(ASSERTION_TEMPLATES[kind][lang], slots, _ASK[lang], _SHORT_DEBIAS[lang])


def assertion_hash(kind: str, lang: str) -> str:
    system, user = assertion_prompt(kind, placeholder_slots(ASSERTION_TEMPLATES[kind][lang]), lang)
    return _short_hash(f"{kind}-{lang}\n{system}\n{user}")


# --- answer relevancy, Mastra's way --------------------------------------------------------------

RELEVANCY_SYSTEM = {
    "en": (
        "You are a balanced and nuanced answer-relevancy evaluator. You judge whether statements are "
        "relevant to a question, not whether they are correct. Partial relevance is allowed. Empty "
        "statements and error messages are not relevant. Return only JSON."
    ),
    "zh": "你是一个平衡、细致的答案相关性评估员。你判断陈述是否与问题相关，而不是是否正确。允许部分相关。空陈述和错误信息视为不相关。只返回 JSON。",
}

_EXTRACT = {
    "en": "\n".join(
        [
            "Break the text below into meaningful statements, keeping each one's context.",
            "- Split compound statements at 'and' and where several facts or descriptors are listed, but do not split too aggressively.",
            "- A single word is one statement; an error message is one statement; an empty text gives an empty list.",
            "",
            "## Text",
            "{output}",
            "",
            'Return only JSON: {{"statements": ["<statement>", ...]}}',
        ]
    ),
    "zh": "\n".join(
        [
            "把下面的文本拆成有意义的陈述，每条保留必要的上下文。",
            "- 在“和/并且”处以及列举多个事实或描述的地方拆分复合陈述，但不要拆得过细。",
            "- 单个词是一条陈述；一条错误信息是一条陈述；空文本得到空列表。",
            "",
            "## 文本",
            "{output}",
            "",
            '只返回 JSON：{{"statements": ["<陈述>", ...]}}',
        ]
    ),
}

_VERDICTS = {
    "en": "\n".join(
        [
            "For each statement, decide whether it is relevant to the question.",
            '- "yes": it explicitly and directly answers the question. A statement that is incorrect but directly on point is "unsure".',
            '- "unsure": partial or type-level relevance: it discusses the right kind of information, or related entities, units or properties.',
            '- "no": no connection, only topic-level facts that do not address what was asked, or an empty statement.',
            "",
            'Example. Question: "What color is the sky during daytime?" Statements: "The sky is blue during the day." → yes;',
            '"The sky can look grey on cloudy days." → unsure; "Sunsets are orange." → unsure; "Clouds are made of water." → no.',
            "",
            "## Question",
            "{question}",
            "",
            "## Statements",
            "{statements}",
            "",
            "Return exactly one result per statement, in order, as JSON only:",
            '{{"results": [{{"result": "yes" | "unsure" | "no", "reason": "<short reason>"}}, ...]}}',
        ]
    ),
    "zh": "\n".join(
        [
            "逐条判断每个陈述是否与问题相关。",
            '- "yes"：明确、直接地回答了问题。直接切题但不正确的陈述记为 "unsure"。',
            '- "unsure"：部分相关或类型层面相关：讨论了同类信息，或相关的实体、单位、属性。',
            '- "no"：毫无关联，只是与话题有关但没有回应所问内容，或是空陈述。',
            "",
            "示例。问题：“白天天空是什么颜色？” 陈述：“白天天空是蓝色的。”→ yes；",
            "“阴天时天空看起来是灰色的。”→ unsure；“日落是橙色的。”→ unsure；“云由水组成。”→ no。",
            "",
            "## 问题",
            "{question}",
            "",
            "## 陈述",
            "{statements}",
            "",
            "按顺序为每个陈述恰好返回一个结果，只返回 JSON：",
            '{{"results": [{{"result": "yes" | "unsure" | "no", "reason": "<简短理由>"}}, ...]}}',
        ]
    ),
}


def relevancy_extract_prompt(output: str, lang: str) -> str:
    return _EXTRACT[lang].format(output=output)


def relevancy_verdict_prompt(question: str, statements: list[str], lang: str) -> str:
    numbered = "\n".join(f"{i}. {json.dumps(s, ensure_ascii=False)}" for i, s in enumerate(statements, start=1))
    return _VERDICTS[lang].format(question=json.dumps(question, ensure_ascii=False), statements=numbered)


def relevancy_hash(lang: str) -> str:
    return _short_hash(
        f"answer_relevancy-{lang}\n{RELEVANCY_SYSTEM[lang]}\n{relevancy_extract_prompt('<O>', lang)}\n"
        f"{relevancy_verdict_prompt('<Q>', ['<S>'], lang)}"
    )


def all_hashes(lang: str, debias: bool) -> dict[str, Any]:
    """The `judge` report block's record of every template in use."""
    return {
        "rubric": {"version": rubric_version(lang, debias), "hash": rubric_hash(lang, debias)},
        "semantic_similarity": assertion_hash("semantic_similarity", lang),
        "faithfulness": assertion_hash("faithfulness", lang),
        "context_recall": assertion_hash("context_recall", lang),
        "answer_relevancy": relevancy_hash(lang),
    }
