"""Judge-scored assertions and the judge inside a sample run: thresholds, `not`, Mastra relevancy, errors."""

from __future__ import annotations

import json

import pytest
from helpers import make_ctx, make_spec
from judge_support import make_judge, run, sample, score_json, user_prompt

from omk.assertions.evaluate import evaluate
from omk.judge.relevancy import mastra_score, ratio_to_five, relevancy_ratio
from omk.records import Trace
from omk.runner.sample_run import RunConfig, run_sample
from omk.samples.model import Status as AStatus
from omk.targets.base import TargetResult
from omk.testing import HttpError, ModelServer
from omk.testing.openai_chat import text_reply


async def _evaluate(judge, specs, s, output="the answer"):
    ctx = make_ctx(output, sample=s, judge=judge)
    try:
        return await evaluate([make_spec(x) if isinstance(x, dict) else x for x in specs], ctx), ctx
    finally:
        await judge.close()


def evaluate_with(url, specs, s=None, output="the answer", **kw):
    return run(_evaluate(make_judge([f"openai:m@{url}"], **kw), specs, s or sample(), output))


# --- the Mastra algorithm on known verdicts -----------------------------------------------------


@pytest.mark.parametrize(
    "verdicts, weight, ratio",
    [
        ([], 0.3, 0.0),
        (["yes", "yes"], 0.3, 1.0),
        (["yes", "unsure", "no"], 0.3, 1.3 / 3),
        (["YES ", " unsure", "maybe", "no"], 0.3, 1.3 / 4),  # trimmed, lower-cased; unknown counts 0
        (["unsure", "unsure"], 0.5, 0.5),
        (["unsure"], 0.0, 0.0),
    ],
)
def test_relevancy_ratio(verdicts, weight, ratio):
    assert relevancy_ratio(verdicts, weight) == pytest.approx(ratio)


def test_ratio_maps_to_one_to_five_and_mastra_scale():
    assert [ratio_to_five(r) for r in (0, 0.5, 1, 1.3 / 3)] == [1.0, 3.0, 5.0, 2.73]
    assert mastra_score(1.3 / 3, 1) == 0.43
    assert mastra_score(1.3 / 3, 10) == 4.33
    assert mastra_score(0.125, 1) == 0.13  # half-up, not half-even


STATEMENTS = ["Paris is the capital of France.", "It has the Eiffel Tower.", "Bread is tasty."]
VERDICTS = [
    {"result": "yes", "reason": "answers it"},
    {"result": "unsure", "reason": "about Paris, not the question"},
    {"result": "no", "reason": "off topic"},
]


def _mastra(statements=STATEMENTS, verdicts=VERDICTS):
    def respond(req):
        text = user_prompt(req)
        if "meaningful statements" in text:
            return text_reply("```json\n" + json.dumps({"statements": statements}) + "\n```")
        assert all(json.dumps(s) in text for s in statements)
        assert '"What is the capital of France?"' in text  # the question goes in JSON-quoted
        return text_reply(json.dumps({"results": verdicts}))

    return respond


def test_answer_relevancy_through_the_judge():
    s = sample(prompt="What is the capital of France?")
    with ModelServer.for_openai(_mastra()) as fake:
        (default, weighted, scaled), _ = evaluate_with(
            fake.url,
            [
                {"type": "answer_relevancy"},
                {"type": "answer_relevancy", "uncertainty_weight": 1},
                {"type": "answer_relevancy", "scale": 10},
            ],
            s,
            output="Paris is the capital of France and it has the Eiffel Tower. Bread is tasty.",
        )
        assert len(fake.requests) == 6  # statements + verdicts, three times (distinct weights, same prompts)
    assert default.score == 2.73
    assert default.metric == 2.73
    assert default.status is AStatus.FAILED  # threshold 3
    assert "3 statement(s), 1 relevant, 1 partly, 1 not" in default.message
    assert "off topic" in default.message
    assert weighted.score == 3.67
    assert weighted.status is AStatus.PASSED
    assert scaled.score == 2.73
    assert scaled.metric == 4.33  # Mastra's own number, 0..scale


def test_answer_relevancy_on_an_empty_output_needs_no_verdict_call():
    with ModelServer.for_openai(_mastra(statements=[], verdicts=[])) as fake:
        (result,), _ = evaluate_with(fake.url, [{"type": "answer_relevancy", "threshold": 1}], output="")
        assert len(fake.requests) == 1
    assert result.score == 1.0
    assert result.status is AStatus.PASSED
    assert "no statement" in result.message


def test_answer_relevancy_verdict_count_mismatch_is_retried_then_an_error():
    def respond(req):
        if "meaningful statements" in user_prompt(req):
            return text_reply(json.dumps({"statements": STATEMENTS}))
        return text_reply(json.dumps({"results": VERDICTS[:1]}))

    with ModelServer.for_openai(respond) as fake:
        (result,), ctx = evaluate_with(fake.url, [{"type": "answer_relevancy", "not": True}])
        assert len(fake.requests) == 3  # extraction, verdicts, verdicts again
    assert result.status is AStatus.FAILED
    assert "1 verdict(s) for 3 statement(s)" in result.message


# --- the single-call 1-5 types ------------------------------------------------------------------


def test_faithfulness_and_context_recall_need_context_and_make_no_call_without_it():
    with ModelServer.for_openai([text_reply(score_json(5))]) as fake:
        results, _ = evaluate_with(fake.url, [{"type": "faithfulness"}, {"type": "context_recall", "not": True}])
        assert fake.requests == []
    assert all(r.status is AStatus.FAILED for r in results)
    assert "needs sample.context or the assertion's `reference`" in results[0].message


def test_faithfulness_uses_reference_first_then_sample_context():
    with ModelServer.for_openai([text_reply(score_json(4, "supported"))]) as fake:
        s = sample(context="CTX-FROM-SAMPLE")
        (a, b), _ = evaluate_with(fake.url, [{"type": "faithfulness", "reference": "REF-TEXT"}, {"type": "faithfulness"}], s)
        first, second = user_prompt(fake.requests[0]), user_prompt(fake.requests[1])
    assert "REF-TEXT" in first
    assert "CTX-FROM-SAMPLE" not in first
    assert "CTX-FROM-SAMPLE" in second
    assert "length is not a quality signal" in first
    assert a.status is AStatus.PASSED
    assert a.score == 4.0
    assert a.metric == 4.0
    assert a.message == "4/5 (threshold 3): supported"


@pytest.mark.parametrize(
    "score, threshold, negate, status, shown",
    [
        (3, None, False, AStatus.PASSED, 3.0),
        (2, None, False, AStatus.FAILED, 2.0),
        (4, 4.5, False, AStatus.FAILED, 4.0),
        (2, None, True, AStatus.PASSED, 4.0),  # `not` inverts the verdict and mirrors the score
        (5, None, True, AStatus.FAILED, 1.0),
    ],
)
def test_semantic_similarity_threshold_and_not(score, threshold, negate, status, shown):
    raw = {"type": "semantic_similarity", "reference": "retry with backoff", "not": negate}
    if threshold is not None:
        raw["threshold"] = threshold
    with ModelServer.for_openai([text_reply(score_json(score))]) as fake:
        (result,), _ = evaluate_with(fake.url, [raw])
        assert "## Reference text\nretry with backoff" in user_prompt(fake.requests[0])
    assert result.status is status
    assert result.score == shown


def test_a_judge_error_fails_the_assertion_even_under_not_and_marks_the_sample():
    with ModelServer.for_openai([HttpError(500)]) as fake:
        judge = make_judge([f"openai:m@{fake.url}"], retries=1)
        (result,), ctx = run(_evaluate(judge, [{"type": "context_recall", "reference": "facts", "not": True}], sample()))
        assert len(fake.requests) == 2
    assert result.status is AStatus.FAILED
    assert result.message.startswith("context_recall judge error: ")
    assert judge.failure(ctx, None).startswith("judge: context_recall judge error")
    assert judge.failure(ctx, None) is None  # taken once


def test_judged_types_inside_an_ensemble_use_the_consensus():
    def respond(req):
        return text_reply(score_json(2 if req.json["model"] == "a" else 5))

    with ModelServer.for_openai(respond) as fake:
        judge = make_judge([f"openai:a@{fake.url}", f"openai:b@{fake.url}"])
        (result,), _ = run(_evaluate(judge, [{"type": "semantic_similarity", "reference": "r"}], sample()))
    assert result.score == 3.5
    assert result.status is AStatus.PASSED
    assert "consensus of 2/2 judges" in result.message


# --- the judge inside a sample run --------------------------------------------------------------


class FixedTarget:
    spec = "fixed"

    def __init__(self, output: str):
        self.output = output

    def describe(self):
        return {"kind": "fixed"}

    def cache_identity(self):
        return None

    async def run(self, sample, prompt):
        return TargetResult(output=self.output, trace=Trace())

    async def close(self):
        return None


async def _run_one(judge, s):
    try:
        return await run_sample(s, FixedTarget("use a parameterised query"), RunConfig(threshold=3.5, judge=judge))
    finally:
        await judge.close()


def test_the_judge_layer_enters_the_composite():
    with ModelServer.for_openai([text_reply(score_json(3))]) as fake:
        s = sample(rubric="r", assertions=[make_spec("contains", value="parameterised")])
        result = run(_run_one(make_judge([f"openai:m@{fake.url}"]), s))
    assert result.status == "ok"
    assert result.scores.fact == 5.0
    assert result.scores.judge == 3.0
    assert result.scores.composite == 4.0
    assert result.passed is False  # the judge layer is under 3.5


def test_a_judge_that_gives_up_marks_the_sample_error_and_the_composite_has_no_zero():
    with ModelServer.for_openai([text_reply("nope"), text_reply("still nope")]) as fake:
        s = sample(rubric="r", assertions=[make_spec("contains", value="parameterised")])
        result = run(_run_one(make_judge([f"openai:m@{fake.url}"]), s))
    assert result.status == "error"
    assert result.error.startswith("judge: rubric: ")
    assert result.passed is False
    assert result.scores.judge is None
    assert result.scores.composite == 5.0
    assert result.judge.rubric is not None
    assert list(result.judge.rubric.raw_replies or ()) == ["nope", "still nope"]
    assert result.to_json()["judge"]["error"].startswith("rubric: ")
