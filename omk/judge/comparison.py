"""Big Sky's two LLM comparisons: `compare_content` (similar / different) and the pairwise
preference between two targets' answers (`chat:evaluatePairwise`).

compare_content: both texts empty → pass, exactly one empty → fail, with no judge call; else the
judge answers `{"value": "similar" | "different"}` (two-shot prompt, as Big Sky's).

Pairwise: an MT-Bench-style impartial judge sees the conversation and two answers (each the
content plus one `Called Tool: name(args)` line per tool call; for a conversation, every turn
of that variant's own, omk/engine/pairwise.py) and answers
`{"reason", "preference": 1 | 2 | 0}` (1 = the first shown is better, 2 = the second, 0 = tie).
Judges favour one position (usually the first) more often than chance, so omk asks twice, once
in each order, and `combine_orders` keeps a winner only when both orders name it: a
disagreement is a tie, counted as position-inconsistent (Big Sky asks once, A first). Scores
follow Big Sky: the winner 1, the other 0; a tie gives both 0.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from omk.judge.parse import ReplyError, last_object_with

COMPARE_SYSTEM = {
    "en": "You decide whether two texts say the same thing. Return only JSON.",
    "zh": "你判断两段文本是否表达相同的意思。只返回 JSON。",
}

_COMPARE = {
    "en": "\n".join(
        [
            "Decide whether the two texts below are similar (they say the same thing, even in other words) or different.",
            "",
            'Example: "I have created the post for you." and "Your post has been created." → similar.',
            'Example: "I have created the post for you." and "I have added a comment to the post." → different.',
            "",
            "## Text 1",
            "{expected}",
            "",
            "## Text 2",
            "{actual}",
            "",
            'Return only JSON: {{"value": "similar" | "different"}}',
        ]
    ),
    "zh": "\n".join(
        [
            "判断下面两段文本是相似（意思相同，措辞可以不同）还是不同。",
            "",
            "示例：“我已经为你创建了这篇文章。”和“你的文章已创建。”→ similar。",
            "示例：“我已经为你创建了这篇文章。”和“我在文章下添加了一条评论。”→ different。",
            "",
            "## 文本 1",
            "{expected}",
            "",
            "## 文本 2",
            "{actual}",
            "",
            '只返回 JSON：{{"value": "similar" | "different"}}',
        ]
    ),
}


def compare_prompt(expected: str, actual: str, lang: str) -> str:
    return _COMPARE[lang].format(expected=expected, actual=actual)


def parse_similar(text: str) -> bool:
    """True for "similar", False for "different"; anything else raises ReplyError."""
    value = str(last_object_with(text, "value")["value"]).strip().lower()
    if value not in ("similar", "different"):
        raise ReplyError(f'"value" must be "similar" or "different" (got {value!r})')
    return value == "similar"


PAIRWISE_SYSTEM = {
    "en": (
        "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants "
        "to the conversation shown. Choose the assistant that follows the user's instructions and answers the "
        "user's question better, considering helpfulness, relevance, accuracy, depth and the tools it chose to call. "
        "Avoid any position bias: the order in which the answers are shown must not influence you. Do not let the "
        "length of an answer influence you, and do not favour an assistant for its name. Be as objective as possible. "
        "Return only JSON."
    ),
    "zh": (
        "请作为公正的评审，评估两个 AI 助手对下面这段对话给出的回答。选出更好地遵循用户指令、回答用户问题的一方，"
        "综合考虑有用性、相关性、准确性、深度以及它选择调用的工具。避免位置偏差：回答出现的先后不能影响判断；"
        "不要受回答长度影响，也不要因助手的名字而偏向任何一方。尽量客观。只返回 JSON。"
    ),
}

_PAIRWISE = {
    "en": "\n".join(
        [
            "## Conversation",
            "{transcript}",
            "",
            "## Answer of assistant A",
            "{a}",
            "",
            "## Answer of assistant B",
            "{b}",
            "",
            'Return only JSON: {{"reason": "<short comparison>", "preference": 1 | 2 | 0}}',
            "(1 = assistant A is better, 2 = assistant B is better, 0 = a tie)",
        ]
    ),
    "zh": "\n".join(
        [
            "## 对话",
            "{transcript}",
            "",
            "## 助手 A 的回答",
            "{a}",
            "",
            "## 助手 B 的回答",
            "{b}",
            "",
            '只返回 JSON：{{"reason": "<简短比较>", "preference": 1 | 2 | 0}}',
            "（1 = 助手 A 更好，2 = 助手 B 更好，0 = 平局）",
        ]
    ),
}


def transcript(messages: list[dict[str, Any]]) -> str:
    """Big Sky's rendering of the input messages: one `**role**: content` line each."""
    lines = []
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""
        lines.append(f"**{m.get('role', 'user')}**: {text}")
    return "\n".join(lines)


def answer_text(output: str | None, calls: list[tuple[str, Any]]) -> str:
    """The answer as the judge sees it: the content, then `Called Tool: name(argsJSON)` per call."""
    lines = [output or ""]
    for name, args in calls:
        lines.append(f"Called Tool: {name}({json.dumps(args if args is not None else {}, ensure_ascii=False)})")
    return "\n".join(lines)


def pairwise_prompt(messages: list[dict[str, Any]], a: str, b: str, lang: str) -> str:
    return _PAIRWISE[lang].format(transcript=transcript(messages), a=a, b=b)


FLIP = {1: 2, 2: 1, 0: 0}  # a preference asked with B shown first, in A/B terms


def combine_orders(a_first: int, b_first: int) -> tuple[int, str | None]:
    """The verdict of both orders, in A/B terms (1 = A better, 2 = B better, 0 = tie), and how the
    orders disagreed: None when they agree; `first` when each order preferred the answer shown
    first, `second` when each preferred the one shown second, `partial` when one order called a
    tie and the other named a side. `a_first` is the judge's preference with A shown first,
    `b_first` with B shown first (1 = B, the first shown, better)."""
    mapped = FLIP[b_first]
    if a_first == mapped:
        return a_first, None
    if a_first == 1 and b_first == 1:
        return 0, "first"
    if a_first == 2 and b_first == 2:
        return 0, "second"
    return 0, "partial"


def parse_preference(text: str) -> tuple[int, str]:
    """(preference 0/1/2, reason). Big Sky's key is `Preference`; either case is accepted."""
    for key in ("preference", "Preference"):
        try:
            obj = last_object_with(text, key)
        except ReplyError:
            continue
        value = obj[key]
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1, 2):
            raise ReplyError(f'"preference" must be 1, 2 or 0 (got {value!r})')
        return value, str(obj.get("reason") or "").strip()
    raise ReplyError('no JSON object with "preference" in the reply')


def hashes(lang: str) -> dict[str, str]:
    def short(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    return {
        "compare_content": short(f"compare_content-{lang}\n{COMPARE_SYSTEM[lang]}\n{compare_prompt('<E>', '<A>', lang)}"),
        "pairwise": short(f"pairwise-{lang}\n{PAIRWISE_SYSTEM[lang]}\n{_PAIRWISE[lang].format(transcript='<T>', a='<A>', b='<B>')}"),
    }
