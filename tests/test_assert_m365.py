"""The M365 string evaluators: citations, exact_match, partial_match (edge cases)."""

from __future__ import annotations

import pytest
from helpers import check

from omk.assertions.m365 import find_citations, token_f1
from omk.samples.model import Status

# --- citations ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, fmt, count",
    [
        ("Graph is an API [1]. It spans Microsoft 365 [2].", "bracket", 2),
        ("Graph is an API [1]. Again [1] and [1].", "bracket", 1),  # a repeated source counts once
        ("See [1, 2] and [3]", "bracket", 3),
        ("Footnotes[^1] and [^2^]", "bracket", 2),
        ("A link [1](https://x.test/a#p) and [2](https://x.test/b)", "markdown", 2),
        ("A link [1](https://x.test/a#p)", "bracket", 0),  # a markdown citation is not a bracket one
        ("[1] plain", "markdown", 0),
        ("Per the policy【4:0†policy.pdf】 and【4:1†faq.md】", "oai_unicode", 2),
        ("Copilot \ue200cite\ue202turn0search3\ue201 says so", "oai_unicode", 1),
        ("[1] and [1](https://x.test) and【3:0†a】", "mixed", 2),  # [1] twice is one source
        ("no sources at all, just [brackets] and [a](b)", "mixed", 0),
        ("数组 arr[0] 不是引用，[12] 是", "bracket", 1),  # sources are numbered from 1: [0] is an index
        ("arr[0] = 1", "mixed", 0),
        ("Set arr[1] = 2, then m[1][2] = 3.", "bracket", 0),  # an assignment to an indexed name
        ("[0, 1] is a list", "bracket", 0),
        ("`arr[1]` and ``x[2]`` are code; [3] is a source", "bracket", 1),
        ("```python\nrows[1] += rows[2]\n```\nAs the docs say [4].", "mixed", 1),  # a fenced block
        ("保修期为 12 个月[1]，进水不在保修范围内[2]。", "bracket", 2),  # glued to the text: still citations
        ("Returns within 30 days[1][2].", "bracket", 2),
    ],
)
def test_citation_formats_count_distinct_sources(text, fmt, count):
    assert len(find_citations(text, fmt)) == count


def test_citations_threshold_and_default_format():
    result = check("citations", "Answer [1] and [2](https://a.test).")
    assert result.status is Status.PASSED
    assert result.metric == 2
    assert "detected bracket, markdown" in result.message
    assert "format mixed" in result.message
    assert check({"type": "citations", "threshold": 3}, "Answer [1] and [2].").status is Status.FAILED
    assert check({"type": "citations", "citation_format": "bracket"}, "Answer【1:0†x】").metric == 0
    none = check("citations", "No citation here.")
    assert none.status is Status.FAILED
    assert none.metric == 0
    assert "0 distinct citation(s) < 1" in none.message


def test_citations_under_not():
    assert check({"type": "citations", "not": True}, "nothing cited").status is Status.PASSED


# --- exact_match --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, output, passed",
    [
        ({"value": "Request manager approval."}, "Please request manager approval. Thanks", True),  # contains, any case
        ({"value": "Request manager approval.", "case_sensitive": True}, "Please request manager approval.", False),
        ({"value": "Request manager approval.", "case_sensitive": True}, "Please Request manager approval.", True),
        ({"value": "Request manager approval.", "mode": "equals"}, "  request MANAGER approval. \n", True),
        ({"value": "Request manager approval.", "mode": "equals"}, "Please request manager approval.", False),
        ({"value": "line one\nline two"}, "Here: line one   line two!", True),  # whitespace runs compare as one space
        ({"value": "STRASSE"}, "Die Straße ist lang", True),  # case folding, not just lower-casing
        ({"value": "退款单号"}, "已为您办理，退款单号 R-1", True),
        ({"value": 42}, "the answer is 42", True),
        ({"value": "approval"}, "", False),
    ],
)
def test_exact_match(raw, output, passed):
    result = check({"type": "exact_match", **raw}, output)
    assert (result.status is Status.PASSED) is passed
    assert result.metric == (1.0 if passed else 0.0)


def test_exact_match_message_says_how_it_compared():
    result = check({"type": "exact_match", "value": "x", "mode": "equals", "case_sensitive": True}, "y")
    assert result.message == "output does not equal the expected text (case-sensitive)"


# --- partial_match ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prediction, reference, f1",
    [
        ("The cat sat on the mat", "the cat sat on a mat", 1.0),  # articles and case are dropped
        ("cat sat", "cat sat on mat", 2 * 1.0 * 0.5 / 1.5),
        ("dog", "cat", 0.0),
        ("", "", 1.0),  # SQuAD: both empty
        ("", "cat", 0.0),
        ("Hello, world!", "hello world", 1.0),  # punctuation
        ("a a b", "a b b", 2 * 1.0 * 0.5 / 1.5),  # after dropping "a": [b] vs [b, b]
        ("退款已办理", "退款办理完成", 2 * (4 / 5) * (4 / 6) / (4 / 5 + 4 / 6)),  # each CJK character a token
        ("订单A1001已发货", "订单 A1001 已发货。", 1.0),
    ],
)
def test_token_f1(prediction, reference, f1):
    assert token_f1(prediction, reference)[0] == pytest.approx(f1)


def test_token_f1_case_sensitive():
    assert token_f1("Paris", "paris", case_sensitive=True)[0] == 0.0
    assert token_f1("Paris", "paris")[0] == 1.0


@pytest.mark.parametrize("threshold, passed", [(0.5, True), (0.67, False), (0.0, True)])
def test_partial_match_threshold(threshold, passed):
    result = check({"type": "partial_match", "reference": "cat sat on mat", "threshold": threshold}, "cat sat")
    assert result.metric == 0.6667
    assert (result.status is Status.PASSED) is passed


def test_partial_match_default_threshold_is_half():
    assert check({"type": "partial_match", "reference": "one two three four five six"}, "one two").status is Status.PASSED  # F1 exactly 0.5
    assert check({"type": "partial_match", "reference": "one two three four five six seven"}, "one two").status is Status.FAILED
