"""Reading judge replies: JSON anywhere, strict scores, Mastra's statement/verdict shapes."""

from __future__ import annotations

import pytest

from omk.judge.parse import (
    ReplyError,
    json_objects,
    parse_score_reply,
    parse_statements,
    parse_verdicts,
    to_score,
)


@pytest.mark.parametrize(
    "text, score",
    [
        ('{"score": 4, "reason": "good"}', 4.0),
        ('```json\n{"reasoning": "r", "score": 5, "reason": "fine"}\n```', 5.0),
        ('Here is my verdict:\n{"score": 2, "reason": "weak"}\nHope that helps.', 2.0),
        ('{"score": "3", "reason": "numeric string"}', 3.0),
        ('{"score": " 4.0 ", "reason": "padded"}', 4.0),
        ('{"score": 3.5, "reason": "between two marks"}', 3.5),
        # an example echoed back first, then the answer: the last object with a score wins
        ('Format: {"score": 1, "reason": "x"} ... my answer: {"score": 4, "reason": "y"}', 4.0),
        # nested braces inside strings and objects do not confuse the scan
        ('{"reasoning": {"steps": ["a {b}"]}, "score": 5, "reason": "n"}', 5.0),
    ],
)
def test_scores_are_found_wherever_the_json_is(text, score):
    assert parse_score_reply(text).score == score


def test_reason_and_reasoning_are_kept():
    reply = parse_score_reply('{"reasoning": "point by point", "score": 4, "reason": "mostly right"}')
    assert (reply.reason, reply.reasoning) == ("mostly right", "point by point")


@pytest.mark.parametrize(
    "text, why",
    [
        ("I would give it a four.", "no JSON object"),
        ("", "empty reply"),
        ('{"score": 7, "reason": "x"}', "outside 1-5"),
        ('{"score": 0, "reason": "x"}', "outside 1-5"),
        ('{"score": -2}', "outside 1-5"),
        ('{"score": "four"}', "not a number"),
        ('{"score": true}', "not a number"),
        ('{"score": null}', "not a number"),
        ('{"score": [4]}', "not a number"),
        ('{"reason": "no score at all"}', "no JSON object"),
        ('{"score": 4, "reason": "unterminated"', "no JSON object"),
    ],
)
def test_bad_replies_raise_with_a_reason(text, why):
    with pytest.raises(ReplyError, match=why):
        parse_score_reply(text)


def test_to_score_rejects_nan_and_infinity():
    for value in ("nan", float("inf"), "Infinity"):
        with pytest.raises(ReplyError):
            to_score(value)


def test_json_objects_lists_top_level_objects_only():
    assert json_objects('a {"x": {"y": 1}} b {"z": 2} [1]') == [{"x": {"y": 1}}, {"z": 2}]


def test_statements_and_verdicts():
    assert parse_statements('```\n{"statements": ["a", " ", "b"]}\n```') == ["a", "b"]
    verdicts = parse_verdicts('{"results": [{"result": " YES ", "reason": "r"}, "no"]}', 2)
    assert verdicts == [{"result": "yes", "reason": "r"}, {"result": "no", "reason": ""}]
    with pytest.raises(ReplyError, match="1 verdict"):
        parse_verdicts('{"results": [{"result": "yes"}]}', 2)
    with pytest.raises(ReplyError, match="not a list of strings"):
        parse_statements('{"statements": "one"}')
