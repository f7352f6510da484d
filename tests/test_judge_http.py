"""The judge against real HTTP servers on 127.0.0.1: scripted replies, retries, ensembles, cost, cache."""

from __future__ import annotations

import asyncio
import json

import pytest
from judge_support import by_model, graded, make_judge, run, sample, score_json, user_prompt

from omk.core.errors import ConfigError
from omk.judge.clients import make_client
from omk.records import Trace
from omk.store.cache import ResponseCache
from omk.testing import Garbage, HttpError, ModelServer, Slow
from omk.testing.anthropic import text_reply as anthropic_reply
from omk.testing.openai_chat import text_reply


@pytest.mark.parametrize(
    "reply, score",
    [
        ('```json\n{"reasoning": "r", "score": 4, "reason": "solid"}\n```', 4.0),
        ('Let me think.\n{"reasoning": "r", "score": 2, "reason": "solid"}\nThat is all.', 2.0),
        ('{"score": "5", "reason": "solid"}', 5.0),
        ('{"score": 3.5, "reason": "solid"}', 3.5),
    ],
)
def test_rubric_reply_shapes(reply, score):
    with ModelServer.for_openai([text_reply(reply)]) as fake:
        block = run(graded(make_judge([f"openai:judge-m@{fake.url}"]), sample(rubric="uses parameters")))
        assert len(fake.requests) == 1
    assert block["score"] == score
    assert block["error"] is None
    assert block["rubric"]["score"] == score
    assert block["rubric"]["reason"] == "solid"
    assert block["dimensions"] is None


def test_the_request_judges_sample_prompt_not_the_context_wrapped_one():
    with ModelServer.for_openai([text_reply(score_json(4))]) as fake:
        s = sample(rubric="CRITERION-X", context="SECRET-CONTEXT")
        run(graded(make_judge([f"openai:judge-m@{fake.url}"]), s, output="OUTPUT-Y"))
        body = fake.requests[0].json
    assert body["model"] == "judge-m"
    assert body["temperature"] == 0
    assert body["messages"][0]["role"] == "system"
    assert "strict reviewer" in body["messages"][0]["content"]
    text = body["messages"][1]["content"]
    assert "How do I fix this SQL query?" in text
    assert "CRITERION-X" in text
    assert "OUTPUT-Y" in text
    assert "SECRET-CONTEXT" not in text
    assert "(template v3-cot-length-en)" in text
    assert "length is not a quality signal" in text


def test_chinese_template_without_debias():
    with ModelServer.for_openai([text_reply(score_json(4))]) as fake:
        run(graded(make_judge([f"openai:m@{fake.url}"], lang="zh", debias_length=False), sample(rubric="r")))
        text = user_prompt(fake.requests[0])
    assert text.startswith("请对以下 AI 输出进行质量评分（template v2-cot）。")
    assert "长度不是质量信号" not in text


@pytest.mark.parametrize(
    "first",
    [
        text_reply('{"score": 9, "reason": "out of range"}'),
        text_reply("I think it is pretty good overall."),
        text_reply('{"score": "excellent"}'),
    ],
)
def test_an_unusable_reply_is_asked_again_once(first):
    with ModelServer.for_openai([first, text_reply(score_json(3, "second try"))]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"]), sample(rubric="r")))
        assert len(fake.requests) == 2
    assert block["score"] == 3.0
    assert block["rubric"]["reason"] == "second try"
    assert block["rubric"]["raw_replies"]  # the bad reply is kept for the reader


def test_two_unusable_replies_make_the_item_an_error_with_the_raw_reply_kept():
    with ModelServer.for_openai([text_reply("no idea, sorry"), text_reply("still no JSON"), text_reply(score_json(5))]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"]), sample(rubric="r")))
        assert len(fake.requests) == 2  # one retry, not more
    assert block["score"] is None  # never a silent 0
    assert "unparseable reply (asked twice)" in block["error"]
    assert block["error"].startswith("rubric: ")
    assert block["rubric"]["raw_replies"] == ["no idea, sorry", "still no JSON"]


def test_transport_failures_are_retried_then_give_up_as_an_error():
    with ModelServer.for_openai([HttpError(500), text_reply(score_json(4))]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"], retries=2), sample(rubric="r")))
        assert len(fake.requests) == 2
        assert block["score"] == 4.0
    with ModelServer.for_openai([HttpError(503)]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"], retries=2), sample(rubric="r")))
        assert len(fake.requests) == 3
    assert block["score"] is None
    assert "HTTP 503" in block["error"]
    assert "gave up after 3 attempts" in block["error"]
    with ModelServer.for_openai([HttpError(401)]) as fake:  # not transient: no retry
        block = run(graded(make_judge([f"openai:m@{fake.url}"], retries=2), sample(rubric="r")))
        assert len(fake.requests) == 1
        assert "HTTP 401" in block["error"]


def test_timeouts_are_retried_and_reported():
    with ModelServer.for_openai([Slow(5, text_reply(score_json(5))), text_reply(score_json(2))]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"], timeout=0.3, retries=1), sample(rubric="r")))
        assert len(fake.requests) == 2
    assert block["score"] == 2.0
    with ModelServer.for_openai([Slow(5, text_reply(score_json(5)))]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"], timeout=0.3, retries=1), sample(rubric="r")))
        assert len(fake.requests) == 2
    assert block["score"] is None
    assert "timed out after 0.3s" in block["error"]


def test_garbage_http_body_is_an_error_not_a_score():
    with ModelServer.for_openai([Garbage()]) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"]), sample(rubric="r")))
    assert block["score"] is None
    assert "not JSON" in block["error"]


def _criterion_scores(mapping):
    def respond(req):
        text = user_prompt(req)
        for needle, score in mapping.items():
            if needle in text:
                return text_reply(score_json(score, f"for {needle}"))
        raise AssertionError(text)

    return respond


def test_rubric_and_dimensions_combine_as_the_mean_of_rubric_and_dimension_mean():
    responder = _criterion_scores({"RUBRIC-TEXT": 4, "security: finds the injection": 5, "actionability: gives code": 2})
    with ModelServer.for_openai(responder) as fake:
        s = sample(rubric="RUBRIC-TEXT", dimensions={"security": "finds the injection", "actionability": "gives code"})
        block = run(graded(make_judge([f"openai:m@{fake.url}"]), s))
        assert len(fake.requests) == 3  # one call for the rubric, one per dimension
    assert block["rubric"]["score"] == 4.0
    assert {k: v["score"] for k, v in block["dimensions"].items()} == {"security": 5.0, "actionability": 2.0}
    assert block["score"] == 3.75  # mean(4, mean(5, 2))
    with ModelServer.for_openai(responder) as fake:
        only_dims = sample(dimensions={"security": "finds the injection", "actionability": "gives code"})
        assert run(graded(make_judge([f"openai:m@{fake.url}"]), only_dims))["score"] == 3.5


def test_a_failed_dimension_fails_the_whole_judge_block():
    def responder(req):
        return text_reply("garbage") if "broken" in user_prompt(req) else text_reply(score_json(5))

    with ModelServer.for_openai(responder) as fake:
        s = sample(dimensions={"good": "fine", "bad": "broken"})
        block = run(graded(make_judge([f"openai:m@{fake.url}"]), s))
    assert block["score"] is None
    assert block["error"].startswith("dimension bad: ")
    assert block["dimensions"]["good"]["score"] == 5.0


def test_tool_calls_add_an_agent_trace_summary():
    from omk.records import ToolCall

    with ModelServer.for_openai([text_reply(score_json(4))]) as fake:
        trace = Trace(tool_calls=[ToolCall("lookup_order", {"id": "A1"}, {"status": "shipped"})])
        run(graded(make_judge([f"openai:m@{fake.url}"]), sample(rubric="r"), trace=trace))
        text = user_prompt(fake.requests[0])
    assert "## Agent execution" in text
    assert 'lookup_order({"id":"A1"}) -> {"status":"shipped"}' in text


def test_ensemble_with_disagreeing_judges():
    with ModelServer.for_openai(by_model({"strict": score_json(2, "harsh"), "lenient": score_json(5, "kind")})) as fake:
        judge = make_judge([f"openai:strict@{fake.url}", f"openai:lenient@{fake.url}"])
        block = run(graded(judge, sample(rubric="r")))
    assert block["score"] == 3.5
    members = block["rubric"]["judges"]
    assert [(m["judge"].split("@")[0], m["score"]) for m in members] == [("openai:strict", 2.0), ("openai:lenient", 5.0)]
    assert block["rubric"]["agreement"] == {"mean_abs_diff": 3.0, "pair_count": 1, "stddev": 1.5}
    assert "consensus of 2/2 judges" in block["rubric"]["reason"]
    assert [j["score"] for j in block["judges"]] == [2.0, 5.0]


def test_ensemble_survives_one_failing_judge_and_reports_it():
    with ModelServer.for_openai(by_model({"good": score_json(4), "bad": HttpError(400)})) as fake:
        judge = make_judge([f"openai:good@{fake.url}", f"openai:bad@{fake.url}"])
        block = run(graded(judge, sample(rubric="r")))
    assert block["score"] == 4.0
    assert block["error"] is None
    assert block["rubric"]["judges"][1]["score"] is None
    assert "HTTP 400" in block["rubric"]["judges"][1]["error"]
    assert block["judges"][1]["score"] is None
    assert block["agreement"] is None


def test_agreement_across_samples():
    scores = {"s1": (1, 2), "s2": (3, 3), "s3": (5, 4), "s4": (4, 1)}

    def responder(req):
        sid = next(k for k in scores if f"PROMPT-{k}" in user_prompt(req))
        return text_reply(score_json(scores[sid][0 if req.json["model"] == "a" else 1]))

    async def go(judge):
        from omk.records import JudgeBlock, SampleResult

        results = []
        for sid in scores:
            s = sample(sample_id=sid, prompt=f"PROMPT-{sid}", rubric="r")
            block = JudgeBlock.read(await judge.grade(s, "o", Trace()))
            results.append(SampleResult.start(s, s.prompt, judge=block))
        await judge.close()
        return judge.describe(results)

    with ModelServer.for_openai(responder) as fake:
        described = run(go(make_judge([f"openai:a@{fake.url}", f"openai:b@{fake.url}"])))
    agreement = described["agreement"]
    assert agreement["sample_count"] == 4
    assert agreement["pair_count"] == 1
    assert agreement["mean_abs_diff"] == 1.25  # (1 + 0 + 1 + 3) / 4
    assert agreement["pearson"] == 0.378  # 2.5 / sqrt(8.75 * 5)
    assert described["models"][0].startswith("openai:a@")


def test_judge_repeat_reports_mean_stddev_and_failures():
    replies = iter([score_json(4), score_json(2), "garbage", "more garbage"])

    def responder(req):
        return text_reply(next(replies))

    with ModelServer.for_openai(responder) as fake:
        block = run(graded(make_judge([f"openai:m@{fake.url}"], repeat=3), sample(rubric="r")))
        assert len(fake.requests) == 4
    rubric = block["rubric"]
    assert rubric["score"] == 3.0
    assert rubric["failures"] == 1
    assert rubric["stddev"] == 1.414
    assert sorted(rubric["samples"], key=lambda v: (v is None, v)) == [2.0, 4.0, None]
    assert block["score"] == 3.0
    assert block["error"] is None


def test_cost_is_counted_apart_and_known_models_are_priced():
    with ModelServer.for_openai([text_reply(score_json(4), prompt_tokens=1000, completion_tokens=100)]) as fake:
        judge = make_judge([f"openai:gpt-4o-mini@{fake.url}"])
        block = run(graded(judge, sample(rubric="r")))
    assert block["cost_usd"] == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6)
    assert judge.spent_usd() == pytest.approx(0.00021)
    with ModelServer.for_openai([text_reply(score_json(4))]) as fake:
        judge = make_judge([f"openai:unknown-model@{fake.url}"])
        block = run(graded(judge, sample(rubric="r")))
    assert block["cost_usd"] is None
    assert judge.spent_usd() is None


def test_parsed_replies_are_cached_and_garbage_is_not(tmp_path):
    async def go(url, cache):
        judge = make_judge([f"openai:m@{url}"])
        judge.use_cache(cache)
        return await graded(judge, sample(rubric="r"))

    cache = ResponseCache(tmp_path / "cache.sqlite")
    with ModelServer.for_openai([text_reply("garbage"), text_reply(score_json(4))]) as fake:
        first = run(go(fake.url, cache))
        second = run(go(fake.url, cache))
        assert len(fake.requests) == 2  # garbage + the retry; the rerun was served from the cache
    assert first["score"] == second["score"] == 4.0
    assert second["cost_usd"] is None
    cache.close()


def test_anthropic_judge():
    with ModelServer([anthropic_reply("Sure.\n" + score_json(5, "great"))]) as fake:
        block = run(graded(make_judge([f"anthropic:claude-haiku-4-5@{fake.url}"]), sample(rubric="r")))
        body = fake.requests[0].json
        headers = fake.requests[0].headers
    assert block["score"] == 5.0
    assert block["rubric"]["reason"] == "great"
    assert "strict reviewer" in body["system"]
    assert body["messages"][0]["role"] == "user"
    assert body["max_tokens"] > 0
    assert headers["anthropic-version"] == "2023-06-01"
    assert block["cost_usd"] == pytest.approx((10 * 1.0 + 5 * 5.0) / 1e6)


def test_concurrency_is_bounded():
    in_flight = {"now": 0, "max": 0}
    import threading

    lock = threading.Lock()

    def responder(req):
        with lock:
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
        import time

        time.sleep(0.05)
        with lock:
            in_flight["now"] -= 1
        return text_reply(score_json(3))

    async def go(url):
        judge = make_judge([f"openai:m@{url}"], concurrency=2)
        s = sample(dimensions={f"d{i}": "c" for i in range(6)})
        block = await judge.grade(s, "o", Trace())
        await judge.close()
        return block

    with ModelServer.for_openai(responder) as fake:
        block = asyncio.run(go(fake.url))
        assert len(fake.requests) == 6
    assert block["score"] == 3.0
    assert in_flight["max"] <= 2


def test_specs_are_checked_up_front(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="no API key"):
        make_client("openai:gpt-4o", {})
    with pytest.raises(ConfigError, match="no API key"):
        make_client("openai:m@https://judge.example.com/v1", {})
    with pytest.raises(ConfigError, match="unknown kind"):
        make_client("gemini:pro", {})
    with pytest.raises(ConfigError, match="command not found"):
        make_client("cmd:/no/such/judge-program", {})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET")
    client = make_client("openai:m@https://judge.example.com/v1", {})
    assert "SECRET" not in json.dumps(client.describe()) + json.dumps(client.identity().material())
    client = make_client("openai:m@http://user:PASSWORD@127.0.0.1:9/v1", {})
    assert client.spec == "openai:m@http://127.0.0.1:9/v1"
    assert "PASSWORD" not in json.dumps(client.describe())
