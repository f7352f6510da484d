"""Big Sky Agents datasets: loading, problems with lines, the system prompt from the context, and
what the targets send (history, tools, one step) to the loopback OpenAI fake and a `cmd:` agent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from omk.core.errors import InputError
from omk.loader import load_samples
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.prelude import history_for, system_for
from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply, tool_call_reply

SEED = {
    "name": "Get the Weather",
    "description": "Getting the weather for a location",
    "data": [
        {
            "id": "1",
            "description": "Get weather for the current location by default",
            "inputs": {
                "context": {"currentLocation": "Boston, MA"},
                "messages": [{"role": "assistant", "content": "How can I help you?"}, {"role": "user", "content": "Get the weather"}],
            },
            "outputs": {
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"type": "function", "function": {"name": "getWeather", "arguments": {"location": "Boston, MA"}}}],
                }
            },
        }
    ],
    "evaluators": [{"key": "match_tool_call", "description": "If a tool call is expected, does it match?", "function": "chat:matchToolCall"}],
    "comparativeEvaluators": [{"key": "llm_comparison", "function": "chat:evaluatePairwise"}],
    "summaryEvaluators": [{"key": "custom_summary_evaluator", "function": "chat:customSummaryEvaluator"}],
}


def write(tmp_path: Path, data, name: str = "dataset.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def load(tmp_path: Path, data) -> list[Sample]:
    return load_samples([write(tmp_path, data)]).samples


def problems(tmp_path: Path, data) -> list[str]:
    with pytest.raises(InputError) as info:
        load_samples([write(tmp_path, data)])
    return info.value.lines()


def with_example(**changes):
    data = json.loads(json.dumps(SEED))
    data["data"][0].update(changes)
    return data


def test_seed_example(tmp_path):
    (s,) = load(tmp_path, SEED)
    assert (s.sample_id, s.prompt, s.source_format, s.single_step) == ("1", "Get the weather", "bigsky", True)
    assert s.history == ({"role": "assistant", "content": "How can I help you?"},)
    assert s.variables == {"currentLocation": "Boston, MA"}
    assert list(s.tools) == [
        {"name": "getWeather", "description": "The getWeather tool.", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}
    ]
    assert [a.raw for a in s.assertions] == [{"type": "match_tool_call", "tool": "getWeather", "arguments": {"location": "Boston, MA"}}]
    assert s.comparisons == ["llm_comparison"]
    assert s.source.line == 5


def test_every_standard_evaluator_maps(tmp_path):
    data = with_example(outputs={"message": {"role": "assistant", "content": "Wapuu says hi from Boston, MA"}})
    data["evaluators"] = [
        {"key": "tool", "function": "chat:matchToolCall"},
        {"key": "content", "function": "chat:compareContent"},
        {"key": "ctx", "function": "chat:includeContext", "arguments": {"contextName": "currentLocation"}},
        {"key": "str", "function": "chat:includeString", "arguments": {"string": "Wapuu (v2)?"}},
        {"key": "re", "function": "chat:matchRegex", "arguments": {"pattern": "^Wapuu"}},
    ]
    (s,) = load(tmp_path, data)
    assert [a.raw for a in s.assertions] == [
        {"type": "match_tool_call", "arguments": {}},  # no expected call: nothing expected
        {"type": "compare_content", "reference": "Wapuu says hi from Boston, MA"},
        {"type": "include_context", "path": "currentLocation"},
        {"type": "regex", "pattern": "Wapuu\\ \\(v2\\)\\?", "flags": "u"},
        {"type": "regex", "pattern": "^Wapuu", "flags": "u"},
    ]
    assert s.comparisons == ["llm_comparison"]


def test_include_string_and_match_regex_are_case_sensitive(tmp_path):
    from helpers import make_ctx, run

    data = with_example()
    data["evaluators"] = [
        {"key": "str", "function": "chat:includeString", "arguments": {"string": "Wapuu"}},
        {"key": "re", "function": "chat:matchRegex", "arguments": {"pattern": "^Wapuu"}},
    ]
    (s,) = load(tmp_path, data)
    assert [r.passed for r in run(s.assertions, make_ctx("wapuu!", sample=s))] == [False, False]
    assert [r.passed for r in run(s.assertions, make_ctx("Wapuu!", sample=s))] == [True, True]


def test_ids_arguments_and_declared_tools(tmp_path):
    data = json.loads(json.dumps(SEED))
    second = json.loads(json.dumps(data["data"][0]))
    del second["id"]
    second["outputs"]["message"]["tool_calls"][0]["function"]["arguments"] = '{"location": "Paris", "days": 3}'
    data["data"] = [{**data["data"][0], "id": 7}, second]
    a, b = load(tmp_path, data)
    assert (a.sample_id, b.sample_id) == ("7", "example-2")
    assert b.assertions[0].raw["arguments"] == {"location": "Paris", "days": 3}  # OpenAI's string form is parsed
    assert a.tools[0]["parameters"]["properties"] == {"location": {"type": "string"}, "days": {"type": "integer"}}
    data["tools"] = [{"type": "function", "function": {"name": "getWeather", "description": "Weather now", "parameters": {"type": "object"}}}]
    a, _ = load(tmp_path, data)
    assert a.tools == ({"name": "getWeather", "description": "Weather now", "parameters": {"type": "object"}},)


def test_no_comparative_evaluators_means_no_pairwise_verdict(tmp_path):
    data = json.loads(json.dumps(SEED))
    del data["comparativeEvaluators"]
    assert load(tmp_path, data)[0].comparisons == []


def test_history_with_tool_calls_and_system_messages(tmp_path):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "天气如何？"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "getWeather", "arguments": '{"location": "北京"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "getWeather", "content": "晴"},
        {"role": "assistant", "content": [{"type": "text", "text": "北京晴。"}]},
        {"role": "user", "content": "明天呢？"},
    ]
    (s,) = load(tmp_path, with_example(inputs={"messages": messages}))
    assert s.prompt == "明天呢？"
    assert s.variables == {}
    assert list(s.history) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "天气如何？"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "tool": "getWeather", "input": {"location": "北京"}}]},
        {"role": "tool", "tool_call_id": "c1", "tool": "getWeather", "content": "晴", "is_error": False},
        {"role": "assistant", "content": "北京晴。"},
    ]
    assert history_for(s)[0]["role"] == "user"
    assert system_for(None, s) == "Be brief."


@pytest.mark.parametrize(
    "data, expected",
    [
        ({**SEED, "data": []}, "data: must be a non-empty list of examples (got an empty list)"),
        (
            {**SEED, "evaluators": [{"key": "x", "function": "chat:matchToolcall"}]},
            'evaluators[0].function: unknown evaluators function "chat:matchToolcall" (did you mean "chat:matchToolCall"?)',
        ),
        ({**SEED, "evaluators": [{"key": "x", "function": "chat:matchRegex"}]}, 'chat:matchRegex needs "arguments": {"pattern": "…"}'),
        ({**SEED, "evaluators": [{"key": "x", "description": "no function"}]}, 'evaluators[0]: missing "function": one of "chat:matchToolCall"'),
        ({**SEED, "comparativeEvaluators": [{"key": "x", "function": "chat:compareContent"}]}, "unknown comparativeEvaluators function"),
        ({**SEED, "summaryEvaluators": "all"}, "summaryEvaluators: must be a list of evaluators"),
        (with_example(inputs={"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}), "the last message is what the agent answers: it must be the user's"),
        (with_example(inputs={"messages": []}), "inputs.messages: must be a non-empty list of chat messages"),
        (with_example(inputs={"messages": [{"role": "robot", "content": "x"}]}), 'inputs.messages[0]: must be a message with a role of "system"'),
        (with_example(inputs={"context": "Boston", "messages": [{"role": "user", "content": "x"}]}), "inputs.context: must be an object"),
        (with_example(inputs=None), '"inputs" must be an object with "messages"'),
        (with_example(outputs=None), "chat:matchToolCall needs the example's expected message"),
        (
            with_example(outputs={"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{bad"}}]}}),
            "outputs.message.tool_calls[0].function.arguments: is a string but not JSON",
        ),
        (with_example(id=""), "data[0] id: must be a non-empty string"),
        ({**SEED, "tools": [{"type": "function"}]}, 'tools[0]: must be {"type": "function", "function"'),
    ],
)
def test_dataset_problems(tmp_path, data, expected):
    lines = problems(tmp_path, data)
    assert any(expected in line for line in lines), lines
    assert all(":" in line.split(" ")[0] for line in lines)  # FILE:LINE first


def test_a_bad_root_pattern_is_one_line_at_the_root_evaluator(tmp_path):
    data = json.loads(json.dumps(SEED))
    data["data"] = [{**data["data"][0], "id": str(i)} for i in range(3)]
    data["evaluators"] = [{"key": "x", "function": "chat:matchRegex", "arguments": {"pattern": "(unclosed"}}]
    path = write(tmp_path, data)
    (line,) = problems(tmp_path, data)
    pattern_line = next(i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "(unclosed" in text)
    assert line.startswith(f"{path}:{pattern_line}: evaluators[0].arguments.pattern: invalid regular expression"), line


def test_duplicate_ids(tmp_path):
    data = json.loads(json.dumps(SEED))
    data["data"] = data["data"] * 2
    (line,) = problems(tmp_path, data)
    assert 'data[1] (1) id: duplicate id "1" (first defined at line' in line


# --- the system prompt from the context ---------------------------------------------------------


def _s(variables=None, history=None) -> Sample:
    return Sample(sample_id="s", prompt="p", variables=variables, history=history or [])


def test_system_prompt_rendering():
    assert system_for("You are Nova.", _s()) == "You are Nova."  # an omk sample: unchanged
    assert system_for(None, _s()) is None
    assert system_for(None, _s({"city": "北京"})) == '## Context\n\n```json\n{\n  "city": "北京"\n}\n```'
    assert system_for("You are Nova.", _s({"city": "Paris"})).startswith("You are Nova.\n\n## Context")
    filled = system_for("Nova of {{ store.name }} in {{city}}; hours {{ store.hours }}; {{ missing.key }}!", _s({"store": {"name": "Acme", "hours": [9, 17]}, "city": "上海"}))
    assert filled == "Nova of Acme in 上海; hours [9,17]; !"  # placeholders used: no JSON section
    assert system_for("Base.", _s({}, [{"role": "system", "content": "Be brief."}])) == "Base.\n\nBe brief."


# --- what the targets send ----------------------------------------------------------------------


def _run(spec: str, sample: Sample, settings: dict | None = None, base_dir: Path | None = None):
    async def go():
        target = make_target(spec, base_dir=base_dir, settings=settings)
        try:
            return await target.run(sample, sample.prompt)
        finally:
            await target.close()

    return asyncio.run(go())


def test_openai_target_sends_system_history_tools_and_stops_after_one_step(tmp_path, monkeypatch):
    (s,) = load(tmp_path, SEED)
    with ModelServer.for_openai([tool_call_reply([("getWeather", {"location": "Boston, MA"})]), text_reply("never asked")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        got = _run("openai:m", s, {"system": "You help with weather near {{ currentLocation }}."})
        assert len(fake.requests) == 1  # one model call
        body = fake.requests[0].json
    assert body["messages"] == [
        {"role": "system", "content": "You help with weather near Boston, MA."},
        {"role": "assistant", "content": "How can I help you?"},
        {"role": "user", "content": "Get the weather"},
    ]
    assert [t["function"]["name"] for t in body["tools"]] == ["getWeather"]
    assert got.output == ""
    (call,) = got.trace.tool_calls
    assert (call.tool, call.input, call.output) == ("getWeather", {"location": "Boston, MA"}, None)
    assert got.trace.notes == ("single step: 1 tool call(s) recorded, not run",)


AGENT = """
import json, sys
request = json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "output": json.dumps({k: request.get(k) for k in ("system", "messages", "context", "single_step")}),
                  "tool_calls": [{"tool": "getWeather", "input": {"location": request["context"]["currentLocation"]}}]}))
"""


def test_cmd_target_request_carries_context_history_and_single_step(tmp_path):
    (s,) = load(tmp_path, SEED)
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    got = _run(f"cmd:{sys.executable} {script}", s, {}, tmp_path)
    seen = json.loads(got.output)
    assert seen["context"] == {"currentLocation": "Boston, MA"}
    assert seen["single_step"] is True
    assert seen["messages"] == [{"role": "assistant", "content": "How can I help you?"}, {"role": "user", "content": "Get the weather"}]
    assert seen["system"].startswith("## Context")
    assert got.trace.tool_calls[0].input == {"location": "Boston, MA"}


def test_cache_key_covers_history_and_context(tmp_path):
    from omk.store.cache import _prelude, cache_key

    (s,) = load(tmp_path, SEED)
    base = cache_key({"kind": "x"}, s, s.prompt)
    s.variables = {"currentLocation": "Paris"}
    assert cache_key({"kind": "x"}, s, s.prompt) != base
    assert _prelude(Sample(sample_id="p", prompt="q")) == {}  # an omk sample's key is what it always was
