"""The judge-scored evaluators of the M365 and Big Sky formats, against the loopback OpenAI fake:
relevance / coherence / groundedness / similarity (1-5), compare_content, the pairwise preference."""

from __future__ import annotations

import json

import pytest
from helpers import make_ctx, make_spec
from judge_support import make_judge, run, sample, score_json, user_prompt

from omk.assertions.evaluate import evaluate
from omk.judge import comparison, likert
from omk.samples.model import Status, Turn
from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply


async def _evaluate(judge, raws, s, output="the answer", **ctx_fields):
    ctx = make_ctx(output, sample=s, judge=judge, **ctx_fields)
    try:
        return await evaluate([make_spec(r) for r in raws], ctx)
    finally:
        await judge.close()


def evaluate_with(url, raws, s=None, output="the answer", **kw):
    return run(_evaluate(make_judge([f"openai:m@{url}"]), raws, s or sample(), output, **kw))


# --- M365 Likert evaluators ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, shown",
    [
        ({"type": "relevance"}, ["## Query\nHow do I fix this SQL query?", "## Response\nthe answer"]),
        ({"type": "coherence"}, ["## Query\nHow do I fix this SQL query?", "## Response\nthe answer"]),
        ({"type": "groundedness", "context": "Use parameters."}, ["## Context\nUse parameters.", "## Response\nthe answer"]),
        ({"type": "similarity", "reference": "Use bound parameters."}, ["## Expected answer\nUse bound parameters."]),
    ],
)
def test_each_likert_evaluator_sends_its_inputs(raw, shown):
    with ModelServer.for_openai([text_reply(score_json(4, "clear"))]) as fake:
        (result,) = evaluate_with(fake.url, [raw])
        prompt = user_prompt(fake.requests[0])
    for part in shown:
        assert part in prompt
    assert result.status is Status.PASSED
    assert result.score == 4
    assert result.message == "4/5 (threshold 3): clear"


@pytest.mark.parametrize("score, threshold, status", [(3, None, Status.PASSED), (2, None, Status.FAILED), (4, 4.5, Status.FAILED), (5, 5, Status.PASSED)])
def test_likert_threshold_defaults_to_three(score, threshold, status):
    raw = {"type": "relevance", **({"threshold": threshold} if threshold else {})}
    with ModelServer.for_openai([text_reply(score_json(score))]) as fake:
        (result,) = evaluate_with(fake.url, [raw])
    assert result.status is status


def test_groundedness_without_context_and_similarity_without_reference_make_no_call():
    with ModelServer.for_openai([text_reply(score_json(5))]) as fake:
        results = evaluate_with(fake.url, [{"type": "groundedness"}, {"type": "similarity", "reference": " "}])
        assert fake.requests == []
    assert [r.status for r in results] == [Status.SKIPPED, Status.FAILED]
    assert results[0].message.startswith("skipped: no context to judge groundedness against")
    assert "similarity: needs the expected answer" in results[1].message


def test_groundedness_falls_back_to_the_sample_context():
    with ModelServer.for_openai([text_reply(score_json(5))]) as fake:
        evaluate_with(fake.url, [{"type": "groundedness"}], s=sample(context="The per-diem is $200."))
        assert "## Context\nThe per-diem is $200." in user_prompt(fake.requests[0])


def test_the_query_is_the_assertion_s_then_the_turn_s_then_the_sample_s():
    with ModelServer.for_openai(lambda req: text_reply(score_json(4))) as fake:
        evaluate_with(fake.url, [{"type": "relevance", "query": "第二轮的问题"}])
        evaluate_with(fake.url, [{"type": "coherence"}], turn=Turn(prompt="What should I do about the overage?"))
        prompts = [user_prompt(r) for r in fake.requests]
    assert "## Query\n第二轮的问题" in prompts[0]
    assert "## Query\nWhat should I do about the overage?" in prompts[1]


def test_chinese_templates_and_hashes():
    system, prompt = likert.prompt("similarity", ("问题", "预期", "回答"), "zh")
    assert "只返回 JSON" in system
    assert "## 预期答案\n预期" in prompt
    en, zh = likert.hashes("en"), likert.hashes("zh")
    assert set(en) == set(likert.KINDS)
    assert all(len(h) == 12 for h in en.values())
    assert en != zh


def test_judge_block_records_the_new_templates():
    judge = make_judge(["openai:m@http://127.0.0.1:9/v1"])
    templates = judge.describe()["templates"]
    assert {"relevance", "coherence", "groundedness", "similarity", "compare_content", "pairwise"} <= set(templates)


# --- compare_content ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reference, output, status",
    [("", "", Status.PASSED), ("", "I called the tool.", Status.FAILED), ("The post is created.", "", Status.FAILED)],
)
def test_compare_content_decides_empty_texts_without_a_call(reference, output, status):
    with ModelServer.for_openai([text_reply('{"value": "similar"}')]) as fake:
        (result,) = evaluate_with(fake.url, [{"type": "compare_content", "reference": reference}], output=output)
        assert fake.requests == []
    assert result.status is status
    assert "no judge call made" in result.message


@pytest.mark.parametrize("value, status", [("similar", Status.PASSED), ("different", Status.FAILED), (" Similar ", Status.PASSED)])
def test_compare_content_asks_similar_or_different(value, status):
    with ModelServer.for_openai([text_reply(json.dumps({"value": value}))]) as fake:
        (result,) = evaluate_with(fake.url, [{"type": "compare_content", "reference": "Your post is live."}], output="I published the post.")
        prompt = user_prompt(fake.requests[0])
    assert "## Text 1\nYour post is live." in prompt
    assert "## Text 2\nI published the post." in prompt
    assert result.status is status
    assert result.metric == (1.0 if status is Status.PASSED else 0.0)


def test_compare_content_unparseable_reply_is_retried_then_an_error():
    with ModelServer.for_openai([text_reply('{"value": "maybe"}'), text_reply("no json")]) as fake:
        (result,) = evaluate_with(fake.url, [{"type": "compare_content", "reference": "a"}], output="b")
        assert len(fake.requests) == 2
    assert result.status is Status.FAILED
    assert "compare_content judge error" in result.message


def test_compare_content_ensemble_majority():
    def respond(req):
        return text_reply('{"value": "%s"}' % ("different" if req.json["model"] == "c" else "similar"))

    with ModelServer.for_openai(respond) as fake:
        judge = make_judge([f"openai:a@{fake.url}", f"openai:b@{fake.url}", f"openai:c@{fake.url}"])
        (result,) = run(_evaluate(judge, [{"type": "compare_content", "reference": "x"}], sample(), "y"))
    assert result.status is Status.PASSED


# --- pairwise preference ------------------------------------------------------------------------


def test_pairwise_prompt_renders_transcript_and_tool_calls():
    a = comparison.answer_text("", [("getWeather", {"location": "Boston, MA"})])
    assert a == '\nCalled Tool: getWeather({"location": "Boston, MA"})'
    text = comparison.pairwise_prompt([{"role": "assistant", "content": "How can I help?"}, {"role": "user", "content": "天气"}], a, "B", "en")
    assert "**assistant**: How can I help?\n**user**: 天气" in text
    assert "## Answer of assistant B\nB" in text


@pytest.mark.parametrize(
    "reply, preference",
    [('{"reason": "A used the tool", "preference": 1}', 1), ('{"Preference": 2}', 2), ('{"preference": "0"}', 0)],
)
def test_prefer_reads_big_sky_and_our_key(reply, preference):
    with ModelServer.for_openai([text_reply(reply)]) as fake:
        judge = make_judge([f"openai:m@{fake.url}"])
        verdict = run(_prefer(judge))
    assert verdict["preference"] == preference
    assert verdict["error"] is None


def test_prefer_bad_value_is_retried_then_an_error():
    with ModelServer.for_openai([text_reply('{"preference": 3}'), text_reply('{"preference": "A"}')]) as fake:
        verdict = run(_prefer(make_judge([f"openai:m@{fake.url}"])))
        assert len(fake.requests) == 2
    assert verdict["preference"] is None
    assert "unparseable reply" in verdict["error"]


def test_prefer_ensemble_votes_and_a_split_is_a_tie():
    def respond(req):
        return text_reply(json.dumps({"preference": {"a": 1, "b": 2, "c": 1}[req.json["model"]], "reason": req.json["model"]}))

    with ModelServer.for_openai(respond) as fake:
        verdict = run(_prefer(make_judge([f"openai:{m}@{fake.url}" for m in "abc"])))
        split = run(_prefer(make_judge([f"openai:{m}@{fake.url}" for m in "ab"])))
    assert verdict["preference"] == 1
    assert len(verdict["votes"]) == 3
    assert verdict["reason"] in ("a", "c")
    assert split["preference"] == 0


async def _prefer(judge):
    try:
        return await judge.prefer([{"role": "user", "content": "hi"}], "answer A", "answer B")
    finally:
        await judge.close()
