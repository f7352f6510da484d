"""What omk writes, it reads back through the same records: every result of every report in the
golden corpus (tests/fixtures/reports/), read as a `SampleResult` and written again with
`to_json`, is the object that was written; the report header's records (target, judge settings,
summary, repeats, triggering, shard, budget, gold) likewise."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from judge_support import graded, make_judge, run, sample
from report_corpus import CORPUS

from omk.records import JudgeBlock, SampleResult
from omk.records.document import ReportDocument, RunTarget, read_document
from omk.records.judge_settings import JudgeSettings

FOLDERS = sorted(p.name for p in CORPUS.iterdir() if (p / "report.json").is_file())


def _report(name: str) -> dict:
    return json.loads((CORPUS / name / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", FOLDERS)
def test_every_result_reads_back_to_what_was_written(name):
    results = _report(name)["results"]
    assert results
    for i, written in enumerate(results):
        assert SampleResult.read(written, f"results[{i}]").to_json() == written, f"{name}: results[{i}]"


@pytest.mark.parametrize("name", FOLDERS)
def test_the_header_reads_back_to_what_was_written(name):
    data = _report(name)
    doc = ReportDocument.from_dict(data, name)
    header = {
        "target": doc.target.to_json(),
        "judge": doc.judge.to_json() if doc.judge is not None else None,
    }
    for key in ("repeats", "triggering", "shard", "budget", "gold"):
        record = getattr(doc, key)
        if key in data:
            header[key] = record.to_json() if record is not None else None
    assert header == {k: data[k] for k in header}, name
    summary = doc.summary.to_json()  # a built report from an older omk lacks fields added since
    assert {k: summary[k] for k in data["summary"]} == data["summary"]
    assert set(summary) == set(data["summary"]) or name in ("experiment-cost", "factory", "old-layout", "pairwise-votes")
    assert json.dumps(header["target"]) == json.dumps(data["target"])  # in the order written
    assert json.dumps(header["judge"]) == json.dumps(data["judge"])


def test_the_judged_corpus_has_a_judge_and_a_described_target():
    doc = read_document(CORPUS / "judged")
    assert doc.judge is not None
    assert doc.judge.models == ("cmd:python3 /corpus/judge.py",)
    assert doc.judge.judges[0].kind == "cmd"
    assert doc.judge.repeat == 1
    assert doc.target.kind == "cmd"
    assert doc.target.get("command")[0] == "python"
    assert doc.judge_models == doc.judge.models


def test_an_ensembles_agreement_and_a_kinds_fields_read_back():
    judge = {
        "models": ["a", "b"],
        "judges": [{"spec": "a", "kind": "openai", "model": "m", "base_url": "http://x"}, {"spec": "b", "kind": "cmd", "command": ["j"]}],
        "prompt_version": "v", "prompt_hash": "h", "lang": "en", "debias_length": True, "repeat": 2,
        "templates": {"rubric": {"version": "v", "hash": "h"}, "faithfulness": "f"},
        "agreement": {"sample_count": 3, "pair_count": 1, "mean_abs_diff": 0.5, "pearson": None,
                      "pairs": [{"judges": ["a", "b"], "mean_abs_diff": 0.5, "pearson": None}]},
    }  # fmt: skip
    settings = JudgeSettings.read(judge)
    assert settings is not None
    assert settings.agreement is not None
    assert settings.agreement.pairs[0].judges == ("a", "b")
    assert json.dumps(settings.to_json()) == json.dumps(judge)
    target = {"kind": "codex", "spec": "codex:", "model": None, "cli": {"path": "codex", "version": "1"}, "isolation": "home"}
    assert json.dumps(RunTarget.read(target).to_json()) == json.dumps(target)
    own = {"name": "upper", "spec": "python:upper"}  # a Python target describes itself as it likes
    assert json.dumps(RunTarget.read(own).to_json()) == json.dumps(own)
    assert RunTarget.read(own).name == "python:upper"


def test_a_bad_header_field_is_named():
    with pytest.raises(Exception, match=r"report: judge.repeat: expected an integer"):
        JudgeSettings.read({"models": ["a"], "repeat": "two"})
    with pytest.raises(Exception, match=r"report: target.kind: expected a string"):
        RunTarget.read({"kind": 3, "spec": "x"})


JUDGE = Path(__file__).resolve().parent / "judges" / "scripted_judge.py"


def _cmd(*args: str) -> str:
    return "cmd:" + " ".join([sys.executable, str(JUDGE), *args])


@pytest.mark.parametrize(
    ("specs", "repeat"),
    [
        ([_cmd("score", "4", "0.001"), _cmd("score", "1")], 2),  # an ensemble, each judge asked twice
        ([_cmd("score", "4"), _cmd("fail")], 1),  # an ensemble with a failing member
        ([_cmd("plain", "3")], 2),  # one judge, asked twice
        ([_cmd("fail")], 1),  # one judge, failing: errors and the item's error
    ],
)
def test_a_judge_block_as_the_judge_builds_it_reads_back_to_what_it_wrote(specs, repeat):
    block = run(graded(make_judge(specs, retries=0, repeat=repeat), sample(rubric="r", dimensions={"clarity": "clear", "depth": "deep"})))
    record = JudgeBlock.read(block)
    assert record is not None
    assert json.dumps(record.to_json()) == json.dumps(block)  # every field, in the order written
    if len(specs) > 1:
        assert record.members == {m["judge"]: m["score"] for m in block["judges"]}
        assert record.rubric is not None
        assert record.rubric.judges is not None
        assert len(record.rubric.judges) == 2
    if repeat > 1 and record.rubric is not None and record.rubric.score is not None:
        assert record.rubric.samples is not None or record.rubric.judges is not None


def test_a_judge_blocks_bad_field_is_named():
    with pytest.raises(Exception, match=r"results\[0\].judge.rubric.samples\[1\]: expected a number or null"):
        JudgeBlock.read({"score": 3, "rubric": {"score": 3, "samples": [3, "x"]}}, "report", "results[0].judge")
    with pytest.raises(Exception, match=r"judge: judges\[0\].score: expected a number or null"):
        JudgeBlock.read({"score": 3, "judges": [{"judge": "a", "score": "high"}]})
