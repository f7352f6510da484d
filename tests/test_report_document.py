"""The typed report (omk/report/document.py): every report of the corpus reads into it with the
values report.json holds; older reports without later fields read with their defaults; a report
edited into a shape omk never writes is one InputError naming the file and the field."""

from __future__ import annotations

import json

import pytest
from report_corpus import CORPUS

from omk.core.errors import InputError
from omk.records.document import ReportDocument, read_document

FOLDERS = sorted(p for p in CORPUS.iterdir() if (p / "report.json").is_file())


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_every_corpus_report_reads_with_its_values(folder):
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    doc = read_document(folder)
    assert doc.whole() == data
    assert doc.run_id == data["run_id"]
    assert doc.target.spec == data["target"]["spec"]
    assert doc.summary.threshold == data["summary"]["threshold"]
    assert doc.summary.passed == data["summary"]["passed"]
    assert [r.sample_id for r in doc.results] == [r["sample_id"] for r in data["results"]]
    for r, raw in zip(doc.results, data["results"], strict=True):
        assert (r.status, r.passed, r.output, r.repeat) == (raw["status"], raw["passed"], raw["output"], raw.get("repeat", 0))
        assert r.scores.composite == raw["scores"]["composite"]
        assert type(r.scores.composite) is type(raw["scores"]["composite"])
        assert [a.type for a in r.assertions] == [a["type"] for a in raw["assertions"]]
        assert len(r.turns) == len(raw.get("turns") or [])
        assert len(r.trace.tool_calls) == len(raw["trace"]["tool_calls"])
        if raw["judge"]:
            assert r.judge is not None
            assert r.judge.score == raw["judge"]["score"]
    if "experiment" in data:
        exp = doc.experiment
        assert [v.name for v in exp.variants] == [v["name"] for v in data["experiment"]["variants"]]
        assert exp.verdict.level == data["experiment"]["verdict"]["level"]
        assert set(exp.runs) == set(data["experiment"].get("runs") or {})
    assert len(doc.pairs) == (len(data.get("experiment", {}).get("pairwise", {}).get("pairs", [])) or int("pairwise" in data))


def test_a_report_of_an_older_omk_reads_with_defaults():
    doc = ReportDocument.from_dict({"format": "omk-report/1", "summary": {"threshold": 3.5}, "results": [{"sample_id": "a", "status": "ok"}]})
    r = doc.results[0]
    assert (r.repeat, r.passed, r.turns, r.assertions, r.judge, r.trace.tool_calls) == (0, False, (), (), None, ())
    assert (doc.summary.repeat, doc.summary.categories, doc.experiment, doc.pairs, doc.judge_models) == (1, (), None, (), None)


def _report(**edit):
    data = json.loads((CORPUS / "factory" / "report.json").read_text(encoding="utf-8"))
    for path, value in edit.items():
        node = data
        *parents, last = path.split("__")
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value
    return data


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        ({"results__0__scores__fact": "high"}, "results[0].scores.fact: expected a number or null, found 'high'"),
        ({"results__1__assertions__0__children": 7}, "results[1].assertions[0].children: expected a list or null, found int"),
        ({"results__0__trace__tool_calls": [3]}, "results[0].trace.tool_calls[0]: expected an object, found int"),
        ({"results__2__sample_id": None}, "results[2].sample_id: expected a string"),
        ({"summary__categories": {"a": 1}}, "summary.categories: expected a list or null, found an object"),
        ({"results__0__passed": "yes"}, "results[0].passed: expected true, false or null"),
        ({"judge": "gpt"}, "judge: expected an object or null"),
        ({"pairwise": {"verdicts": [{"sample_id": 3}]}}, "pairwise.verdicts[0].sample_id: expected a string or null, found int"),
    ],
)
def test_a_hand_edited_report_names_the_file_and_the_field(tmp_path, edit, where):
    (tmp_path / "report.json").write_text(json.dumps(_report(**edit)), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_document(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'report.json'}: {where}") and "\n" not in message, message


@pytest.mark.parametrize(
    ("text", "says"),
    [("[]", "format: expected 'omk-report/1', found 'list'"), ('{"format": "omk-report/1"}', "results/summary: missing"), ("{", ":1: not valid JSON")],
)
def test_what_is_not_a_report_says_so(tmp_path, text, says):
    (tmp_path / "report.json").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_document(tmp_path / "report.json")
