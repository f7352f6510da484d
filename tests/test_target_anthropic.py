"""`anthropic:MODEL` against a real Messages-API server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

from omk.core.errors import ConfigError
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.testing import Garbage, HttpError, ModelServer
from omk.testing.anthropic import text_reply, tool_results, tool_use_reply

KEY = "sk-ant-test-SECRET-987654"


pytestmark = pytest.mark.usefixtures("no_provider_env")


def refund_sample(**fields) -> Sample:
    return Sample(
        "cs-refund",
        "Refund order B2002",
        mocks=[
            {"tool": "lookup_order", "match": {"input_contains": "b2002"}, "return": {"status": "delivered"}},
            {"tool": "issue_refund", "return_seq": [{"ok": True, "refund_id": "R-1"}], "return": {"ok": False}},
        ],
        **fields,
    )


def run_target(spec: str, sample: Sample, settings: dict | None = None):
    async def go():
        target = make_target(spec, settings=settings)
        try:
            return await target.run(sample, sample.prompt)
        finally:
            await target.close()

    return asyncio.run(go())


def test_tool_use_blocks_are_answered_with_tool_result_blocks(monkeypatch):
    script = [
        tool_use_reply([("lookup_order", {"order_id": "B2002"})], text="Let me check.", input_tokens=1000, output_tokens=100),
        tool_use_reply([("issue_refund", {"order_id": "B2002"}), ("issue_refund", {"order_id": "B2002"})]),
        text_reply("Refunded: R-1.", input_tokens=2000, output_tokens=200),
    ]
    with ModelServer(script) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        got = run_target("anthropic:claude-3-5-haiku-20241022", refund_sample(), {"system": "Be kind."})
        reqs = fake.requests
    first = reqs[0]
    assert first.headers["x-api-key"] == KEY
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert first.json["system"] == "Be kind."
    assert first.json["max_tokens"] == 4096
    assert [t["name"] for t in first.json["tools"]] == ["lookup_order", "issue_refund"]
    assert first.json["tools"][0]["input_schema"] == {"type": "object"}
    assert tool_results(reqs[1]) == [
        {"type": "tool_result", "tool_use_id": "toolu_0", "content": '{"status":"delivered"}', "is_error": False}
    ]
    assert [b["content"] for b in tool_results(reqs[2])] == ['{"ok":true,"refund_id":"R-1"}', '{"ok":false}']
    # the assistant turn is sent back unchanged, tool_use blocks included
    assert reqs[1].json["messages"][1]["content"][1]["type"] == "tool_use"
    assert got.output == "Refunded: R-1."
    trace = got.trace
    assert trace.turns == 3
    assert [(c.tool, c.mock_key) for c in trace.tool_calls] == [
        ("lookup_order", "lookup_order:1"),
        ("issue_refund", "issue_refund:1"),
        ("issue_refund", "issue_refund:1"),
    ]
    assert trace.mock_stats.to_json() == {"hits": 3, "misses": 0, "per_mock": {"lookup_order:1": 1, "issue_refund:1": 2}}
    assert trace.tokens == {"input": 3010, "output": 305}
    assert trace.cost_usd == pytest.approx((3010 * 0.80 + 305 * 4.00) / 1e6)


def test_strict_denial_reaches_the_model_as_an_error_result(monkeypatch):
    script = [tool_use_reply([("Bash", {"command": "rm -rf /"})]), text_reply("I won't.")]
    with ModelServer(script) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        got = run_target("anthropic:claude-x", refund_sample(mocks_strict=True))
        result = tool_results(fake.requests[1])[0]
    assert result["is_error"] is True
    assert "denied" in result["content"]
    assert got.trace.tool_calls[0].is_error
    assert got.trace.mock_stats.misses == 1


def test_max_turns_cap(monkeypatch):
    with ModelServer([tool_use_reply([("lookup_order", {"q": "B2002"})], text="checking")]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        got = run_target("anthropic:m", refund_sample(), {"max_turns": 2})
        assert len(fake.requests) == 2
    assert got.trace.turns == 2
    assert got.output == "checking"
    assert got.trace.notes


def test_params_override_max_tokens(monkeypatch):
    with ModelServer([text_reply("ok")]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        run_target("anthropic:m", Sample("s", "p"), {"anthropic": {"params": {"max_tokens": 64, "temperature": 0.2}}})
        body = fake.requests[0].json
    assert body["max_tokens"] == 64
    assert body["temperature"] == 0.2
    assert "system" not in body
    assert "tools" not in body


@pytest.mark.parametrize(
    ("step", "retryable", "retry_after", "text"),
    [
        (HttpError(429, retry_after="3"), True, 3, "injected error 429"),
        (HttpError(529), True, None, "HTTP 529"),
        (HttpError(401), False, None, "HTTP 401"),
        (Garbage(b"oops"), False, None, "not JSON"),
        ({"type": "message", "content": "not a list"}, False, None, "no content blocks"),
    ],
)
def test_errors_are_classified(monkeypatch, step, retryable, retry_after, text):
    with ModelServer([step]) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        with pytest.raises(TargetError) as info:
            run_target("anthropic:m", Sample("s", "p"))
    err = info.value
    assert (err.retryable, err.retry_after) == (retryable, retry_after)
    assert text in str(err)
    assert KEY not in str(err)


def test_missing_key_for_the_official_endpoint_is_a_config_error():
    with pytest.raises(ConfigError, match="set ANTHROPIC_API_KEY"):
        make_target("anthropic:claude-sonnet-4-5")


def test_describe_has_no_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    target = make_target("anthropic:claude-sonnet-4-5")
    assert KEY not in json.dumps([target.describe(), target.cache_identity().material()])
    assert target.describe()["base_url"] == "https://api.anthropic.com"
