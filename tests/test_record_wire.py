"""omk/records/wire.py: omk's JSON records read through msgspec, a wrong field the one-line error
omk has always printed (file, field path, what was expected, what was found); and the evolve
ledger (state.json), the first file kept entirely on msgspec records, written and read back."""

from __future__ import annotations

import json

import msgspec
import pytest

from omk.core.errors import ConfigError, InputError
from omk.evolve.evaluate import EvolveOutcome
from omk.evolve.ledger import FILE, FORMAT, Ledger
from omk.records.wire import convert, decode, parsed


class Scores(msgspec.Struct, frozen=True):
    fact: float | None = None
    composite: float = 0.0


class Result(msgspec.Struct, frozen=True):
    sample_id: str
    scores: Scores = Scores()
    passed: bool = False
    tags: tuple[str, ...] = ()


class Report(msgspec.Struct, frozen=True):
    results: tuple[Result, ...] = ()
    counts: dict[str, int] = {}


def _error(raw: object) -> str:
    with pytest.raises(InputError) as caught:
        decode(json.dumps(raw), Report, "run/report.json")
    return str(caught.value)


def test_a_wrong_field_is_named_by_its_path_with_the_value_found():
    results = [{"sample_id": f"s{i}"} for i in range(3)] + [{"sample_id": "s3", "scores": {"fact": "high"}}]
    assert _error({"results": results}) == 'run/report.json: results[3].scores.fact: expected a number or null, found \'high\''


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"results": [{"sample_id": "a", "passed": 1}]}, "run/report.json: results[0].passed: expected true or false, found int"),
        ({"results": [{"sample_id": "a", "tags": ["x", 2]}]}, "run/report.json: results[0].tags[1]: expected a string, found int"),
        ({"results": {"sample_id": "a"}}, "run/report.json: results: expected a list, found an object"),
        ({"results": [{"sample_id": None}]}, "run/report.json: results[0].sample_id: expected a string, found NoneType"),
        ({"results": [{"scores": {}}]}, "run/report.json: results[0].sample_id: missing"),
        ([], "run/report.json: (top): expected an object, found a list"),
        ({"counts": {"a": "x"}}, "run/report.json: counts[...]: expected an integer, found a string"),
    ],
)
def test_each_kind_of_wrong_field_says_what_was_expected(raw, expected):
    assert _error(raw) == expected


def test_bad_json_and_a_field_under_a_known_place():
    with pytest.raises(InputError, match=r"^x\.json: not valid JSON: "):
        decode(b'{"results": [', Report, "x.json")
    with pytest.raises(InputError) as caught:
        convert({"fact": [1]}, Scores, "run/report.json", "results[7].scores", "; was report.json edited by hand?")
    assert str(caught.value) == "run/report.json: results[7].scores.fact: expected a number or null, found a list; was report.json edited by hand?"


def test_values_read_back_as_written():
    raw = {"results": [{"sample_id": "a", "scores": {"fact": 4, "composite": 4.5}, "passed": True, "tags": ["é"]}]}
    report = decode(json.dumps(raw, ensure_ascii=False).encode(), Report, "r")
    assert report.results[0] == Result("a", Scores(4.0, 4.5), True, ("é",))


def test_the_ledger_writes_its_state_and_reads_it_back(tmp_path):
    ledger = Ledger.open(tmp_path, "k1", 1.0)
    outcome = EvolveOutcome("s1", 4.25, True, (True, False), 0.000123, ("failed contains: «x»",), "Ünïcode output")
    ledger.outcomes["abc:train"] = {"s1": outcome, "s2": EvolveOutcome("s2")}
    ledger.answers[1] = "the improver's answer"
    ledger.spend(0.5)
    text = (tmp_path / FILE).read_text(encoding="utf-8")
    saved = json.loads(text)
    assert list(saved) == ["format", "key", "spent_usd", "outcomes", "answers"]
    assert saved["format"] == FORMAT
    assert list(saved["outcomes"]["abc:train"]["s1"]) == ["sample_id", "composite", "passed", "probes", "cost_usd", "notes", "output"]
    assert "Ünïcode" in text
    assert text.endswith("}\n")
    again = Ledger.open(tmp_path, "k1", 1.0)
    assert again.outcomes == ledger.outcomes
    assert again.answers == {1: "the improver's answer"}
    assert again.spent_usd == 0.5


def test_a_ledger_written_by_an_older_omk_reads_back(tmp_path):
    older = {
        "format": FORMAT, "key": "k1", "spent_usd": 0.25,
        "outcomes": {"abc:selection": {"s1": {"sample_id": "s1", "composite": 3, "passed": False, "probes": [True], "cost_usd": 1e-05, "notes": [], "output": "hi"}}},
        "answers": {"2": "answer"},
    }  # fmt: skip
    (tmp_path / FILE).write_text(json.dumps(older, ensure_ascii=False) + "\n", encoding="utf-8")
    ledger = Ledger.open(tmp_path, "k1", None)
    assert ledger.outcomes == {"abc:selection": {"s1": EvolveOutcome("s1", 3.0, False, (True,), 1e-05, (), "hi")}}
    assert ledger.answers == {2: "answer"}
    assert ledger.spent_usd == 0.25


def test_a_ledger_with_a_wrong_field_or_other_settings_is_refused_in_one_line(tmp_path):
    bad = {"format": FORMAT, "key": "k1", "outcomes": {"abc:train": {"s1": {"sample_id": "s1", "passed": "yes"}}}}
    (tmp_path / FILE).write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        Ledger.open(tmp_path, "k1", None)
    assert str(caught.value) == f"{tmp_path / FILE}: outcomes[...][...].passed: expected true or false, found a string; remove it or choose another --out"
    (tmp_path / FILE).write_text(json.dumps({"format": FORMAT, "key": "k1"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="written by an evolve run with other settings"):
        Ledger.open(tmp_path, "k2", None)


def test_the_corpus_blocks_on_msgspec_write_back_as_they_were_written():
    """Each block of the golden corpus kept as msgspec records, read and written again, is the
    same JSON text (key order, integers and floats as written)."""
    from report_corpus import CORPUS

    from omk.records.document import read_document

    checked = 0
    for path in sorted(CORPUS.rglob("report.json")):
        document, raw = read_document(path), json.loads(path.read_text(encoding="utf-8"))
        blocks = {"repeats": document.repeats, "budget": document.budget, "gold": document.gold, "triggering": document.triggering}
        for name, block in blocks.items():
            if block is not None:
                checked += 1
                assert json.dumps(block.to_json(), ensure_ascii=False) == json.dumps(raw[name], ensure_ascii=False), f"{path}: {name}"
    assert checked >= 1


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, -0.0, null, true], "b": {"c": "é"}, "a": 3}',
        "[1e-05, 7.62939453125e-06, 123456789012345678901234567890]",
        "[NaN, Infinity]",
        "[1e400]",
        '["\\ud800"]',
    ],
)
def test_parsed_gives_what_json_loads_gives(text):
    """msgspec parses what it can; what it refuses (NaN, a number past a float, a lone surrogate)
    `json` reads as before."""
    assert repr(parsed(text)) == repr(json.loads(text)) == repr(parsed(text.encode("utf-8")))


def test_parsed_refuses_bad_json_as_json_does():
    with pytest.raises(json.JSONDecodeError, match="Expecting value"):
        parsed('{"a": }')


def _line_error(raw: dict, at: str = "") -> str:
    from omk.records.result import SampleResult

    with pytest.raises(InputError) as caught:
        SampleResult.decode(json.dumps(raw), "run/results.jsonl:4", at)
    return str(caught.value).removesuffix("; was report.json edited by hand?")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ({"scores": {"fact": "high"}}, "results[3].scores.fact: expected a number or null, found 'high'"),
        ({"status": "done"}, "results[3].status: expected 'error' or 'ok', found 'done'"),
        ({"passed": "yes"}, "results[3].passed: expected true, false or null, found 'yes'"),
        ({"assertions": [{"status": "passed", "layer": "style"}]}, "results[3].assertions[0].layer: expected 'fact' or 'behavior', found 'style'"),
        ({"assertions": [{"status": "passed", "weight": "1"}]}, "results[3].assertions[0].weight: expected a number or null, found '1'"),
        ({"trace": {"tokens": {"input": 2.5}}}, "results[3].trace.tokens.input: expected an integer or null, found float"),
        ({"trace": {"tool_calls": [{"tool": "Read", "outcome": "maybe"}]}}, "results[3].trace.tool_calls[0].outcome: expected 'denied' or 'mock' or 'ran' or 'refused' or 'unsupported', found 'maybe'"),
        ({"turns": [{"index": 0, "scores": {"composite": [1]}}]}, "results[3].turns[0].scores.composite: expected a number or null, found a list"),
        ({"source": {"file": "s.yaml", "line": "3"}}, "results[3].source.line: expected an integer or null, found '3'"),
        ({"sample_id": 7}, "results[3].sample_id: expected a string, found int"),
    ],
)
def test_a_result_read_by_msgspec_names_the_wrong_field_as_omk_always_has(edit, expected):
    raw = {"sample_id": "a", "status": "ok"} | edit
    assert _line_error(raw, "results[3]") == f"run/results.jsonl:4: {expected}"


def test_a_result_reads_nulls_as_defaults_and_numbers_as_written():
    from omk.records.result import NO_SCORES, SampleResult

    raw = {
        "sample_id": "a", "status": "ok", "passed": None, "scores": None, "trace": {"tokens": {"input": 3, "output": None, "cache_read": None, "cache_creation": 2}},
        "assertions": [{"type": "contains", "layer": "fact", "status": "passed", "weight": 2, "not": None, "metric": 1, "children": None}],
        "source": {"file": "s.yaml", "line": 9}, "duration_ms": 12,
    }  # fmt: skip
    for result in (SampleResult.decode(json.dumps(raw), "r"), SampleResult.read(raw, "r")):
        assert (result.passed, result.scores, result.source_file, result.source_line) == (False, NO_SCORES, "s.yaml", 9)
        check = result.assertions[0]
        assert (check.passed, check.negate, check.children, repr(check.weight), repr(check.metric)) == (True, False, (), "2", "1")
        assert result.trace.tokens.to_json() == {"input": 3, "output": None, "cache_read": None, "cache_creation": 2}
        assert json.dumps(result.to_json()["duration_ms"]) == "12"


@pytest.mark.parametrize(
    ("shard", "expected"),
    [
        ({"count": 3, "index": 5}, "shard.index: expected a shard number from 1 to its count (3), found 5"),
        ({"count": 0}, "shard.count: expected a number of shards from 1 to 10000, found 0"),
        ({"count": 3, "merged": [1, 9]}, "shard.merged: expected shard numbers from 1 to its count (3), found [1, 9]"),
        ({"count": "x"}, "shard.count: expected an integer or null, found 'x'"),
        ({"count": 2, "missing": [1, True]}, "shard.missing[1]: expected an integer, found a boolean"),
    ],
)
def test_a_shard_block_is_typed_by_msgspec_and_its_numbers_checked_against_its_count(shard, expected):
    from omk.records.shard import ShardInfo

    with pytest.raises(InputError) as caught:
        ShardInfo.read({"plan": "p", **shard}, "run/report.json")
    assert str(caught.value) == f"run/report.json: {expected}; was report.json edited by hand?"
    assert ShardInfo.read({"count": 2, "plan": "p", "merged": None, "index": 1}, "r").merged == ()


def test_an_observation_read_back_names_a_wrong_field():
    from omk.records.observe import FORMAT, Observation

    skills = [{"skill": "pdf", "how": {"skill_call": 2}, "missed": [{"kind": "missed", "where": {"index": "two"}}]}]
    with pytest.raises(InputError) as caught:
        Observation.loads(json.dumps({"format": FORMAT, "skills": skills}), "observe.json")
    assert str(caught.value) == "observe.json: skills[0].missed[0].where.index: expected an integer or null, found 'two'"
    skills[0]["missed"][0]["where"]["index"] = None
    again = Observation.loads(json.dumps({"format": FORMAT, "skills": skills}))
    assert (again.skills[0].how, again.skills[0].missed[0].where.index) == ((("skill_call", 2),), 0)
