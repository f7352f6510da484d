"""The pieces of a conversation run: the turn view, scores over turns, traces, replay records,
the mock sandbox across turns, and the renderers' turn rows."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from loader_helpers import load

from omk.core.errors import InputError
from omk.records import MockStats, Scores, ToolCall, Trace
from omk.records.result import SampleResult
from omk.report.markdown import render_markdown
from omk.report.reasons import failure_lines
from omk.runner.conversation import combine_traces, run_conversation, turn_view
from omk.runner.sample_run import RunConfig
from omk.scoring.layers import score_turns
from omk.targets.mocks import MockSandbox
from omk.targets.replay import ReplayTarget

SAMPLES = """
- sample_id: c
  rubric: polite
  dimensions: {tone: calm, facts: right}
  assertions:
    - {type: max_length, value: 200}
  turns:
    - prompt: hi
    - prompt: where is it?
      context: the order table
      rubric: names the carrier
      dimensions: {facts: names the date}
      assertions:
        - {type: contains, value: shipped}
"""


def test_turn_view_merges_the_samples_checks_with_the_turns(tmp_path):
    sample = load(tmp_path, "s.yaml", SAMPLES).samples[0]
    first, second = turn_view(sample, 0), turn_view(sample, 1)
    assert first.prompt == "hi"
    assert first.context is None
    assert first.rubric == "polite"
    assert [a.type for a in first.assertions] == ["max_length"]
    assert first.dimensions == {"tone": "calm", "facts": "right"}
    assert second.prompt == "where is it?"
    assert second.context == "the order table"
    assert second.rubric == "names the carrier"  # the turn's rubric replaces the sample's
    assert second.dimensions == {"tone": "calm", "facts": "names the date"}  # same name: the turn's wins
    assert [a.type for a in second.assertions] == ["max_length", "contains"]  # the sample's first
    assert second.turns == ()
    assert second.raw["prompt"] == "where is it?"
    assert second.raw["turn"] == {"index": 1, "count": 2}
    assert sample.prompt == "hi"
    assert len(sample.turns) == 2  # the sample itself is untouched


def test_scores_over_turns_are_layer_means_and_the_mean_of_composites():
    turns = [
        Scores(fact=5.0, behavior=None, judge=None, composite=5.0),
        Scores(fact=3.0, behavior=1.0, judge=None, composite=2.0),
        Scores(),  # nothing graded: counts in no mean
    ]
    assert score_turns(turns) == Scores(fact=4.0, behavior=1.0, judge=None, composite=3.5)
    assert score_turns([Scores(), Scores()]) == Scores(composite=0.0)


def test_the_conversation_trace_sums_what_the_turns_reported():
    a = Trace(turns=2, tool_calls=(ToolCall("lookup"),), cost_usd=0.001, latency_ms=10.0, tokens={"input": 5, "output": None},
              mock_stats=MockStats(1, 0, {"lookup:1": 1}), notes=("stopped at max_turns (2)",))
    b = Trace(turns=None, cost_usd=None, latency_ms=5.5, tokens={"input": 7, "output": None},
              mock_stats=MockStats(1, 1, {"lookup:1": 1}))
    whole = combine_traces([a, b])
    assert whole.turns == 2
    assert whole.cost_usd == 0.001
    assert whole.latency_ms == 15.5
    assert whole.tokens.to_json() == {"input": 12, "output": None}  # none reported stays None, never 0
    assert whole.mock_stats == MockStats(2, 1, {"lookup:1": 2})
    assert whole.notes == ("turn 1: stopped at max_turns (2)",)
    assert combine_traces([Trace()]).mock_stats is None


def test_the_sandbox_keeps_mock_positions_across_turns_and_forgets_a_retried_attempt():
    sandbox = MockSandbox([{"tool": "next", "return_seq": ["one", "two", "three"]}])

    async def ask() -> str:
        return (await sandbox.answer("next", {})).text

    async def scenario() -> list[str]:
        sandbox.start_turn()
        got = [await ask()]
        sandbox.start_turn()
        got.append(await ask())  # a failed attempt of turn 2...
        sandbox.retry_turn()
        got.append(await ask())  # ...is forgotten: the retry gets "two" again
        return got

    assert asyncio.run(scenario()) == ["one", "two", "two"]
    assert sandbox.stats.record() == MockStats(1, 0, {"next:1": 1})  # this turn's
    assert sandbox.totals.record() == MockStats(2, 0, {"next:1": 2})  # the conversation's


def test_replay_records_with_turns_are_checked_at_load(tmp_path):
    path = tmp_path / "r.jsonl"
    lines = [
        {"sample_id": "a", "turns": []},
        {"sample_id": "b", "output": "x", "turns": [{"output": "y"}]},
        {"sample_id": "c", "turns": [{"output": 3}, "nope", {"output": "ok", "trace": {"turns": -1}}]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        ReplayTarget(path)
    assert [line.replace(f"{tmp_path}/", "") for line in info.value.lines()] == [
        "r.jsonl:1: (a) turns: must be a non-empty list of {output, trace} objects, one per turn",
        'r.jsonl:2: (b) turns: a record has either "output" or "turns", not both',
        "r.jsonl:3: (c) turns[0].output: must be a string",
        "r.jsonl:3: (c) turns[1]: must be an object with output and trace",
        "r.jsonl:3: (c) turns[2].trace: trace.turns must be a non-negative number (got -1)",
    ]


def test_replay_says_which_turn_is_missing(tmp_path):
    sample = load(tmp_path, "s.yaml", SAMPLES).samples[0]
    single = load(tmp_path, "t.yaml", "- {sample_id: c, prompt: hi}\n").samples[0]
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"sample_id": "c", "turns": [{"output": "hello"}]}) + "\n", encoding="utf-8")
    result = asyncio.run(run_conversation(sample, ReplayTarget(path), RunConfig()))
    assert result.status == "error"
    assert result.error == "turn 2: no recorded turn 2 for 'c' (the record has 1)"
    assert [t.status for t in result.turns] == ["ok", "error"]
    with pytest.raises(Exception, match="is a conversation, but the sample has one prompt"):
        asyncio.run(ReplayTarget(path).run(single, "hi"))


def test_a_turn_with_nothing_graded_counts_in_neither_scores_nor_pass(tmp_path):
    sample = load(tmp_path, "s.yaml", "- sample_id: c\n  turns:\n    - prompt: hi\n    - prompt: check\n      assertions: [{type: contains, value: ok}]\n").samples[0]
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"sample_id": "c", "turns": [{"output": "hey"}, {"output": "ok"}]}) + "\n", encoding="utf-8")
    result = asyncio.run(run_conversation(sample, ReplayTarget(path), RunConfig()))
    assert [t.passed for t in result.turns] == [None, True]
    assert result.passed is True
    assert result.scores == Scores(fact=5.0, composite=5.0)
    md = render_markdown({"format": "omk-report/1", "summary": {"threshold": 3.5}, "results": [result.to_json()]})
    assert "| ↳ turn 1: hi | ok | — | — | — | — | · |" in md
    assert "| ↳ turn 2: check | ok | 5.00 | — | — | 5.00 | ✅ |" in md
    assert "| ↳ 第 2 轮: check | ok |" in render_markdown({"format": "omk-report/1", "summary": {}, "results": [result.to_json()]}, lang="zh")


def test_failure_lines_name_the_turn():
    result = {
        "status": "ok",
        "passed": False,
        "turns": [
            {"index": 0, "status": "ok", "passed": True, "assertions": [], "scores": {"fact": 5.0}},
            {
                "index": 1,
                "status": "ok",
                "passed": False,
                "assertions": [{"type": "contains", "value": "x", "status": "failed", "message": "no x"}],
                "scores": {"fact": 1.0},
            },
        ],
    }
    assert failure_lines(SampleResult.read({"sample_id": "c", **result}), 3.5) == ["turn 2: below threshold 3.5: fact 1.00", "turn 2: contains 'x': no x"]
    nothing = {"status": "ok", "turns": [{"index": 0, "status": "ok", "passed": None, "assertions": [], "scores": {}}]}
    assert failure_lines(SampleResult.read({"sample_id": "c", **nothing}), 3.5) == ["nothing was graded (no turn had an assertion that ran or a judge score)"]


def test_the_doctor_counts_a_conversations_turn_checks(tmp_path):
    from omk.doctor.coverage import coverage
    from omk.doctor.diagnostics import sample_diagnostics

    text = """
    - sample_id: c
      mocks: [{tool: lookup, return: x}]
      turns:
        - prompt: hi
        - prompt: where is it?
          rubric: ok
          assertions: [{type: mock_hit, value: "lookup:1"}, {type: contains, value: x}]
    - sample_id: bare
      turns: [{prompt: hi}]
    """
    samples = load(tmp_path, "s.yaml", text).samples
    cov = coverage(samples)
    assert cov["assertion_types"] == {"mock_hit": 1, "contains": 1}
    assert cov["conversations"] == 2
    assert cov["with_rubric"] == 1
    found = {(d.kind, d.sample_id): d.message for d in sample_diagnostics(samples)}
    assert ("no_grading", "c") not in found
    assert ("mock_unchecked", "c") not in found  # its turn checks both
    assert ("no_grading", "bare") in found
    assert found[("rubric_clarity_low", "c")].startswith("turn 2 rubric is 2 characters")


def test_urls_in_a_conversations_turns_are_inlined(tmp_path):
    from inline_doc_server import DocServer

    from omk.inline import inline_urls
    from omk.samples.model import Sample, Turn
    from omk.settings.config import Settings

    with DocServer() as http:
        plain = http.url("/plain.txt")
        turns = [Turn(prompt="hello"), Turn(prompt=f"read {plain}", context=f"see {plain}")]
        sample = Sample("c", prompt="hello", turns=turns, base_dir=tmp_path)
        asyncio.run(inline_urls([sample], Settings(url_allow=["127.0.0.1"]), err=io.StringIO()))
        assert http.hits["/plain.txt"] == 1
    assert "Release notes 2.4" in turns[1].prompt
    assert "Release notes 2.4" in turns[1].context
    assert turns[0].prompt == "hello" == sample.prompt
    assert [(u["url"], u["fields"], u["status"]) for u in sample.inlined_urls] == [
        (plain, ["turns[1].prompt", "turns[1].context"], "inlined")
    ]


def test_judge_spreads_and_agreement_look_into_turns():
    from omk.doctor.diagnostics import judge_spreads
    from omk.records import JudgeBlock, SampleResult, TurnResult
    from omk.samples.model import Sample
    from omk.scoring.digest import Digest

    turn = {"judge": {"score": 3.0, "judges": [{"judge": "a", "score": 1.0}, {"judge": "b", "score": 5.0}]}}
    result = {"sample_id": "c", "status": "ok", "judge": None, "scores": {}, "turns": [turn, {"judge": None}]}
    assert judge_spreads([SampleResult.read(result)]) == [2.0]
    block = JudgeBlock.read(turn["judge"])
    turns = (TurnResult(index=0, status="ok", prompt="p", judge=block), TurnResult(index=1, status="ok", prompt="q"))
    ran = SampleResult.start(Sample(sample_id="c", prompt="p"), "p", turns=turns)
    assert Digest.of(ran).judge_scores == ({"a": 1.0, "b": 5.0},)  # what an ensemble's agreement reads
