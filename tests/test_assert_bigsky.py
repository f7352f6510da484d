"""Big Sky's chat:matchToolCall and chat:includeContext, with their exact semantics."""

from __future__ import annotations

import pytest
from helpers import check, make_ctx, make_spec, run

from omk.assertions.bigsky import deep_equal, drop_ignored, js_string
from omk.records import ToolCall, Trace
from omk.samples.model import Sample, Status


def calls(*pairs) -> Trace:
    return Trace(tool_calls=[ToolCall(tool=name, input=args) for name, args in pairs])


def match(trace: Trace, **expected):
    return check({"type": "match_tool_call", **expected}, "", trace)


# --- matchToolCall ------------------------------------------------------------------------------


def test_expected_call_matches_name_and_arguments():
    result = match(calls(("getWeather", {"location": "Boston, MA"})), tool="getWeather", arguments={"location": "Boston, MA"})
    assert result.status is Status.PASSED
    assert result.metric == 1.0


@pytest.mark.parametrize(
    "trace, expected, passed",
    [
        (Trace(), {}, True),  # nothing expected, nothing called
        (calls(("search", {"q": "x"})), {}, False),  # nothing expected, a call with arguments
        (calls(("search", {})), {}, True),  # nothing expected, a call with empty arguments: Big Sky passes it
        (calls(("search", None)), {}, True),  # missing arguments are "{}"
        (Trace(), {"tool": "search", "arguments": {}}, False),  # a call expected, none made
        (calls(("Search", {})), {"tool": "search"}, False),  # names are case-sensitive
        (calls(("other", {"q": 1})), {"arguments": {"q": 1}}, True),  # no expected name: any name
        (calls(("a", {"q": 1}), ("b", {})), {"tool": "b", "arguments": {}}, False),  # only the first call counts
        (calls(("a", {"q": 1}), ("b", {"z": 2})), {"tool": "a", "arguments": {"q": 1}}, True),  # later calls ignored
    ],
)
def test_first_call_rules(trace, expected, passed):
    assert (match(trace, **expected).status is Status.PASSED) is passed


@pytest.mark.parametrize(
    "expected, actual, passed",
    [
        ({"n": 1}, {"n": "1"}, False),  # no coercion
        ({"n": 1}, {"n": 1.0}, True),  # one JSON number
        ({"b": True}, {"b": 1}, False),
        ({"x": None}, {"x": None}, True),
        ({"x": None}, {}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),  # an extra key fails
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # key order does not matter
        ({"tags": ["b", "a", "c"]}, {"tags": ["a", "b", "c"]}, True),  # scalar arrays: order-insensitive
        ({"tags": ["a", "a", "b"]}, {"tags": ["a", "b", "b"]}, False),  # ... as multisets
        ({"ids": [10, 9, 1]}, {"ids": [1, 10, 9]}, True),  # sorted by string form, like JS
        ({"rows": [{"i": 1}, {"i": 2}]}, {"rows": [{"i": 2}, {"i": 1}]}, False),  # arrays of objects keep order
        ({"rows": [{"i": 1}, {"i": 2}]}, {"rows": [{"i": 1}, {"i": 2}]}, True),
        ({"tags": ["a"]}, {"tags": ["a", "a"]}, False),  # lengths differ
        ({"q": "天气"}, {"q": "天气"}, True),
    ],
)
def test_deep_equal_on_arguments(expected, actual, passed):
    assert (match(calls(("t", actual)), tool="t", arguments=expected).status is Status.PASSED) is passed


@pytest.mark.parametrize(
    "expected, actual, passed",
    [
        ({"location": "Boston", "units": "IGNORE"}, {"location": "Boston", "units": "F"}, True),
        ({"location": "Boston", "units": "IGNORE"}, {"location": "Boston"}, True),  # may be absent
        ({"location": "Boston", "units": "IGNORE"}, {"location": "Boston", "units": {"deep": [1]}}, True),  # any value
        ({"post": {"title": "Hi", "id": "IGNORE"}}, {"post": {"title": "Hi", "id": 42}}, True),  # nested
        ({"posts": [{"title": "A", "id": "IGNORE"}]}, {"posts": [{"title": "A", "id": 7}]}, True),  # inside arrays, by index
        ({"tags": ["IGNORE"]}, {"tags": ["anything"]}, False),  # an array element is not a key: compared as text
        ({"tags": ["IGNORE"]}, {"tags": ["IGNORE"]}, True),
        ({"a": "IGNORE"}, {"a": 1, "b": 2}, False),  # only the ignored key is dropped
    ],
)
def test_ignore_sentinel(expected, actual, passed):
    assert (match(calls(("t", actual)), tool="t", arguments=expected).status is Status.PASSED) is passed


def test_ignore_does_not_mutate_the_spec():
    spec = make_spec({"type": "match_tool_call", "tool": "t", "arguments": {"a": "IGNORE", "b": 1}})
    ctx = make_ctx("", calls(("t", {"a": 5, "b": 1})))
    assert run(spec, ctx)[0].status is Status.PASSED
    assert spec.raw["arguments"] == {"a": "IGNORE", "b": 1}
    assert ctx.trace.tool_calls[0].input == {"a": 5, "b": 1}


def test_string_arguments_are_parsed_and_garbage_fails_clearly():
    assert match(calls(("t", '{"a": 1}')), tool="t", arguments={"a": 1}).status is Status.PASSED
    bad = match(calls(("t", "{not json")), tool="t", arguments={"a": 1})
    assert bad.status is Status.FAILED
    assert "arguments are not JSON" in bad.message


def test_messages_say_what_differed():
    assert "got no tool call" in match(Trace(), tool="search").message
    assert match(calls(("find", {})), tool="search").message == "first call is find, expected search"
    assert "differ from expected" in match(calls(("t", {"a": 2})), tool="t", arguments={"a": 1}).message


def test_js_string_and_helpers():
    assert js_string([1, None, "a", [2, 3]]) == "1,,a,2,3"
    assert js_string({"a": 1}) == "[object Object]"
    assert js_string(1.5) == "1.5"
    assert js_string(True) == "true"
    assert js_string(None) == "null"
    assert deep_equal([], [])
    assert not deep_equal([], {})
    assert not deep_equal(0, False)
    assert drop_ignored({"a": "IGNORE"}, "not an object") == ({}, "not an object")


# --- includeContext -----------------------------------------------------------------------------


def _ctx_sample(variables):
    return Sample(sample_id="s", prompt="p", variables=variables)


@pytest.mark.parametrize(
    "variables, path, output, passed",
    [
        ({"site": {"siteTitle": "Wapuu Land"}}, "site.siteTitle", "Welcome to Wapuu Land!", True),
        ({"site": {"siteTitle": "Wapuu Land"}}, "site.siteTitle", "welcome to wapuu land!", False),  # case-sensitive
        ({"site": {}}, "site.siteTitle", "anything", False),  # missing
        ({"site": {"siteTitle": ""}}, "site.siteTitle", "anything", False),  # falsy
        ({"count": 0}, "count", "0 items", False),  # 0 is falsy in JS
        ({"count": 3}, "count", "you have 3 items", True),  # numbers compare as text
        ({"ids": [1, 2]}, "ids", "ids 1,2 found", True),  # arrays as JS String()
        ({"cities": ["北京", "上海"]}, "cities.1", "已切换到上海", True),  # an index step
    ],
)
def test_include_context(variables, path, output, passed):
    ctx = make_ctx(output, sample=_ctx_sample(variables))
    result = run(make_spec({"type": "include_context", "path": path}), ctx)[0]
    assert (result.status is Status.PASSED) is passed


def test_include_context_from_the_assertion_itself():
    spec = make_spec({"type": "include_context", "path": "user.name", "context": {"user": {"name": "Ana"}}})
    assert run(spec, make_ctx("Hi Ana", sample=_ctx_sample(None)))[0].status is Status.PASSED


# --- compareContent without a judge ---------------------------------------------------------------


@pytest.mark.parametrize(
    "reference, output, status, message",
    [
        ("", "", Status.PASSED, "similar: both texts are empty (no judge call made)"),
        ("", "Checking.", Status.FAILED, "different: the expected text is empty (no judge call made)"),
        ("Your order shipped.", "", Status.FAILED, "different: the output is empty (no judge call made)"),
        ("Your order shipped.", "It shipped.", Status.SKIPPED, "skipped: no judge configured"),  # the judge's case
    ],
)
def test_compare_content_decides_empty_texts_without_a_judge(reference, output, status, message):
    result = check({"type": "compare_content", "reference": reference}, output)  # make_ctx: judge None
    assert (result.status, result.message) == (status, message)
    negated = check({"type": "compare_content", "reference": reference, "not": True}, output)
    assert negated.status is {Status.PASSED: Status.FAILED, Status.FAILED: Status.PASSED}.get(status, Status.SKIPPED)
