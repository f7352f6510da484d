"""Trajectory assertions: `tool_sequence` in its three modes, step matchers (globs, regexes,
subsets) in `tools_called` / `tools_only`, and `match_tool_call` counting any call."""

from __future__ import annotations

import pytest
from helpers import check
from loader_helpers import one_problem

from omk.records import ToolCall, Trace
from omk.samples.model import Status

CALLS = [
    ToolCall("Read", {"file_path": "src/app.py"}),
    ToolCall("bash", {"command": "pytest -q tests/", "timeout": 60}),
    ToolCall("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}),
    ToolCall("Bash", {"command": "pytest -q tests/"}),
]
T = Trace(tool_calls=CALLS)


def seq(steps, mode=None, trace=T, **more):
    fields = {"steps": steps, **({"mode": mode} if mode else {}), **more}
    return check("tool_sequence", trace=trace, **fields)


# --- tool_sequence ----------------------------------------------------------------------------


def test_exact_passes_on_the_same_calls_in_order_with_aliases():
    assert seq(["read_file", "Bash", "edit", "shell"]).passed
    assert seq(["Read", "Bash", "Edit", "Bash"], "exact").passed


@pytest.mark.parametrize(
    "steps, at",
    [
        (["Read", "Edit", "Bash", "Bash"], 2),  # order differs at step 2
        (["Read", "Bash", "Edit"], 4),  # an extra call at the end
        (["Read", "Bash", "Edit", "Bash", "Write"], 5),  # a step never taken
    ],
)
def test_exact_fails_and_names_the_first_step_that_differs(steps, at):
    result = seq(steps)
    assert not result.passed
    head, *table = result.message.splitlines()
    assert head == f"tool calls differ from the steps (exact) at step {at}"
    assert table[0].split() == ["expected", "actual"]
    marked = [line for line in table[1:] if line.startswith(">")]
    assert len(marked) == 1
    assert table.index(marked[0]) == at  # the row of that step, after the header


def test_the_failure_table_aligns_expected_and_actual():
    result = seq(["Read", "Write"])
    lines = result.message.splitlines()[1:]
    column = lines[0].index("actual")
    assert all(len(line) > column for line in lines[1:])
    assert lines[1][column:].startswith('Read {"file_path":"src/app.py"}')
    assert lines[2].startswith(">")
    assert lines[2][column:].startswith("Bash ")
    assert lines[3][3:].startswith("—")  # no step for the third call


def test_in_order_allows_calls_between_and_finds_the_missing_step():
    assert seq(["Read", "Edit"], "in_order").passed
    assert seq(["Bash", "Bash"], "in_order").passed
    assert not seq(["Edit", "Read"], "in_order").passed  # the order matters
    result = seq(["Read", "Edit", "Write", "Bash"], "in_order")
    assert not result.passed
    assert result.message.splitlines()[0].endswith("(in_order) at step 3")
    assert any(line.startswith(">  Write") for line in result.message.splitlines())


def test_any_order_is_the_same_multiset():
    assert seq(["Bash", "Edit", "Bash", "Read"], "any_order").passed
    assert not seq(["Bash", "Edit", "Read"], "any_order").passed  # one Bash call left over
    assert not seq(["Bash", "Edit", "Read", "Read"], "any_order").passed  # a second Read never came
    # a specific step must not be starved by a general one that took its call first
    steps = ["Bash", {"tool": "Bash", "input": {"timeout": 60}}, "Read", "Edit"]
    assert seq(steps, "any_order").passed


def test_step_inputs_match_as_glob_regex_and_subset():
    assert seq([{"tool": "Read", "input": {"file_path": "src/*.py"}}, "Bash", "Edit", "Bash"]).passed
    assert not seq([{"tool": "Read", "input": {"file_path": "*.md"}}, "Bash", "Edit", "Bash"]).passed
    regex = {"tool": "Bash", "input": {"command": {"pattern": "^PYTEST", "flags": "i"}}}
    assert seq(["Read", regex, "Edit", regex]).passed
    assert not seq(["Read", {"tool": "Bash", "input": {"command": {"pattern": "^PYTEST", "flags": "m"}}}], "in_order").passed
    assert seq(["Read", {"tool": "Bash", "input": {"timeout": 60}}], "in_order").passed  # a number is equal
    assert seq(["Read", {"tool": "Bash", "input": {"timeout": "6?"}}], "in_order").passed  # ... or a glob on its text
    assert not seq([{"tool": "Read", "input": {"missing": "*"}}], "in_order").passed  # a subset: the key must be there


def test_an_input_given_as_json_text_is_read_as_an_object():
    trace = Trace(tool_calls=[ToolCall("Bash", '{"command": "ls -la"}')])
    assert seq([{"tool": "Bash", "input": {"command": "ls *"}}], trace=trace).passed


def test_no_calls_pass_only_an_empty_in_order_prefix():
    assert not seq(["Read"], trace=Trace()).passed
    assert not seq(["Read"], "in_order", trace=Trace()).passed
    assert not seq(["Read"], "any_order", trace=Trace()).passed


def test_not_inverts_the_sequence():
    assert check("tool_sequence", trace=T, steps=["Write"], mode="in_order", **{"not": True}).passed
    assert not check("tool_sequence", trace=T, steps=["Read"], mode="in_order", **{"not": True}).passed


def test_a_regex_that_runs_too_long_is_an_error_under_not_too():
    trace = Trace(tool_calls=[ToolCall("Bash", {"command": "a" * 40 + "b"})])
    step = {"tool": "Bash", "input": {"command": {"pattern": "(a|aa)+$"}}}
    from omk.assertions import steps as steps_module

    saved = steps_module.REGEX_TIMEOUT_S
    steps_module.REGEX_TIMEOUT_S = 0.05
    try:
        result = check("tool_sequence", trace=trace, steps=[step], **{"not": True})
    finally:
        steps_module.REGEX_TIMEOUT_S = saved
    assert result.status is Status.FAILED
    assert result.error


# --- bad input: one line naming file, line and field ------------------------------------------

HEAD = "samples:\n  - sample_id: a\n    prompt: p\n    assertions:\n"


@pytest.mark.parametrize(
    "assertion, where, words",
    [
        ("      - type: tool_sequence\n        steps: []\n", "steps", "must not be empty"),
        ("      - type: tool_sequence\n        steps: [Read]\n        mode: sideways\n", "mode", "sideways"),
        ("      - type: tool_sequence\n        steps: [{tool: Read, inputs: {}}]\n", "steps", "inputs"),
        ("      - type: tool_sequence\n        steps: [{tool: Bash, input: {command: {pattern: '('}}}]\n", "steps", "steps[0].input.command"),
        ("      - type: tools_called\n        values: [{input: {}}]\n", "values", ""),
        ("      - type: tools_only\n        values: [{tool: Bash, input: {c: {pattern: x, flags: q}}}]\n", "values", "flag"),
        ("      - type: match_tool_call\n        tool: Bash\n        max: -1\n", "max", ""),
        ("      - type: match_tool_call\n        calls: every\n", "calls", "every"),
    ],
)
def test_bad_input_is_one_line_with_file_line_and_field(tmp_path, assertion, where, words):
    line = one_problem(tmp_path, HEAD + assertion)
    assert line.startswith("s.yaml:") and line.split(":")[1].isdigit(), line
    assert where in line and words in line, line


# --- tools_called / tools_only with step matchers ---------------------------------------------


def test_tools_called_accepts_step_matchers():
    assert check("tools_called", trace=T, values=[{"tool": "Bash", "input": {"command": "pytest*"}}, "Edit"]).passed
    result = check("tools_called", trace=T, values=[{"tool": "Bash", "input": {"command": "rm *"}}])
    assert not result.passed
    assert result.message == 'not called: Bash {"command":"rm *"}'
    assert check("tools_called", trace=T, values=[{"tool": "Bash", "input": {"command": "rm *"}}], **{"not": True}).passed


def test_tools_only_accepts_step_matchers():
    allowed = ["Read", "Edit", {"tool": "Bash", "input": {"command": "pytest *"}}]
    assert check("tools_only", trace=T, values=allowed).passed
    narrow = ["Read", "Edit", {"tool": "Bash", "input": {"command": "git *"}}]
    result = check("tools_only", trace=T, values=narrow)
    assert not result.passed
    assert "Bash" in result.message
    assert check("tools_only", trace=T, values=narrow, **{"not": True}).passed


# --- match_tool_call on any call ----------------------------------------------------------------


def test_match_tool_call_first_call_only_by_default():
    assert not check("match_tool_call", trace=T, tool="Edit", arguments={"file_path": "src/app.py", "old_string": "a", "new_string": "b"}).passed


def test_match_tool_call_counts_any_call_with_threshold_and_max():
    args = {"command": "pytest -q tests/", "timeout": "IGNORE"}
    assert check("match_tool_call", trace=T, tool="Bash", arguments=args, calls="any").passed
    # Big Sky's rules still hold: the name is case-sensitive, so "bash" is a different tool
    two = check("match_tool_call", trace=Trace(tool_calls=[*CALLS, CALLS[3]]), tool="Bash", arguments=args, threshold=2)
    assert two.passed
    assert two.metric == 2
    one = check("match_tool_call", trace=T, tool="Bash", arguments=args, threshold=2)
    assert not one.passed
    assert one.metric == 1
    assert "not >= 2" in one.message
    assert check("match_tool_call", trace=T, tool="Bash", arguments=args, max=1).passed
    assert not check("match_tool_call", trace=T, tool="Bash", arguments=args, max=0).passed
    assert check("match_tool_call", trace=T, tool="Bash", arguments=args, max=0, **{"not": True}).passed
    assert check("match_tool_call", trace=T, tool="Write", arguments={}, threshold=0, max=0).passed
