"""Fuzz the assertion engine: every deterministic assertion of the bundled samples, on random
outputs and traces (lone surrogates, control characters, JSON-ish text, odd tool calls), never
lets an exception escape and always gives each assertion a status."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import omk
from omk.assertions.context import CheckContext
from omk.assertions.evaluate import evaluate
from omk.assertions.registry import registry
from omk.records import MockStats, ToolCall, Trace
from omk.samples.model import Status

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = omk.load(ROOT / "samples" / "eval-samples.yaml")


def deterministic(specs):
    kinds = registry()
    return [s for s in specs if s.type == "assert-set" or (s.type != "custom" and kinds[s.type].kind != "judge")]


CASES = [(sample, deterministic(specs)) for sample in SAMPLES for specs in sample.assertion_lists() if deterministic(specs)]

texts = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=80),  # surrogates, controls
    st.sampled_from(['{"findings": []}', "[1, 2", "null", "{" * 50, "SQL 注入 参数化", "\ud800", "\x1b[31mred"]),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
calls = st.builds(
    ToolCall,
    tool=st.sampled_from(["Read", "lookup_order", "issue_refund", "", "mcp__srv__x", "读取"]),
    input=json_values,
    output=json_values,
    mocked=st.booleans(),
    is_error=st.booleans(),
)
traces = st.builds(
    Trace,
    turns=st.none() | st.integers(min_value=-1, max_value=50),
    tool_calls=st.lists(calls, max_size=4),
    cost_usd=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    latency_ms=st.none() | st.floats(min_value=-1, max_value=1e9),
    mock_stats=st.none() | st.builds(MockStats, hits=st.integers(0, 5), misses=st.integers(0, 5)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), output=texts, trace=traces)
def test_no_exception_escapes_the_assertion_engine(case, output, trace):
    sample, specs = case
    results = asyncio.run(evaluate(specs, CheckContext(output=output, trace=trace, sample=sample)))
    assert len(results) == len(specs)
    assert all(r.status in (Status.PASSED, Status.FAILED, Status.SKIPPED) for r in results)
    crashed = [r.message for r in walk(results) if r.message and CRASH.search(r.message)]
    assert not crashed, crashed  # a check that crashed on its input is a bug, even though the run goes on


CRASH = re.compile(r"\berror: [A-Za-z]+(Error|Exception)\b")


def walk(results):
    for r in results:
        yield r
        yield from walk(r.children)


def test_the_fuzzed_specs_cover_most_deterministic_types():
    used = {s.type for _, specs in CASES for s in specs}
    assert len(used) >= 25, sorted(used)
