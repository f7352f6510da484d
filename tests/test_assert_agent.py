"""Trace assertions: cost, latency, turns, tools, tool content, mock hits; tool name aliases."""

from __future__ import annotations

import pytest
from helpers import check

from omk.domain.toolnames import canonical_tool, same_tool
from omk.records import MockStats, ToolCall, Trace


def trace(**fields) -> Trace:
    return Trace(**fields)


CALLS = [
    ToolCall("Bash", {"command": "git status"}, "On branch main\n"),
    ToolCall("read", {"file_path": "src/应用.py"}, {"lines": 3, "text": "def main(): 中文"}),
    ToolCall("Bash", "ls -la", None),
    ToolCall("mcp__github__create_issue", {"title": "Bug"}, "created #12"),
]
T = Trace(turns=3, tool_calls=CALLS, cost_usd=0.02, latency_ms=1500.0)


# --- cost, latency, turns ----------------------------------------------------------------------


def test_cost_max_limit_is_inclusive_and_missing_cost_fails():
    assert check("cost_max", trace=T, value=0.02).passed
    result = check("cost_max", trace=T, value=0.01)
    assert not result.passed
    assert result.metric == 0.02
    assert result.message == "cost_usd 0.02 > max 0.01"
    missing = check("cost_max", trace=Trace(), value=100)
    assert not missing.passed
    assert missing.message == "trace has no cost_usd"


def test_cost_max_is_exact_float_comparison():
    assert not check("cost_max", trace=trace(cost_usd=0.1 + 0.2), value=0.3).passed


def test_latency_max():
    assert check("latency_max", trace=T, value=1500).passed
    assert not check("latency_max", trace=T, value=1499).passed
    assert check("latency_max", trace=Trace(), value=1e9).message == "trace has no latency_ms"


def test_turns_max_and_min():
    assert check("turns_max", trace=T, value=3).passed
    assert not check("turns_max", trace=T, value=2).passed
    assert check("turns_max", trace=Trace(), value=99).message == "trace has no turns"
    assert not check("turns_max", trace=Trace(), value=99).passed
    assert check("turns_min", trace=T, value=3).passed
    assert not check("turns_min", trace=T, value=4).passed
    assert check("turns_min", trace=Trace(), value=0).passed  # missing turns count as 0
    assert not check("turns_min", trace=Trace(), value=1).passed


# --- which tools -----------------------------------------------------------------------------


def test_tools_called_case_insensitive_with_aliases():
    assert check("tools_called", trace=T, values=["bash", "Read"]).passed
    assert check("tools_called", trace=T, values=["shell", "file_read"]).passed
    assert check("tools_called", trace=T, values=["github.create_issue"]).passed
    assert check("tools_called", trace=T, values=["mcp__github__create_issue"]).passed
    result = check("tools_called", trace=T, values=["Bash", "Write"])
    assert not result.passed
    assert result.message == "not called: Write"
    assert not check("tools_called", trace=Trace(), values=["Bash"]).passed


def test_tools_not_called():
    assert check("tools_not_called", trace=T, values=["Write", "WebSearch"]).passed
    result = check("tools_not_called", trace=T, values=["Write", "exec_command"])
    assert not result.passed
    assert result.message == "called: exec_command"
    assert check("tools_not_called", trace=Trace(), values=["Bash"]).passed


def test_tools_count():
    assert check("tools_count_max", trace=T, value=4).passed
    assert not check("tools_count_max", trace=T, value=3).passed
    assert check("tools_count_min", trace=T, value=4).passed
    result = check("tools_count_min", trace=T, value=5)
    assert not result.passed
    assert result.metric == 4
    assert check("tools_count_max", trace=Trace(), value=0).passed


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("bash", "Bash"),
        ("exec_command", "Bash"),
        ("command_execution", "Bash"),
        ("FILE_READ", "Read"),
        ("apply_patch", "Edit"),
        ("web_search", "WebSearch"),
        ("mcp__srv__tool", "srv.tool"),
        ("mcp__srv__do__more", "srv.do__more"),
        ("custom_tool", "custom_tool"),
    ],
)
def test_canonical_tool_names(name, canonical):
    assert canonical_tool(name) == canonical


def test_same_tool():
    assert same_tool("shell", "BASH")
    assert not same_tool("Read", "Write")


# --- tool content ------------------------------------------------------------------------------


def test_tool_output_contains_string_and_object_outputs():
    assert check("tool_output_contains", trace=T, value="Bash:on branch MAIN").passed
    assert check("tool_output_contains", trace=T, value="Read:中文").passed
    assert check("tool_output_contains", trace=T, value='Read:"lines":3').passed  # an object output is matched as compact JSON
    assert not check("tool_output_contains", trace=T, value="Read:object Object").passed
    assert check("tool_output_contains", trace=T, value="github.create_issue:#12").passed


def test_tool_output_contains_splits_at_first_colon_and_needs_that_tool():
    calls = [ToolCall("Bash", "x", "time: 12:30")]
    assert check("tool_output_contains", trace=Trace(tool_calls=calls), value="Bash:time: 12:30").passed
    result = check("tool_output_contains", trace=T, value="Write:anything")
    assert not result.passed
    assert result.message == "Write was not called"
    assert check("tool_output_contains", trace=T, value="Bash:").passed  # empty needle: tool was called
    assert not check("tool_output_contains", trace=T, value="Bash:nowhere").passed


def test_tool_input_contains_matches_compact_json():
    assert check("tool_input_contains", trace=T, value='Bash:"command":"git').passed
    assert check("tool_input_contains", trace=T, value='Bash:"ls -la"').passed  # string inputs are quoted
    assert check("tool_input_contains", trace=T, value="read:应用.py").passed  # non-ASCII unescaped
    assert not check("tool_input_contains", trace=T, value="Bash:rm -rf").passed


def test_tool_input_of_missing_input_is_empty_json_string():
    calls = [ToolCall("Bash", None, None)]
    assert check("tool_input_contains", trace=Trace(tool_calls=calls), value='Bash:""').passed


def test_tool_input_not_contains():
    assert check("tool_input_not_contains", trace=T, value="Bash:rm -rf").passed
    result = check("tool_input_not_contains", trace=T, value="Bash:git status")
    assert not result.passed
    assert "git status" in result.message
    assert check("tool_input_not_contains", trace=T, value="Write:x").passed  # never called


# --- mocks ----------------------------------------------------------------------------------


def test_mock_hit():
    stats = Trace(mock_stats=MockStats(hits=3, misses=0, per_mock={"Read:1": 1, "Bash:2": 2}))
    assert check("mock_hit", trace=stats, value="Read:1").passed
    assert not check("mock_hit", trace=stats, value="Bash:1").passed
    assert check("mock_hit", trace=stats, value="Bash:2", threshold=2).passed
    result = check("mock_hit", trace=stats, value="Bash:2", threshold=3)
    assert not result.passed
    assert result.metric == 2
    assert check("mock_hit", trace=stats, value="Write:1", threshold=0).passed


def test_mock_hit_without_stats_fails():
    result = check("mock_hit", trace=Trace(), value="Read:1")
    assert not result.passed
    assert result.message == "trace has no mock_stats"
