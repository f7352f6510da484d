"""The mock sandbox (omk 0.54's rules): keys, matching rules, returns, strict mode, stats."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from omk.domain.mock_defs import mock_keys
from omk.samples.model import Sample
from omk.targets.mocks import MockSandbox, ToolAnswer, glob_match, offered_tools


def answer(sandbox: MockSandbox, tool: str, call_input: object) -> ToolAnswer:
    return asyncio.run(sandbox.answer(tool, call_input))


def sandbox(*mocks: dict, strict: bool = False, base_dir: Path | None = None, fallback=None) -> MockSandbox:
    return MockSandbox(list(mocks), strict=strict, base_dir=base_dir, fallback=fallback)


def matched_key(mock: dict, tool: str, call_input: object) -> str | None:
    return answer(sandbox(mock), tool, call_input).mock_key


# --- keys and order ---------------------------------------------------------------------------


def test_keys_count_per_literal_tool_string():
    assert mock_keys([{"tool": "Read"}, {"tool": "Bash"}, {"tool": "Bash"}, {"tool": "bash"}]) == [
        "Read:1",
        "Bash:1",
        "Bash:2",
        "bash:1",
    ]


def test_first_matching_mock_in_list_order_wins():
    box = sandbox(
        {"tool": "Bash", "match": {"command_glob": "git *"}, "return": "git"},
        {"tool": "Bash", "return": "any"},
        {"tool": "*", "return": "star"},
    )
    assert answer(box, "Bash", {"command": "git status"}).output == "git"
    assert answer(box, "Bash", {"command": "ls"}).output == "any"
    assert answer(box, "Other", {}).output == "star"
    assert box.stats.to_json() == {"hits": 3, "misses": 0, "per_mock": {"Bash:1": 1, "Bash:2": 1, "*:1": 1}}
    assert [c.mock_key for c in box.calls] == ["Bash:1", "Bash:2", "*:1"]


# --- tool identity --------------------------------------------------------------------------


def test_tool_equal_star_and_alias_match_but_other_tools_do_not():
    assert matched_key({"tool": "Read"}, "Read", {}) == "Read:1"
    assert matched_key({"tool": "*"}, "anything", {}) == "*:1"
    assert matched_key({"tool": "Bash"}, "exec_command", {}) == "Bash:1"  # alias normalisation
    assert matched_key({"tool": "read"}, "file_read", {}) == "read:1"
    assert matched_key({"tool": "github.create_issue"}, "mcp__github__create_issue", {}) == "github.create_issue:1"
    assert matched_key({"tool": "Read"}, "Write", {}) is None


# --- match fields, one each -----------------------------------------------------------------


def test_file_path_is_exact_after_tilde_expansion():
    home = os.path.expanduser("~")
    mock = {"tool": "Read", "match": {"file_path": "~/notes.md"}}
    assert matched_key(mock, "Read", {"file_path": f"{home}/notes.md"}) == "Read:1"
    assert matched_key(mock, "Read", {"file_path": "~/notes.md"}) == "Read:1"
    assert matched_key(mock, "Read", {"file_path": f"{home}/other/notes.md"}) is None
    assert matched_key(mock, "Read", {"command": "cat notes.md"}) is None


def test_file_path_endswith_needs_a_separator_before_the_suffix():
    mock = {"tool": "Read", "match": {"file_path_endswith": "src/auth.py"}}
    assert matched_key(mock, "Read", {"file_path": "src/auth.py"}) == "Read:1"
    assert matched_key(mock, "Read", {"file_path": "/repo/src/auth.py"}) == "Read:1"
    assert matched_key(mock, "Read", {"file_path": "C:\\repo\\x\\src/auth.py"}) == "Read:1"
    assert matched_key(mock, "Read", {"file_path": "/repo/mysrc/auth.py"}) is None


def test_url_is_exact():
    mock = {"tool": "WebFetch", "match": {"url": "https://a.example/x"}}
    assert matched_key(mock, "WebFetch", {"url": "https://a.example/x"}) == "WebFetch:1"
    assert matched_key(mock, "WebFetch", {"url": "https://a.example/x?y=1"}) is None


def test_url_glob_only_star_anchored():
    mock = {"tool": "WebFetch", "match": {"url_glob": "https://*.example.com/docs/*"}}
    assert matched_key(mock, "WebFetch", {"url": "https://api.example.com/docs/v1"}) == "WebFetch:1"
    assert matched_key(mock, "WebFetch", {"url": "xhttps://api.example.com/docs/v1"}) is None  # anchored
    assert not glob_match("a?c", "abc")  # `?` is literal
    assert glob_match("a?c", "a?c")
    assert not glob_match("a.c", "abc")  # `.` is literal


def test_command_glob_spans_newlines():
    mock = {"tool": "Bash", "match": {"command_glob": "psql *"}}
    assert matched_key(mock, "Bash", {"command": "psql -c 'select 1'\n-- two lines"}) == "Bash:1"
    assert matched_key(mock, "Bash", {"command": "sudo psql"}) is None


def test_input_is_a_recursive_subset_with_arrays_deep_equal():
    mock = {"tool": "t", "match": {"input": {"order": {"id": "A1"}, "tags": ["x", "y"]}}}
    assert matched_key(mock, "t", {"order": {"id": "A1", "extra": 1}, "tags": ["x", "y"], "more": True}) == "t:1"
    assert matched_key(mock, "t", {"order": {"id": "A1"}, "tags": ["x", "y", "z"]}) is None  # array not a subset
    assert matched_key(mock, "t", {"order": {"id": "A2"}, "tags": ["x", "y"]}) is None
    assert matched_key({"tool": "t", "match": {"input": {"n": 1}}}, "t", {"n": True}) is None  # true is not 1


def test_input_contains_is_case_insensitive_in_any_string_leaf():
    mock = {"tool": "t", "match": {"input_contains": "b2002"}}
    assert matched_key(mock, "t", {"q": {"deep": ["x", "order B2002"]}}) == "t:1"
    assert matched_key(mock, "t", {"B2002": "key only"}) is None  # keys are not leaves


def test_match_fields_are_and_ed():
    mock = {"tool": "Read", "match": {"file_path_endswith": "a.py", "input_contains": "secret"}}
    assert matched_key(mock, "Read", {"file_path": "/x/a.py", "note": "SECRET"}) == "Read:1"
    assert matched_key(mock, "Read", {"file_path": "/x/a.py"}) is None


# --- returns --------------------------------------------------------------------------------


def test_return_seq_then_return():
    box = sandbox({"tool": "t", "return_seq": ["first", {"n": 2}], "return": "after"})
    outs = [answer(box, "t", {}) for _ in range(3)]
    assert [a.output for a in outs] == ["first", {"n": 2}, "after"]
    assert outs[1].text == '{"n":2}'  # the model sees compact JSON; the trace keeps the object
    assert box.calls[1].output == {"n": 2}


def test_return_seq_then_return_file(tmp_path):
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "page.txt").write_text("from file", encoding="utf-8")
    box = sandbox({"tool": "t", "return_seq": ["one"], "return_file": "fx/page.txt"}, base_dir=tmp_path)
    assert [answer(box, "t", {}).output for _ in range(2)] == ["one", "from file"]


def test_return_file_json_is_an_object_and_missing_file_is_a_marked_error(tmp_path):
    (tmp_path / "o.json").write_text('{"status": "shipped", "名": "耳机"}', encoding="utf-8")
    box = sandbox({"tool": "a", "return_file": "o.json"}, {"tool": "b", "return_file": "nope.txt"}, base_dir=tmp_path)
    got = answer(box, "a", {})
    assert got.output == {"status": "shipped", "名": "耳机"}
    assert got.text == '{"status":"shipped","名":"耳机"}'
    assert answer(box, "b", {}).output == "[omk-mock-error] return_file not found: nope.txt"


# --- unmatched calls --------------------------------------------------------------------------


def test_strict_denies_unmatched_calls():
    box = sandbox({"tool": "Read", "match": {"file_path": "/a"}}, strict=True)
    got = answer(box, "Read", {"file_path": "/b"})
    assert got.is_error
    assert not got.mocked
    assert "denied" in got.text
    assert box.calls[0].is_error
    assert box.calls[0].mock_key is None
    assert box.stats.to_json() == {"hits": 0, "misses": 1, "per_mock": {}}


def test_non_strict_unmatched_gets_an_error_result_saying_nothing_is_available():
    box = sandbox()
    got = answer(box, "lookup", {})
    assert got.is_error
    assert "no mock or tool is available for lookup" in got.text
    assert box.stats.misses == 1


def test_non_strict_unmatched_goes_to_the_fallback_seam_and_strict_never_does():
    asked: list[str] = []

    async def fallback(tool, call_input):
        asked.append(tool)
        return ToolAnswer(output="from mcp", text="from mcp") if tool == "srv.tool" else None

    box = sandbox(fallback=fallback)
    assert answer(box, "srv.tool", {}).output == "from mcp"
    assert answer(box, "other", {}).is_error  # the fallback declined
    strict = sandbox(strict=True, fallback=fallback)
    assert answer(strict, "srv.tool", {}).is_error
    assert asked == ["srv.tool", "other"]


# --- tools offered -----------------------------------------------------------------------------


def test_offered_tools_are_declared_tools_plus_undeclared_mock_tools():
    sample = Sample(
        "s",
        "p",
        tools=[{"name": "Read", "description": "read a file", "parameters": {"type": "object", "properties": {}}}],
        mocks=[{"tool": "read_file"}, {"tool": "lookup"}, {"tool": "lookup"}, {"tool": "*"}],
    )
    tools = offered_tools(sample)
    assert [t["name"] for t in tools] == ["Read", "lookup"]  # read_file is Read; `*` is no tool
    assert tools[0]["description"] == "read a file"
    assert tools[1]["parameters"] == {"type": "object"}


def test_the_live_count_gives_a_record_that_later_calls_leave_as_it_was():
    from omk.records import MockStats

    box = sandbox({"tool": "Read", "return": "x"})
    answer(box, "Read", {})
    taken = box.stats.record()
    answer(box, "Read", {})
    answer(box, "Grep", {})
    assert taken == MockStats(1, 0, {"Read:1": 1})  # a trace keeps what was counted when its target finished
    assert box.stats.record() == MockStats(2, 1, {"Read:1": 2})


def test_a_masked_trace_is_a_new_record_only_when_a_secret_was_in_it():
    from omk.core.secrets import Masker
    from omk.records import ToolCall, Trace
    from omk.targets.masked import mask_trace

    mask = Masker(["sk-secret-value-1234"])
    clean = Trace(tool_calls=(ToolCall("Read", {"path": "a.txt"}, "text"),), notes=("a note",))
    assert mask_trace(clean, mask) is clean
    leaky = Trace(tool_calls=(ToolCall("Read", {"path": "a.txt"}, "key sk-secret-value-1234"), ToolCall("Grep", "x", "y")))
    masked = mask_trace(leaky, mask)
    assert masked.tool_calls[0].output == "key [redacted]"
    assert leaky.tool_calls[0].output.endswith("1234")
    assert masked.tool_calls[1] is leaky.tool_calls[1]  # an unchanged call is kept as it was


def test_a_mock_with_run_lets_the_real_tool_run_counted_as_its_hit(tmp_path):
    """claude:'s hook: `run: true` allows the call (the real tool answers) and counts the mock's
    hit; the call is then no drift. Without it the mock answers (the call is denied with its text)."""
    import json

    from omk.domain.mock_defs import RECORDED, drift_notes
    from omk.records import ToolCall
    from omk.targets.claude import hook
    from omk.targets.mocks import mock_matches

    mocks = [
        {"tool": "Read", "match": {"file_path_endswith": "src/app.py"}, "return": "recorded", "run": True},
        {"tool": "Edit", "match": {"file_path_endswith": "src/app.py"}, "return": "edited"},
    ]
    (tmp_path / hook.MOCKS_FILE).write_text(json.dumps({"mocks": mocks, "strict": True, "base_dir": str(tmp_path)}), encoding="utf-8")
    (tmp_path / hook.STATE_FILE).write_text("{}", encoding="utf-8")
    read = hook.decide({"tool_name": "Read", "tool_input": {"file_path": "/w/src/app.py"}, "tool_use_id": "t1"}, tmp_path)
    edit = hook.decide({"tool_name": "Edit", "tool_input": {"file_path": "/w/src/app.py"}, "tool_use_id": "t2"}, tmp_path)
    assert read["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert edit["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert edit["hookSpecificOutput"]["permissionDecisionReason"] == hook.MOCK_PREFIX + "edited"
    state = json.loads((tmp_path / hook.STATE_FILE).read_text(encoding="utf-8"))
    assert [(c["decision"], c["mock_key"]) for c in state["calls"]] == [("allow", "Read:1"), ("mock", "Edit:1")]
    assert state["totals"]["per_mock"] == {"Read:1": 1, "Edit:1": 1}
    ran = ToolCall("Read", {"file_path": "/w/src/app.py"}, "1\tdef add", False, "Read:1", False, "ran")
    assert drift_notes(RECORDED, mocks, [ran], mock_matches) == []
    assert drift_notes(RECORDED, mocks, [ToolCall("Read", {"file_path": "/w/src/app.py"}, "x", False, None, False, "ran")], mock_matches) != []
