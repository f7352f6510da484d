import asyncio
import json

import pytest

from omk.core.errors import InputError
from omk.domain.trace_io import TraceFormatError, parse_trace
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.targets.replay import ReplayTarget


def write_lines(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_replays_output_and_full_trace(tmp_path):
    trace = {
        "turns": 2,
        "tool_calls": [{"tool": "Read", "input": {"file_path": "a.py"}, "output": "x", "mocked": True, "mock_key": "Read:1"}],
        "cost_usd": 0.01,
        "latency_ms": 1200,
        "tokens": {"input": 10, "output": 5},
        "mock_stats": {"hits": 1, "misses": 0, "per_mock": {"Read:1": 1}},
    }
    path = write_lines(tmp_path / "r.jsonl", [{"sample_id": "a", "output": "hi", "trace": trace}])
    got = asyncio.run(ReplayTarget(path).run(Sample("a", "p"), "p"))
    assert got.output == "hi"
    assert got.trace.to_json() == {**trace, "tool_calls": [{**trace["tool_calls"][0], "is_error": False}]}


def test_missing_sample_is_a_target_error_not_a_crash(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", [{"sample_id": "a", "output": "hi"}])
    with pytest.raises(TargetError, match="no recorded response for 'b'"):
        asyncio.run(ReplayTarget(path).run(Sample("b", "p"), "p"))


def test_recorded_error_is_a_target_error(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", [{"sample_id": "a", "error": "HTTP 500"}])
    with pytest.raises(TargetError, match="HTTP 500"):
        asyncio.run(ReplayTarget(path).run(Sample("a", "p"), "p"))


def test_bad_lines_are_all_reported_with_line_numbers(tmp_path):
    path = write_lines(
        tmp_path / "r.jsonl",
        [
            {"sample_id": "a", "output": "x"},
            "{not json",
            {"output": "no id"},
            {"sample_id": "a", "output": "again"},
            {"sample_id": "c", "output": 3},
            {"sample_id": "d", "output": "x", "trace": {"cost_usd": -1}},
        ],
    )
    with pytest.raises(InputError) as err:
        ReplayTarget(path)
    lines = err.value.lines()
    assert [line.split(": ")[0] for line in lines] == [f"{path}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "recorded twice (first at line 1)" in lines[2]
    assert "trace.cost_usd must be a non-negative number" in lines[4]


def test_lines_msgspec_refuses_read_as_the_standard_library_reads_them(tmp_path):
    """msgspec reads each line first; a lone surrogate, a number past a float's range or a NaN
    (which msgspec refuses) are read by the standard library as before, and JSON it cannot read
    either is still reported with json's own words."""
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"sample_id": "a", "output": "x\\ud800y"}\n'
        '{"sample_id": "b", "output": "big", "trace": {"latency_ms": 1e400}}\n'
        '{"sample_id": "c", "output": "n", "meta": NaN}\n'
        '{"sample_id": "d", "output": "over 64 bits", "trace": {"turns": 123456789012345678901234567890}}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as err:
        ReplayTarget(path)
    lines = err.value.lines()
    assert [line.split(": ")[0] for line in lines] == [f"{path}:2"]  # inf is no latency; the rest read
    path.write_text(path.read_text(encoding="utf-8").replace("1e400", "5"), encoding="utf-8")
    target = ReplayTarget(path)
    assert asyncio.run(target.run(Sample("a", "p"), "p")).output == "x\ud800y"
    assert asyncio.run(target.run(Sample("d", "p"), "p")).trace.turns == 123456789012345678901234567890
    path.write_text('{"sample_id": "a", "output": "x",}\n', encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON: Expecting property name enclosed in double quotes"):
        ReplayTarget(path)


def test_omk_054_field_names_are_accepted():
    t = parse_trace({"numTurns": 3, "costUSD": 0.5, "durationMs": 10, "toolCalls": [{"tool": "Bash", "success": False}],
                     "mockStats": {"hits": 1, "misses": 2, "perMock": {"Bash:1": 1}}})
    assert (t.turns, t.cost_usd, t.latency_ms) == (3, 0.5, 10)
    assert t.tool_calls[0].is_error is True
    assert t.mock_stats.per_mock == {"Bash:1": 1}
    assert t.mock_stats.misses == 2


def test_missing_trace_fields_stay_none():
    t = parse_trace({})
    assert (t.turns, t.cost_usd, t.latency_ms, t.mock_stats) == (None, None, None, None)
    assert t.tokens == {"input": None, "output": None}


@pytest.mark.parametrize("bad", [[], {"tool_calls": "x"}, {"tool_calls": [{"input": 1}]}, {"turns": 1.5}, {"tokens": 3}])
def test_bad_trace_shapes_are_rejected(bad):
    with pytest.raises(TraceFormatError):
        parse_trace(bad)


def test_make_target_errors_are_config_errors(tmp_path):
    for spec in ["nonsense", "foo:bar", "replay:"]:
        with pytest.raises(InputError):
            make_target(spec)
    path = write_lines(tmp_path / "r.jsonl", [{"sample_id": "a", "output": "x"}])
    assert make_target("replay:r.jsonl", base_dir=tmp_path).describe()["file"] == str(path)
