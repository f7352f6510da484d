"""M365 Agents Toolkit eval documents: detection, evaluator resolution, errors with lines,
discovery order, inline prompts and `omk migrate`."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.core.errors import InputError
from omk.loader import load_samples
from omk.loader.discover import discover
from omk.loader.formats.detect import BIGSKY, M365, OMK, detect
from omk.loader.formats.inline import inline_samples
from omk.loader.formats.migrate import migrate

SEED_FULL = {
    "schemaVersion": "1.2.0",
    "default_evaluators": {"Relevance": {}, "Coherence": {}},
    "items": [
        {
            "prompt": "What is Microsoft Graph?",
            "expected_response": "A unified API endpoint for Microsoft services.",
            "evaluators": {"Citations": {"citation_format": "mixed"}},
            "evaluators_mode": "extend",
        },
        {
            "name": "Expense policy flow",
            "turns": [
                {"prompt": "I spent $250 on dinner. Is that okay?", "expected_response": "The per-diem meal allowance is $200."},
                {
                    "prompt": "What should I do about the overage?",
                    "expected_response": "Request manager approval.",
                    "evaluators": {"ExactMatch": {"case_sensitive": False}},
                    "evaluators_mode": "replace",
                },
            ],
        },
    ],
}


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def types(specs) -> list[str]:
    return [s.type for s in specs]


def problems(path: Path) -> list[str]:
    with pytest.raises(InputError) as info:
        load_samples([path])
    return info.value.lines()


# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, shape",
    [
        ({"schemaVersion": "1.0.0", "items": []}, M365),
        ({"items": [{"prompt": "p"}]}, M365),
        ([{"prompt": "p", "expected_response": "e"}], M365),
        ([{"prompt": "Tell me about returns"}], M365),  # seed 000: expected_response is optional
        ([{"prompt": "p", "testId": "X-1", "category": "kb"}], M365),
        ([{"prompt": "p", "expected_respons": "x"}], M365),  # a typo of an M365 key stays M365
        ([{"turns": [{"prompt": "a"}, {"prompt": "b"}]}], M365),
        # an omk sample that forgot its sample_id stays omk (and is told so): a key only omk has,
        # a misspelling of one, an `x-` key, or omk checks on a turn
        ([{"prompt": "p", "assertions": [{"type": "contains", "value": "x"}]}], OMK),
        ([{"prompt": "p", "rubric": "r"}], OMK),
        ([{"prompt": "p", "sampel_id": "a"}], OMK),
        ([{"prompt": "p", "x-owner": "ana"}], OMK),
        ([{"turns": [{"prompt": "a", "assertions": []}]}], OMK),
        ([{"prompt": "p"}, {"sample_id": "b", "prompt": "q"}], OMK),
        ([{"prmpt": "p"}], OMK),  # no prompt at all: omk's message
        ([{"prompt": "p"}, "q"], OMK),
        ([{"sample_id": "a", "prompt": "p", "expected_response": "e"}], OMK),
        ([{"prompt": "p", "expected_response": "e", "assertions": []}], OMK),
        ({"samples": []}, OMK),
        ({"name": "x", "data": []}, BIGSKY),
        ([], OMK),
    ],
)
def test_detect_by_shape(data, shape):
    assert detect(data, Path("x.json")) == shape


def test_a_legacy_shaped_yaml_list_is_omk():
    assert detect([{"prompt": "p", "expected_response": "e"}], Path("x.yaml")) == OMK
    assert detect([{"prompt": "p"}], Path("x.jsonl")) == OMK


def test_omk_only_keys_follow_the_sample_schema():
    from omk.loader.formats.detect import M365_ITEM_KEYS, omk_only_keys
    from omk.schema.parts import sample_properties

    sample_keys, turn_keys = omk_only_keys()
    assert {"sample_id", "assertions", "rubric", "mocks"} <= sample_keys
    assert {"assertions", "rubric"} <= turn_keys
    assert sample_keys == set(sample_properties()) - M365_ITEM_KEYS


@pytest.mark.parametrize(
    "data, expected",
    [
        ([{"prompt": "Tell me about returns"}], None),
        ([{"prompt": "p", "testId": "X-1", "category": "kb"}], None),
        ([{"prompt": "p", "expected_respons": "x"}], 'items[0] expected_respons: unknown field (did you mean "expected_response"?)'),
        ([{"prompt": "p", "assertions": [{"type": "contains", "value": "x"}]}], 'samples[0]: "sample_id" is required'),
    ],
)
def test_a_legacy_array_without_expected_response_loads_as_m365(tmp_path, data, expected):
    path = write(tmp_path, "prompts.json", data)
    if expected is None:
        (sample,) = load_samples([path]).samples
        assert sample.source_format == "m365"
        assert types(sample.assertions) == ["relevance", "coherence"]
        assert migrate(path, NOW).changed  # `omk migrate` and `omk eval` agree on what a legacy array is
    else:
        (line,) = problems(path)
        assert line.startswith(f"{path}:")
        assert line.endswith(f": {expected}")


# --- the seed's examples -------------------------------------------------------------------------


def test_seed_full_example(tmp_path):
    loaded = load_samples([write(tmp_path, "evals.json", SEED_FULL)])
    single, thread = loaded.samples
    assert single.sample_id == "evals-1"
    assert single.source_format == "m365"
    assert types(single.assertions) == ["relevance", "coherence", "citations"]  # extend: defaults + the item's
    assert single.assertions[2].raw == {"type": "citations", "citation_format": "mixed"}
    assert single.context is None
    assert single.turns == ()
    assert thread.sample_id == "Expense policy flow"  # a name stands in for the missing testId
    assert thread.prompt == "I spent $250 on dinner. Is that okay?"
    assert thread.assertions == []
    first, second = thread.turns
    assert types(first.assertions) == ["relevance", "coherence"]  # the turn inherits the defaults
    assert first.assertions[0].raw["query"] == first.prompt
    assert types(second.assertions) == ["exact_match"]  # replace drops them
    assert second.assertions[0].raw == {"type": "exact_match", "case_sensitive": False, "value": "Request manager approval."}
    assert second.expected == "Request manager approval."
    assert second.source.line is not None
    assert single.source.file.endswith("evals.json")
    assert single.source.line == 8


def test_sequential_items_with_labels_schema_1_0_0(tmp_path):
    doc = {
        "schemaVersion": "1.0.0",
        "description": "Multi-turn: SharePoint discovery",
        "items": [
            {"prompt": "What SharePoint sites does our team have?", "expected_response": "3 sites", "testId": "MT-001", "category": "multi-turn"},
            {"prompt": "谁可以访问 Project Central？", "expected_response": "15 人", "testId": "MT-002", "category": "多轮", "notes": "bug #456"},
        ],
    }
    a, b = load_samples([write(tmp_path, "tests.json", doc)]).samples
    assert (a.sample_id, a.category, b.sample_id, b.category) == ("MT-001", "multi-turn", "MT-002", "多轮")
    assert types(a.assertions) == ["relevance", "coherence"]  # no default_evaluators: the system defaults
    assert b.raw["notes"] == "bug #456"
    assert a.turns == ()


def test_a_1_0_0_document_may_use_fields_of_later_schemas(tmp_path):
    doc = {
        "schemaVersion": "1.0.0",  # turns came in 1.2.0, default_evaluators in 1.1/1.2: runevals upgrades on load
        "default_evaluators": {"Coherence": {}},
        "items": [
            {"prompt": "p", "expected_response": "e", "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"},
            {"testId": "T", "turns": [{"prompt": "a"}, {"prompt": "b", "evaluators": {"Relevance": {"threshold": 4}}}]},
        ],
    }
    single, thread = load_samples([write(tmp_path, "old.json", doc)]).samples
    assert types(single.assertions) == ["exact_match"]
    assert [types(t.assertions) for t in thread.turns] == [["coherence"], ["coherence", "relevance"]]


def test_legacy_bare_array_is_read_as_is(tmp_path):
    path = write(tmp_path, "prompts.json", [{"prompt": "What is Teams?", "expected_response": "A collaboration platform"}])
    before = path.read_bytes()
    (sample,) = load_samples([path]).samples
    assert sample.sample_id == "prompts-1"
    assert types(sample.assertions) == ["relevance", "coherence"]
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]  # eval never rewrites


def test_extend_lets_the_item_options_win_and_keeps_order(tmp_path):
    doc = {
        "schemaVersion": "1.2.0",
        "default_evaluators": {"PartialMatch": {"threshold": 0.5}, "Coherence": {}},
        "items": [
            {"prompt": "p", "expected_response": "e", "evaluators": {"PartialMatch": {"threshold": 0.8}, "ExactMatch": {}}},
            {"prompt": "q", "expected_response": "e", "evaluators": {}, "evaluators_mode": "replace"},
            {"prompt": "r", "expected_response": "e", "context": "ctx", "evaluators": {"Groundedness": {"threshold": 4}, "Similarity": {}}},
        ],
    }
    a, b, c = load_samples([write(tmp_path, "evals.json", doc)]).samples
    assert types(a.assertions) == ["partial_match", "coherence", "exact_match"]
    assert a.assertions[0].raw == {"type": "partial_match", "threshold": 0.8, "reference": "e"}
    assert b.assertions == []  # replace with nothing: nothing runs
    assert c.assertions[2].raw == {"type": "groundedness", "threshold": 4, "context": "ctx"}
    assert c.assertions[3].raw == {"type": "similarity", "reference": "e"}


def test_empty_default_evaluators_means_none(tmp_path):
    doc = {"schemaVersion": "1.2.0", "default_evaluators": {}, "items": [{"prompt": "p"}]}
    assert load_samples([write(tmp_path, "evals.json", doc)]).samples[0].assertions == []


def test_output_fields_of_a_results_file_are_ignored(tmp_path):
    doc = {
        "schemaVersion": "1.4.0",
        "metadata": {"agentName": "x"},
        "items": [{"prompt": "p", "response": "r", "scores": {"relevance": {"score": 4}}, "status": "pass"}],
    }
    assert load_samples([write(tmp_path, "evals.json", doc)]).samples[0].prompt == "p"


def test_ids_stay_unique_across_files(tmp_path):
    write(tmp_path, "a/evals.json", [{"prompt": "p", "expected_response": "e"}])
    write(tmp_path, "b/evals.json", [{"prompt": "q", "expected_response": "e"}])
    loaded = load_samples([tmp_path / "a" / "evals.json", tmp_path / "b" / "evals.json"])
    assert [s.sample_id for s in loaded.samples] == ["evals-1", "evals-1-2"]


# --- problems, one line each ------------------------------------------------------------------


def test_telemetry_evaluators_load_and_the_others_run(tmp_path):
    """RetrievalQuery, RetrievalResult, ToolCallSelection and ToolCallExecution read Copilot
    telemetry no omk target reports: the file loads, they are reported as not applicable with the
    reason, and the item's other evaluators score it."""
    import os

    doc = {
        "schemaVersion": "1.2.0",
        "default_evaluators": {"ExactMatch": {}, "RetrievalQuery": {"capability": "x", "selector": "y"}},
        "items": [
            {"prompt": "Refund window?", "expected_response": "30 days", "testId": "r1",
             "evaluators": {"RetrievalResult": {}, "ToolCallSelection": {}, "ToolCallExecution": {}}, "evaluators_mode": "extend"},
        ],
    }  # fmt: skip
    path = write(tmp_path, "evals.json", doc)
    (sample,) = load_samples([path]).samples
    assert [a.type for a in sample.assertions] == ["exact_match", "m365_telemetry", "m365_telemetry", "m365_telemetry", "m365_telemetry"]
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "r1", "output": "Within 30 days."}) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMK_")}
    proc = run_omk(
        "eval", "evals.json", "--target", "replay:r.jsonl", "--no-judge", "--out", "run",
        cwd=tmp_path, base=env, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "judge item" not in proc.stdout  # not applicable is not a judge item waiting for a judge
    (result,) = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"]
    assert result["passed"] is True
    assert result["scores"]["fact"] == 5.0
    assert result["scores"]["behavior"] is None
    telemetry = result["assertions"][1:]
    assert [a["status"] for a in telemetry] == ["skipped"] * 4
    assert telemetry[0]["message"] == (
        "not applicable: RetrievalQuery reads Microsoft 365 Copilot telemetry (retrieval or tool-call diagnostics) "
        "that no omk target reports; runevals runs it"
    )
    assert {a["message"].split()[2] for a in telemetry} == {"RetrievalQuery", "RetrievalResult", "ToolCallSelection", "ToolCallExecution"}


def test_every_problem_is_reported_with_its_line(tmp_path):
    text = """{"schemaVersion": "1.2.0",
 "default_evaluators": {"Relevance": {"threshold": 7}, "Similarity": {}},
 "items": [
  {"prompt": "a", "expeceted_response": "x", "testId": "T1"},
  {"prompt": "", "evaluators": {"relevance": {}, "RetrievalQuery": {"capability": "x", "selector": "y"}}, "evaluators_mode": "both"},
  {"turns": [{"prompt": "hi", "evaluators": {"Citations": {"threshold": 0, "citation_format": "apa"}}}], "prompt": "x"},
  {"prompt": "g", "expected_response": "e", "evaluators": {"Groundedness": {}, "ExactMatch": {"mode": "fuzzy", "case": true}}}
 ]}
"""
    lines = problems(write(tmp_path, "bad.json", text))
    assert lines[0].endswith("bad.json:2: default_evaluators.Relevance.threshold: must be a number from 1 to 5 (got number 7)")
    joined = "\n".join(lines)
    assert ':4: items[0] (T1) expeceted_response: unknown field (did you mean "expected_response"?)' in joined
    assert ':5: items[1] prompt: must be a non-empty string (got string "")' in joined
    assert ':5: items[1] evaluators.relevance: unknown evaluator "relevance" (did you mean "Relevance"?)' in joined
    assert "RetrievalQuery" not in joined  # a telemetry evaluator loads; it is reported as not applicable
    assert ':5: items[1] evaluators_mode: must be "extend" or "replace"' in joined
    assert ':6: items[2] prompt: unknown field (a conversation has "turns"' in joined
    assert ":6: items[2] turns[0].evaluators.Citations.threshold: must be a whole number of at least 1" in joined
    assert ':6: items[2] turns[0].evaluators.Citations.citation_format: must be "oai_unicode", "bracket", "markdown", "inline" or "mixed"' in joined
    assert ":7: items[3] evaluators.ExactMatch.mode: must be \"contains\" or \"equals\"" in joined
    assert ":7: items[3] evaluators.ExactMatch.case: unknown option for ExactMatch (did you mean \"case_sensitive\"?)" in joined
    assert "Traceback" not in joined


@pytest.mark.parametrize(
    "doc, expected",
    [
        ({"schemaVersion": "2.0.0", "items": [{"prompt": "p"}]}, 'schemaVersion: "2.0.0" is not supported'),
        ({"schemaVersion": "1.2.0", "items": []}, "items: must be a non-empty list of items (got an empty list)"),
        ({"schemaVersion": "1.2.0"}, 'missing "items"'),
        ({"items": [{"prompt": "p", "evaluators": {"Similarity": {}}}]}, "items[0] expected_response: missing: Similarity (from evaluators) compares"),
        (
            {"default_evaluators": {"PartialMatch": {}}, "items": [{"prompt": "p"}]},
            "items[0] expected_response: missing: PartialMatch (from default_evaluators)",
        ),
        ({"items": [{"turns": [{"prompt": "p"}] * 21}]}, "items[0] turns: has 21 turns; an M365 conversation has at most 20"),
        ({"items": [{"turns": []}]}, "items[0] turns: must be a non-empty list of turns (got an empty list)"),
        ({"items": [{"prompt": "p", "evaluators": {"Custom_Tone": {"threshold": 3}}}]}, 'unknown evaluator "Custom_Tone"'),
        ({"items": [{"prompt": "p", "evaluators": {"PartialMatch": {"threshold": 1.5}}}], "x": 1}, "must be a number from 0 to 1"),
        ({"items": ["just a prompt"]}, 'items[0]: each item must be an object with a prompt (got string "just a prompt")'),
        ({"items": [{"prompt": "p", "category": 3}]}, "items[0] category: must be a string (got number 3)"),
    ],
)
def test_document_problems(tmp_path, doc, expected):
    assert any(expected in line for line in problems(write(tmp_path, "evals.json", doc))), expected


def test_duplicate_test_id_points_at_the_first(tmp_path):
    write(tmp_path, "a.json", {"items": [{"prompt": "p", "testId": "REG-1"}]})
    write(tmp_path, "b.json", {"items": [{"prompt": "q", "testId": "REG-1"}]})
    with pytest.raises(InputError) as info:
        load_samples([tmp_path])
    (line,) = info.value.lines()
    assert "b.json:5: items[0] (REG-1) testId: duplicate id \"REG-1\" (first defined at " in line
    assert "a.json:5)" in line


def test_a_javascript_dataset_is_refused_with_a_hint(tmp_path):
    (line,) = problems(write(tmp_path, "dataset.js", "export default {name: 'x', data: []}"))
    assert "cannot be read by omk; export it to JSON first" in line
    assert "dataset.json" in line


# --- discovery ----------------------------------------------------------------------------------


def test_discovery_order(tmp_path):
    legacy = [{"prompt": "p", "expected_response": "e"}]
    write(tmp_path, "evals/tests.json", legacy)
    assert discover(tmp_path) == [tmp_path / "evals" / "tests.json"]
    write(tmp_path, "evals/prompts.json", legacy)
    assert discover(tmp_path) == [tmp_path / "evals" / "prompts.json"]
    write(tmp_path, "tests.json", legacy)
    assert discover(tmp_path) == [tmp_path / "tests.json"]  # ./ before ./evals/
    write(tmp_path, "evals.json", legacy)
    assert discover(tmp_path) == [tmp_path / "evals.json"]
    write(tmp_path, "prompts.json", legacy)
    assert discover(tmp_path) == [tmp_path / "prompts.json"]
    write(tmp_path, "evals/eval-samples.yaml", "- sample_id: a\n  prompt: p\n")
    assert discover(tmp_path) == [tmp_path / "evals" / "eval-samples.yaml"]  # omk's own names come first


# --- inline prompts -----------------------------------------------------------------------------


def test_inline_prompts_pair_by_position(tmp_path):
    a, b = inline_samples(["What is Teams?", "什么是 SharePoint？"], ["A platform", "内容管理"], "PartialMatch,ExactMatch", tmp_path)
    assert (a.sample_id, b.sample_id) == ("prompt-1", "prompt-2")
    assert b.assertions[0].raw == {"type": "partial_match", "reference": "内容管理"}
    assert types(a.assertions) == ["partial_match", "exact_match"]
    (c,) = inline_samples(["Hi"], None, None, tmp_path)
    assert types(c.assertions) == ["relevance", "coherence"]


@pytest.mark.parametrize(
    "prompts, expected, evaluators, message",
    [
        (["a", "b"], ["x"], None, "--expected: 1 expected answer(s) for 2 prompt(s)"),
        (["a"], None, "PartialMatch", "--prompts[0] --expected: missing: PartialMatch (from --evaluators) compares the response with it"),
        (["a"], None, "Similarity", "--prompts[0] --expected: missing: Similarity (from --evaluators)"),
        (["a"], None, "Relevence", '--evaluators Relevence: unknown evaluator "Relevence" (did you mean "Relevance"?)'),
        ([" "], None, None, "--prompts[0]: must be a non-empty string"),
    ],
)
def test_inline_problems(tmp_path, prompts, expected, evaluators, message):
    with pytest.raises(InputError) as info:
        inline_samples(prompts, expected, evaluators, tmp_path)
    assert any(line.startswith(message) for line in info.value.lines()), info.value.lines()


# --- migrate ------------------------------------------------------------------------------------

NOW = datetime(2026, 2, 5, 14, 30, 52)


def test_migrate_legacy_array_writes_a_backup_first(tmp_path):
    original = '[\n  {"prompt": "什么是 Teams？", "expected_response": "协作平台"}\n]\n'
    path = write(tmp_path, "prompts.json", original)
    done = migrate(path, NOW)
    assert done.changed
    assert done.backup == tmp_path / "prompts.json.bak.20260205143052"
    assert done.backup.read_text(encoding="utf-8") == original
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"schemaVersion": "1.2.0", "items": [{"prompt": "什么是 Teams？", "expected_response": "协作平台"}]}
    assert "什么是" in path.read_text(encoding="utf-8")  # not \\u-escaped
    assert load_samples([path]).samples[0].sample_id == "prompts-1"
    second = migrate(path, NOW)
    assert not second.changed
    assert "already schema 1.2.0" in second.message
    again = write(tmp_path, "prompts.json", original)
    assert migrate(again, NOW).backup == tmp_path / "prompts.json.bak.20260205143052-1"  # never overwrites a backup


def test_migrate_raises_an_older_version_in_place_without_a_backup(tmp_path):
    text = '{\n    "schemaVersion" :  "1.0.0",\n    "items": [ {"prompt": "p"} ]\n}\n'
    path = write(tmp_path, "evals.json", text)
    done = migrate(path, NOW)
    assert done.changed
    assert done.backup is None
    assert path.read_text(encoding="utf-8") == text.replace("1.0.0", "1.2.0")  # nothing else moved


def test_migrate_adds_a_missing_version(tmp_path):
    path = write(tmp_path, "evals.json", {"description": "d", "items": [{"prompt": "p"}]})
    done = migrate(path, NOW)
    assert done.backup is not None
    assert list(json.loads(path.read_text(encoding="utf-8"))) == ["schemaVersion", "description", "items"]


def test_migrate_refuses_bad_or_foreign_files_and_touches_nothing(tmp_path):
    bad = write(tmp_path, "prompts.json", '[{"prompt": "", "expected_response": "e"}]')
    with pytest.raises(InputError) as info:
        migrate(bad, NOW)
    assert "items[0] prompt: must be a non-empty string" in info.value.lines()[0]
    omk = write(tmp_path, "eval-samples.json", [{"sample_id": "a", "prompt": "p"}])
    done = migrate(omk, NOW)
    assert not done.changed
    assert "already an omk samples file (JSON); nothing to migrate" in done.message
    broken = write(tmp_path, "tests.json", '[{"prompt": "p",]')
    with pytest.raises(InputError, match="tests.json:1: JSON parse error"):
        migrate(broken, NOW)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval-samples.json", "prompts.json", "tests.json"]
