"""`openai:MODEL` against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

from omk.core.errors import ConfigError
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.testing import Drop, Garbage, HttpError, ModelServer, Slow
from omk.testing.openai_chat import text_reply, tool_call_reply, tool_messages

KEY = "sk-test-SECRET-0123456789"


pytestmark = pytest.mark.usefixtures("no_provider_env")


def order_sample(**fields) -> Sample:
    return Sample(
        "cs-1",
        "Where is order A1001?",
        mocks=[
            {"tool": "lookup_order", "match": {"input": {"order_id": "A1001"}}, "return": {"status": "shipped"}},
            {"tool": "issue_refund", "return": "refunded"},
        ],
        **fields,
    )


def run_target(spec: str, sample: Sample, settings: dict | None = None, prompt: str | None = None):
    async def go():
        target = make_target(spec, settings=settings)
        try:
            return await target.run(sample, prompt or sample.prompt)
        finally:
            await target.close()

    return asyncio.run(go())


def test_tool_calls_are_answered_by_mocks_and_the_server_sees_the_results(monkeypatch):
    script = [
        tool_call_reply([("lookup_order", {"order_id": "A1001"})], prompt_tokens=100, completion_tokens=20),
        text_reply("It has shipped.", prompt_tokens=150, completion_tokens=30),
    ]
    with ModelServer.for_openai(script) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        got = run_target("openai:gpt-4o-mini", order_sample(), {"system": "You are Nova.", "openai": {"params": {"temperature": 0}}})
        first, second = fake.requests
    assert got.output == "It has shipped."
    # what the model was offered: both mocked tools, permissive schemas
    assert [t["function"]["name"] for t in first.json["tools"]] == ["lookup_order", "issue_refund"]
    assert first.json["messages"][0] == {"role": "system", "content": "You are Nova."}
    assert first.json["messages"][1] == {"role": "user", "content": "Where is order A1001?"}
    assert first.json["temperature"] == 0
    assert first.json["model"] == "gpt-4o-mini"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    # what omk answered the tool call with
    assert tool_messages(second) == [{"role": "tool", "tool_call_id": "call_0", "content": '{"status":"shipped"}'}]
    trace = got.trace
    assert trace.turns == 2
    assert [c.to_json() for c in trace.tool_calls] == [
        {
            "tool": "lookup_order",
            "input": {"order_id": "A1001"},
            "output": {"status": "shipped"},
            "mocked": True,
            "mock_key": "lookup_order:1",
            "is_error": False,
            "outcome": "mock",
        }
    ]
    assert trace.mock_stats.to_json() == {"hits": 1, "misses": 0, "per_mock": {"lookup_order:1": 1}}
    assert trace.tokens == {"input": 250, "output": 50}
    assert trace.cost_usd == pytest.approx((250 * 0.15 + 50 * 0.60) / 1e6)
    assert trace.latency_ms is not None
    assert trace.latency_ms >= 0


def test_strict_mode_denies_an_unmatched_call(monkeypatch):
    script = [tool_call_reply([("lookup_order", {"order_id": "Z9"})]), text_reply("I could not look it up.")]
    with ModelServer.for_openai(script) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        got = run_target("openai:local-model", order_sample(mocks_strict=True))
        sent = tool_messages(fake.requests[1])
    assert "denied" in sent[0]["content"]
    call = got.trace.tool_calls[0]
    assert call.is_error
    assert not call.mocked
    assert call.mock_key is None
    assert got.trace.mock_stats.misses == 1
    assert got.trace.cost_usd is None  # unknown model: no price, no guess


def test_declared_tools_are_offered_with_their_schema(monkeypatch):
    schema = {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}
    sample = Sample("s", "p", tools=[{"name": "Read", "description": "Read a file", "parameters": schema}])
    with ModelServer.for_openai([text_reply("ok")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        run_target("openai:m", sample)
        offered = fake.requests[0].json["tools"]
    assert offered == [{"type": "function", "function": {"name": "Read", "description": "Read a file", "parameters": schema}}]


def test_no_tools_no_tools_field(monkeypatch):
    with ModelServer.for_openai([text_reply("hi")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        got = run_target("openai:m", Sample("s", "p"))
        assert "tools" not in fake.requests[0].json
    assert got.trace.turns == 1
    assert got.trace.tool_calls == ()


def test_max_turns_caps_the_loop_and_says_so(monkeypatch):
    with ModelServer.for_openai([tool_call_reply([("lookup_order", {"order_id": "A1001"})], text="still looking")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        got = run_target("openai:m", order_sample(), {"max_turns": 3})
        calls_made = len(fake.requests)
    assert calls_made == 3
    assert got.trace.turns == 3
    assert got.output == "still looking"
    assert len(got.trace.tool_calls) == 2  # the third turn's request was not answered
    assert "max_turns (3)" in got.trace.notes[0]
    assert "max_turns (3)" in json.dumps(got.trace.to_json())


def test_unparseable_arguments_are_kept_as_text(monkeypatch):
    script = [tool_call_reply([("lookup_order", "{not json")]), text_reply("done")]
    with ModelServer.for_openai(script) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        got = run_target("openai:m", order_sample())
    assert got.trace.tool_calls[0].input == "{not json"


def run_error(monkeypatch, step) -> TargetError:
    with ModelServer.for_openai([step]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        with pytest.raises(TargetError) as info:
            run_target("openai:m", Sample("s", "p"))
    assert KEY not in str(info.value)
    return info.value


def test_429_is_retryable_with_retry_after(monkeypatch):
    err = run_error(monkeypatch, HttpError(429, retry_after="7"))
    assert err.retryable
    assert err.retry_after == 7
    assert "HTTP 429" in str(err)
    assert "injected error 429" in str(err)


def test_5xx_is_retryable(monkeypatch):
    err = run_error(monkeypatch, HttpError(503, body="upstream overloaded"))
    assert err.retryable
    assert err.retry_after is None
    assert "HTTP 503: upstream overloaded" in str(err)


def test_4xx_is_final(monkeypatch):
    err = run_error(monkeypatch, HttpError(400, body={"error": {"message": "bad model"}}))
    assert not err.retryable
    assert "HTTP 400: bad model" in str(err)


def test_garbage_body_is_final_with_an_excerpt(monkeypatch):
    err = run_error(monkeypatch, Garbage(b"<html>gateway says hello</html>"))
    assert not err.retryable
    assert "not JSON" in str(err)
    assert "gateway says hello" in str(err)


def test_json_without_choices_is_final(monkeypatch):
    err = run_error(monkeypatch, {"unexpected": True})
    assert not err.retryable
    assert "no choices" in str(err)


def test_dropped_connection_is_retryable(monkeypatch):
    err = run_error(monkeypatch, Drop())
    assert err.retryable
    assert "connection failed" in str(err)


def test_an_echoed_key_is_redacted(monkeypatch):
    err = run_error(monkeypatch, HttpError(401, body={"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    assert not err.retryable
    assert "Incorrect API key provided: [redacted]" in str(err)


def test_a_slow_server_is_cut_off_by_the_callers_timeout(monkeypatch):
    with ModelServer.for_openai([Slow(30, text_reply("late"))]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)

        async def go():
            target = make_target("openai:m")
            try:
                await asyncio.wait_for(target.run(Sample("s", "p"), "p"), timeout=0.3)
            finally:
                await target.close()

        with pytest.raises(TimeoutError):
            asyncio.run(go())


def test_missing_key_for_a_remote_url_is_a_config_error(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.com/v1")
    with pytest.raises(ConfigError, match="set OPENAI_API_KEY"):
        make_target("openai:gpt-4o")
    with pytest.raises(ConfigError, match="set MY_KEY"):
        make_target("openai:gpt-4o", settings={"openai": {"api_key_env": "MY_KEY"}})


def test_a_local_url_needs_no_key_and_sends_none(monkeypatch):
    with ModelServer.for_openai([text_reply("hi")]) as fake:
        got = run_target("openai:m", Sample("s", "p"), {"openai": {"base_url": fake.url}})
        assert "authorization" not in fake.requests[0].headers
    assert got.output == "hi"


def test_environment_base_url_beats_omk_yaml(monkeypatch):
    with ModelServer.for_openai([text_reply("from env")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        got = run_target("openai:m", Sample("s", "p"), {"openai": {"base_url": "http://127.0.0.1:9/v1"}})
    assert got.output == "from env"


def test_key_from_the_named_variable_never_in_describe_or_cache_identity(monkeypatch):
    monkeypatch.setenv("MY_KEY", KEY)
    target = make_target(
        "openai:gpt-4o",
        settings={"openai": {"api_key_env": "MY_KEY", "base_url": "https://user:pw@api.example.com/v1"}},
    )
    assert target.provider.api_key == KEY
    shown = json.dumps([target.describe(), target.cache_identity().material()])
    assert KEY not in shown
    assert "pw@" not in shown
    assert target.describe()["base_url"] == "https://api.example.com/v1"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"api_key": "sk-x"}, "keys do not belong in omk.yaml"),
        ({"bogus": 1}, "openai.bogus: unknown setting"),
        ({"params": [1]}, "openai.params: must be a mapping"),
        ({"price": {"input": 1}}, "openai.price"),
    ],
)
def test_bad_provider_blocks_are_config_errors(monkeypatch, block, message):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigError, match=message):
        make_target("openai:m", settings={"openai": block})


def test_price_override_from_omk_yaml(monkeypatch):
    with ModelServer.for_openai([text_reply("x", prompt_tokens=1_000_000, completion_tokens=500_000)]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        got = run_target("openai:my-finetune", Sample("s", "p"), {"openai": {"price": {"input": 1, "output": 4}}})
    assert got.trace.cost_usd == pytest.approx(3.0)


def test_skill_file_is_the_system_prompt(monkeypatch, tmp_path):
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Refund skill\nAlways confirm the order first.", encoding="utf-8")
    with ModelServer.for_openai([text_reply("ok")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        run_target("openai:m", Sample("s", "p"), {"skill": str(skill)})
        assert fake.requests[0].json["messages"][0] == {"role": "system", "content": skill.read_text(encoding="utf-8")}
    target = make_target("openai:m", settings={"skill": str(skill), "openai": {"base_url": "http://127.0.0.1:9/v1"}})
    assert target.describe()["system"]["source"] == "skill"
    with pytest.raises(ConfigError, match="skill: file not found"):
        make_target("openai:m", settings={"skill": str(tmp_path / "nope.md"), "openai": {"base_url": "http://127.0.0.1:9/v1"}})
    with pytest.raises(ConfigError, match="not both"):
        make_target("openai:m", settings={"skill": str(skill), "system": "x", "openai": {"base_url": "http://127.0.0.1:9/v1"}})
