"""The engine over every type: `not` on every type, nested assert-sets, layers, results in the sample's order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import make_ctx, make_spec, run
from hypothesis import given, settings
from hypothesis import strategies as st

from omk.assertions import registry
from omk.assertions.evaluate import layer_of
from omk.records import FileChange, MockStats, ToolCall, Trace, WorkspaceChanges
from omk.samples.model import Layer, Status

TRACE = Trace(
    turns=2,
    tool_calls=[
        ToolCall("Bash", {"command": "ls"}, "a.txt"),
        ToolCall("Read", {"file_path": "a.txt"}, {"x": 1}),
    ],
    cost_usd=0.01,
    latency_ms=900.0,
    mock_stats=MockStats(hits=1, per_mock={"Read:1": 1}),
    workspace=WorkspaceChanges(created=(FileChange("a.txt", 3),)),
)
WORKSPACE = Path(__file__).resolve().parent  # read-only checks on the test folder itself

# One spec per deterministic type (custom and judge-scored types are covered elsewhere).
SYNC_SPECS: dict[str, dict[str, Any]] = {
    "contains": {"value": "ab"},
    "not_contains": {"value": "ab"},
    "equals": {"value": "ab"},
    "not_equals": {"value": "ab"},
    "starts_with": {"value": "a"},
    "ends_with": {"value": "b"},
    "contains_all": {"values": ["a", "b"]},
    "contains_any": {"values": ["a", "中"]},
    "regex": {"pattern": "a.b"},
    "min_length": {"value": 3},
    "max_length": {"value": 3},
    "word_count_min": {"value": 2},
    "word_count_max": {"value": 2},
    "json_valid": {},
    "json_schema": {"schema": {"type": "array"}},
    "rouge_n_min": {"reference": "a b c"},
    "bleu_min": {"reference": "a b c d", "smooth": True},
    "levenshtein_max": {"reference": "abc", "value": 2},
    "cost_max": {"value": 0.01},
    "latency_max": {"value": 500},
    "turns_max": {"value": 2},
    "turns_min": {"value": 3},
    "tools_called": {"values": ["bash"]},
    "tools_not_called": {"values": ["Write"]},
    "tools_only": {"values": ["Read", "Bash"]},
    "tools_count_max": {"value": 1},
    "tools_count_min": {"value": 2},
    "tool_output_contains": {"value": 'Read:"x"'},
    "tool_input_contains": {"value": "Bash:ls"},
    "tool_input_not_contains": {"value": "Bash:rm"},
    "mock_hit": {"value": "Read:1"},
    "citations": {"threshold": 1},
    "exact_match": {"value": "ab"},
    "partial_match": {"reference": "a b", "threshold": 0.5},
    "match_tool_call": {"tool": "Bash", "arguments": {"command": "ls"}},
    "include_context": {"path": "k", "context": {"k": "ab"}},
    "skill_used": {"value": "pdf-tools"},
    "tool_sequence": {"steps": ["Bash", {"tool": "read", "input": {"file_path": "*.txt"}}]},
    "file_exists": {"path": "helpers.py"},
    "file_contains": {"path": "helpers.py", "value": "make_spec"},
    "file_json_schema": {"path": "helpers.py", "schema": {"type": "object"}},
    "files_changed": {"allowed": ["*.txt"]},
}


def test_every_deterministic_type_is_covered():
    # m365_telemetry never decides (it is reported as not applicable): test_formats_m365 covers it
    deterministic = {n for n, t in registry.registry().items() if t.kind == "sync" and n not in ("assert-set", "m365_telemetry")}
    assert deterministic == set(SYNC_SPECS)


OUTPUTS = st.one_of(
    st.text(max_size=40),
    st.text(alphabet='ab c中[]{}"1,', max_size=12),
    st.sampled_from(["", "ab", "a b c", "[1, 2]", "a\nb", "AB", "中文 ab"]),
)


@settings(max_examples=60, deadline=None)
@given(output=OUTPUTS, with_trace=st.booleans())
def test_not_is_an_exact_inversion_for_every_sync_type(output, with_trace):
    trace = TRACE if with_trace else Trace(workspace=WorkspaceChanges())
    ctx = make_ctx(output, trace, workspace=WORKSPACE)
    plain = [make_spec(name, **fields) for name, fields in SYNC_SPECS.items()]
    negated = [make_spec(name, **fields, **{"not": True}) for name, fields in SYNC_SPECS.items()]
    for a, b in zip(run(plain, ctx), run(negated, ctx), strict=True):
        assert a.status is not Status.SKIPPED
        assert a.passed is (not b.passed), (a.type, output)
        assert a.metric == b.metric
        assert b.negate


def test_results_keep_the_sample_order_and_types():
    specs = [make_spec(name, **fields) for name, fields in SYNC_SPECS.items()]
    results = run(specs, make_ctx("ab", TRACE))
    assert [r.type for r in results] == list(SYNC_SPECS)


# --- assert-set -------------------------------------------------------------------------------

SEED_SET = {
    "type": "assert-set",
    "mode": "any",
    "children": [
        {"type": "contains", "value": "参数化"},
        {"type": "contains", "value": "prepared statement"},
        {"type": "regex", "pattern": r"bind\(.*\?"},
    ],
}


def test_seed_example_set_any():
    assert run(make_spec(SEED_SET), make_ctx("use a Prepared Statement"))[0].passed
    assert run(make_spec(SEED_SET), make_ctx("stmt.bind(x, ?)"))[0].passed
    result = run(make_spec(SEED_SET), make_ctx("string concat"))[0]
    assert not result.passed
    assert len(result.children) == 3
    assert result.metric == 0


def test_a_failed_not_set_says_which_child_matched_and_on_what_text():
    negated = {**SEED_SET, "not": True}
    result = run(make_spec(negated), make_ctx("call stmt.bind(user, ?) here"))[0]
    assert not result.passed
    assert result.message == (
        "1/3 children passed (mode any); under not, it fails on "
        'children[2] regex: output matches "bind\\(.*\\?" at "bind(user, ?"'
    )
    assert "under not" not in run(make_spec(SEED_SET), make_ctx("stmt.bind(x, ?)"))[0].message  # a set without not
    assert "under not" not in run(make_spec(negated), make_ctx("string concat"))[0].message  # a not set that passed


def test_nested_sets_with_not_on_children_and_set():
    nested = {
        "type": "assert-set",
        "children": [
            {"type": "contains", "value": "SELECT"},
            {"type": "regex", "pattern": "TODO|FIXME", "not": True},
            {
                "type": "assert-set",
                "mode": "any",
                "not": True,
                "children": [
                    {"type": "contains", "value": "DROP"},
                    {"type": "contains", "value": "TRUNCATE"},
                ],
            },
        ],
    }
    assert run(make_spec(nested), make_ctx("SELECT * FROM t"))[0].passed
    assert not run(make_spec(nested), make_ctx("SELECT 1 -- TODO"))[0].passed
    result = run(make_spec(nested), make_ctx("SELECT 1; drop table t"))[0]
    assert not result.passed
    inner = result.children[2]
    assert inner.status is Status.FAILED
    assert inner.children[0].status is Status.PASSED
    assert run(make_spec({**nested, "not": True}), make_ctx("SELECT 1; drop table t"))[0].passed


LEAVES = st.sampled_from(
    [
        {"type": "contains", "value": "a"},
        {"type": "contains", "value": "b"},
        {"type": "starts_with", "value": "a"},
        {"type": "max_length", "value": 3},
        {"type": "regex", "pattern": "^b"},
    ]
)


def with_not(node: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(node, st.booleans()).map(lambda t: {**t[0], "not": t[1]})


TREES = st.recursive(
    with_not(LEAVES),
    lambda kids: with_not(
        st.builds(
            lambda children, mode: {"type": "assert-set", "mode": mode, "children": children},
            st.lists(kids, min_size=1, max_size=4),
            st.sampled_from(["any", "all"]),
        )
    ),
    max_leaves=12,
)


def expected(node: dict, output: str) -> bool:
    """The boolean the tree means, computed without the engine."""
    if node["type"] == "assert-set":
        verdicts = [expected(child, output) for child in node["children"]]
        raw = any(verdicts) if node["mode"] == "any" else all(verdicts)
    else:
        leaf = run(make_spec({**node, "not": False}), make_ctx(output))[0]
        raw = bool(leaf.passed)
    return raw != node["not"]


@settings(max_examples=60, deadline=None)
@given(tree=TREES, output=st.sampled_from(["", "a", "ab", "ba", "bbbb", "abcd"]))
def test_set_verdicts_and_scores_stay_consistent(tree, output):
    result = run(make_spec(tree), make_ctx(output))[0]
    assert result.passed is expected(tree, output)

    def check_node(res):
        if res.type != "assert-set":
            return
        passed_children = sum(c.passed for c in res.children)
        assert res.metric == passed_children / len(res.children)
        for child in res.children:
            check_node(child)

    check_node(result)


# --- layers ---------------------------------------------------------------------------------


def test_layers_of_types_and_sets():
    assert layer_of(make_spec("contains", value="x")) is Layer.FACT
    assert layer_of(make_spec("max_length", value=1)) is Layer.BEHAVIOR
    assert layer_of(make_spec("rouge_n_min", reference="x")) is Layer.FACT
    assert layer_of(make_spec("mock_hit", value="Read:1")) is Layer.BEHAVIOR
    assert layer_of(make_spec("tool_input_not_contains", value="Bash:x")) is Layer.FACT
    assert layer_of(make_spec("custom", fn="c.py")) is Layer.BEHAVIOR
    behavior_set = {
        "type": "assert-set",
        "children": [{"type": "max_length", "value": 1}, {"type": "cost_max", "value": 1}],
    }
    assert layer_of(make_spec(behavior_set)) is Layer.BEHAVIOR
    mixed = {
        "type": "assert-set",
        "children": [{"type": "max_length", "value": 1}, {"type": "contains", "value": "x"}],
    }
    assert layer_of(make_spec(mixed)) is Layer.FACT
    assert layer_of(make_spec("contains", value="x", layer="behavior")) is Layer.BEHAVIOR


def test_shared_assertions_make_one_record_per_verdict_and_follow_a_change():
    """Samples that share an assertion's content share the records of its repeated verdicts (one
    record, frozen, for each); a field set on one sample's copy afterwards is what that sample
    gets, and the others keep theirs."""
    import asyncio

    from omk.assertions.context import CheckContext
    from omk.assertions.evaluate import evaluate
    from omk.records import Trace
    from omk.samples.model import AssertionSpec, Sample

    first = AssertionSpec("contains", {"type": "contains", "value": "cat"})
    group = AssertionSpec.of("assert-set", {"type": "assert-set", "mode": "any"}, children=[first])
    others = [s.share_with(None) for s in (first, group)]

    def run(specs, output):
        return asyncio.run(evaluate(specs, CheckContext(output=output, trace=Trace(), sample=Sample(sample_id="s", prompt="p"))))

    a, b = run([first, group], "a cat"), run(others, "the CAT")
    assert a[0] is b[0]
    assert a[1] is b[1]
    assert a[0].passed
    assert a[1].children == (a[0],)
    c = run(others, "a dog")
    assert not c[0].passed
    assert c[0].message == 'output does not contain "cat"'
    assert not c[1].passed
    others[0].weight = 3.0  # this sample's copy only
    d, e = run(others, "a cat"), run([first, group], "a cat")
    assert d[0].weight == 3.0
    assert e[0].weight == 1.0
    assert e[0] is a[0]


def test_a_plan_is_kept_only_for_an_assertion_other_samples_share(tmp_path):
    """What the run makes once per assertion (its plan) is kept for content two samples share,
    and not made for content one sample alone has; both give the same records as checking anew."""
    import asyncio
    import json

    from omk.assertions.context import CheckContext
    from omk.assertions.evaluate import evaluate, evaluate_one
    from omk.loader import load_samples
    from omk.records import Trace

    lines = [
        {"sample_id": f"s{i}", "prompt": "p", "assertions": [{"type": "contains", "value": "cat"}, {"type": "contains", "value": f"own {i}"}]}
        for i in range(3)
    ]
    path = tmp_path / "eval-samples.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    samples = load_samples([path]).samples
    shared, own = [s.assertions[0] for s in samples], [s.assertions[1] for s in samples]
    assert all(spec.reused for spec in shared)
    assert not any(spec.reused for spec in own)
    for sample in samples:
        ctx = CheckContext(output="a cat, own 1", trace=Trace(), sample=sample)
        got = asyncio.run(evaluate(sample.assertions, ctx))
        assert got == [asyncio.run(evaluate_one(spec, ctx)) for spec in sample.assertions]
    assert all(spec.plan is not None for spec in shared)
    assert shared[0].plan is shared[2].plan  # made once for the three samples
    assert all(spec.plan is None for spec in own)
