"""The model-call layer (omk/llm) that the API targets and the judge share, against real servers on
127.0.0.1: one client class per provider, the same wire format, the same error classification."""

from __future__ import annotations

import asyncio

import pytest

from omk.judge.clients import make_client
from omk.judge.model_judge import ModelJudge
from omk.llm.anthropic_messages import AnthropicMessages
from omk.llm.client import ToolResult
from omk.llm.errors import CallError
from omk.llm.http import ProviderSettings
from omk.llm.openai_chat import OpenAIChat
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.model_api import ApiTarget
from omk.testing import HttpError, ModelServer, Slow
from omk.testing.anthropic import text_reply as anthropic_reply
from omk.testing.openai_chat import text_reply

KEY = "sk-test-secret-0123456789"


def provider(name: str, url: str, params: dict | None = None) -> ProviderSettings:
    return ProviderSettings(name=name, base_url=url, api_key=KEY, api_key_env="X_KEY", params=params or {})


async def one_request(client, payload, timeout=None):
    try:
        return await client.send(payload, timeout=timeout)
    finally:
        await client.close()


@pytest.mark.parametrize("kind, client_class", [("openai", OpenAIChat), ("anthropic", AnthropicMessages)])
def test_the_target_and_the_judge_of_a_provider_use_the_same_client(monkeypatch, kind, client_class):
    monkeypatch.setenv(f"{kind.upper()}_BASE_URL", "http://127.0.0.1:9")
    target = make_target(f"{kind}:m", settings={}).inner  # make_target masks secrets around the target
    judge = make_client(f"{kind}:m")
    assert isinstance(target, ApiTarget)
    assert isinstance(judge, ModelJudge)
    assert type(target.client) is type(judge.client) is client_class
    assert target.client.endpoint() == judge.client.endpoint()


def test_the_judges_anthropic_request_is_the_targets_with_the_judges_settings(monkeypatch):
    """The judge asks for its own max_tokens and temperature 0 and never offers tools; the target
    sends the API's default max_tokens; user params win over both."""
    client = AnthropicMessages("claude-x", provider("anthropic", "http://127.0.0.1:9"), label="anthropic")
    tools = [{"name": "Read", "description": "read a file", "parameters": {"type": "object"}}]
    history = client.history([{"role": "user", "content": "hi"}])
    target_body = client.request("SYS", history, tools, {"top_p": 0.5})
    assert target_body["max_tokens"] == 4096
    assert target_body["system"] == "SYS"
    assert target_body["top_p"] == 0.5
    assert target_body["tools"] == [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]

    with ModelServer([anthropic_reply('{"score": 4, "reason": "ok"}')]) as fake:
        judge = make_client(f"anthropic:claude-x@{fake.url}", {})
        judge.client.provider.params.update({"tools": [{"name": "x"}], "top_p": 0.5})
        reply = asyncio.run(_complete(judge))
        body = fake.requests[0].json
        headers = fake.requests[0].headers
    assert reply.text == '{"score": 4, "reason": "ok"}'
    assert reply.tokens == {"input": 10, "output": 5}
    assert body["max_tokens"] == 2048
    assert body["temperature"] == 0
    assert body["top_p"] == 0.5
    assert "tools" not in body
    assert body["system"] == "SYS"
    assert body["messages"] == [{"role": "user", "content": "P"}]
    assert headers["anthropic-version"] == "2023-06-01"


async def _complete(judge):
    try:
        return await judge.complete("SYS", "P", timeout=5)
    finally:
        await judge.close()


def test_openai_history_and_tool_results_round_trip():
    client = OpenAIChat("m", provider("openai", "http://127.0.0.1:9"), label="openai")
    neutral = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "tool": "Read", "input": {"path": "a"}}]},
        {"role": "tool", "tool_call_id": "c1", "tool": "Read", "content": "text", "is_error": False},
    ]
    wire = client.history(neutral)
    assert wire[1]["tool_calls"][0]["function"] == {"name": "Read", "arguments": '{"path": "a"}'}
    body = client.request("S", wire, [], {})
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert "tools" not in body
    assert client.tool_results([ToolResult("c2", "out", True)]) == [{"role": "tool", "tool_call_id": "c2", "content": "out"}]


def test_a_reply_that_is_not_the_apis_shape_names_the_label_and_masks_the_key():
    client = OpenAIChat("m", provider("openai", "http://127.0.0.1:9"), label="openai:m@judge")
    with pytest.raises(CallError) as info:
        client.parse({"echo": KEY})
    assert str(info.value).startswith("openai:m@judge: unexpected reply: no choices in the reply")
    assert KEY not in str(info.value)
    assert "[redacted]" in str(info.value)
    assert not info.value.retryable


def test_a_slow_reply_past_the_call_timeout_is_a_retryable_error_named_by_the_label():
    with ModelServer.for_openai([Slow(5, text_reply("late"))]) as fake:
        client = OpenAIChat("m", provider("openai", fake.url), label="judge-label")
        with pytest.raises(CallError) as info:
            asyncio.run(one_request(client, {"model": "m", "messages": []}, timeout=0.3))
    assert info.value.retryable
    assert str(info.value) == "judge-label: timed out after 0.3s"


def test_http_errors_are_classified_alike_for_targets_and_judges():
    with ModelServer.for_openai([HttpError(429, retry_after="3"), HttpError(400, body={"error": {"message": f"bad key {KEY}"}})]) as fake:
        client = OpenAIChat("m", provider("openai", fake.url), label="openai")
        with pytest.raises(CallError) as first:
            asyncio.run(one_request(client, {"model": "m", "messages": []}))
        with pytest.raises(CallError) as second:
            asyncio.run(one_request(client, {"model": "m", "messages": []}))
        assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert first.value.retryable
    assert first.value.retry_after == 3
    assert "openai: HTTP 429" in str(first.value)
    assert not second.value.retryable
    assert str(second.value) == "openai: HTTP 400: bad key [redacted]"


def test_httpx_is_imported_by_the_first_call_not_by_building_clients():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from omk.targets import make_target\n"
        "from omk.judge.clients import make_client\n"
        "make_target('openai:m', settings={}); make_target('anthropic:m', settings={}); make_client('openai:m')\n"
        "print('httpx' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_a_sample_goes_through_the_shared_client(monkeypatch):
    with ModelServer.for_openai([text_reply("hello", prompt_tokens=1000, completion_tokens=100)]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        target = make_target("openai:gpt-4o", settings={})

        async def go():
            try:
                return await target.run(Sample("s", "p"), "p")
            finally:
                await target.close()

        result = asyncio.run(go())
    assert result.output == "hello"
    assert result.trace.cost_usd == pytest.approx((1000 * 2.5 + 100 * 10) / 1e6)
