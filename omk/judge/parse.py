"""Reading a judge's reply: the JSON object anywhere in the text, checked strictly.

Replies come fenced or bare, with prose before and after, sometimes with two objects (an example
echoed back, then the answer). We decode every top-level JSON object in the text and take the
last one that has the field we need. A score may be a number or a numeric string and must lie in
[1, 5]; a real such as 3.5 is accepted as it is (judges that hedge between two marks are common,
and rounding would hide it). Anything else raises `ReplyError`, which the caller retries once.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

_decoder = json.JSONDecoder()


class ReplyError(ValueError):
    """The reply holds no usable answer; the message says why in one line."""


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in `text`, in order (objects nested in another are not listed)."""
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = _decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        i = text.find("{", end)
    return found


def last_object_with(text: str, key: str) -> dict[str, Any]:
    objects = [o for o in json_objects(text) if key in o]
    if not objects:
        if not text.strip():
            raise ReplyError("empty reply")
        raise ReplyError(f'no JSON object with "{key}" in the reply')
    return objects[-1]


def to_score(value: Any) -> float:
    """A 1-5 score from a number or a numeric string; anything else raises ReplyError."""
    if isinstance(value, bool) or value is None:
        raise ReplyError(f"score {value!r} is not a number")
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise ReplyError(f"score {value!r} is not a number") from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise ReplyError(f"score {value!r} is not a number")
    if not math.isfinite(number) or not 1 <= number <= 5:
        raise ReplyError(f"score {value!r} is outside 1-5")
    return number


@dataclass(slots=True)
class ScoreReply:
    score: float
    reason: str
    reasoning: str | None = None


def parse_score_reply(text: str) -> ScoreReply:
    obj = last_object_with(text, "score")
    score = to_score(obj["score"])
    reasoning = obj.get("reasoning")
    return ScoreReply(
        score=score,
        reason=str(obj.get("reason") or "").strip(),
        reasoning=str(reasoning).strip() if reasoning not in (None, "") else None,
    )


def parse_statements(text: str) -> list[str]:
    obj = last_object_with(text, "statements")
    statements = obj["statements"]
    if not isinstance(statements, list) or not all(isinstance(s, str) for s in statements):
        raise ReplyError('"statements" is not a list of strings')
    return [s for s in statements if s.strip()]


VERDICTS = ("yes", "unsure", "no")


def parse_verdicts(text: str, expected: int) -> list[dict[str, str]]:
    """`[{"result": yes|unsure|no, "reason"}]`, exactly one per statement."""
    obj = last_object_with(text, "results")
    results = obj["results"]
    if not isinstance(results, list):
        raise ReplyError('"results" is not a list')
    if len(results) != expected:
        raise ReplyError(f"{len(results)} verdict(s) for {expected} statement(s)")
    out = []
    for item in results:
        if isinstance(item, str):
            item = {"result": item}
        if not isinstance(item, dict):
            raise ReplyError(f"verdict {item!r} is not an object")
        out.append({"result": str(item.get("result", "")).strip().lower(), "reason": str(item.get("reason") or "")})
    return out
