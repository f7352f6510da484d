"""Files shaped like real third-party eval files load (or fail with one located line saying why)."""

from __future__ import annotations

import json

import pytest
from cli_support import run_omk
from loader_helpers import load, problems

from omk.loader.formats.detect import OMK, detect


def test_an_omk_schema_version_is_accepted(tmp_path):
    text = """
    schemaVersion: "omk.eval-sample-set/v1"
    samples:
      - {sample_id: a, prompt: hi}
    """
    assert [s.sample_id for s in load(tmp_path, "s.yaml", text).samples] == ["a"]
    data = {"schemaVersion": "omk.eval-sample-set/v1", "samples": [{"sample_id": "a", "prompt": "hi"}]}
    assert [s.sample_id for s in load(tmp_path, "s.json", json.dumps(data)).samples] == ["a"]


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ('"omk.eval-sample-set/v2"', '"omk.eval-sample-set/v2" is a newer sample-set format than this omk reads'),
        ('"1.2.0"', '"1.2.0" is an M365 eval document version, but the file has "samples"'),
        ("7", "7 is not a version omk knows"),
    ],
)
def test_an_unknown_schema_version_names_the_versions_omk_reads(tmp_path, version, says):
    found = problems(tmp_path, "s.yaml", f"samples:\n  - {{sample_id: a, prompt: hi}}\nschemaVersion: {version}\n")
    assert len(found) == 1
    assert found[0].startswith(f"s.yaml:3: schemaVersion: {says}")
    assert 'reads "omk.eval-sample-set/v1" (omk samples) and M365 eval documents of schema 1.x' in found[0]


def test_an_omk_version_without_samples_is_still_read_as_omk(tmp_path):
    assert detect({"schemaVersion": "omk.eval-sample-set/v2", "items": []}) == OMK
    found = problems(tmp_path, "s.json", '{"schemaVersion": "omk.eval-sample-set/v2", "items": []}')
    assert found[0].startswith('s.json:1: schemaVersion: "omk.eval-sample-set/v2" is a newer sample-set format')


LEGACY_PAIRS = """{
  "prompts": [
    "What is the return policy?",
    "如何退货？"
  ],
  "expected_responses": [
    "Returns are accepted within 30 days.",
    "30 天内可以退货。"
  ]
}
"""


def test_m365_legacy_prompt_and_expected_lists_load_paired_by_position(tmp_path):
    samples = load(tmp_path, "evals.json", LEGACY_PAIRS).samples
    assert [(s.sample_id, s.prompt, s.raw.get("expected_response")) for s in samples] == [
        ("evals-1", "What is the return policy?", "Returns are accepted within 30 days."),
        ("evals-2", "如何退货？", "30 天内可以退货。"),
    ]
    assert [[a.type for a in s.assertions] for s in samples] == [["relevance", "coherence"]] * 2
    assert samples[1].source.line == 4
    assert samples[1].source.path == "prompts[1]"


def test_m365_legacy_lists_of_different_lengths_are_a_located_error(tmp_path):
    text = '{\n  "prompts": ["a", "b", "c"],\n  "expected_responses": ["x", "y"]\n}\n'
    assert problems(tmp_path, "evals.json", text) == [
        "evals.json:3: expected_responses: has 2 entries but prompts has 3; the lists pair by position, so they must be the same length"
    ]
    text = '{\n  "prompts": ["a", 5],\n  "expected_responses": ["x", ["y"]]\n}\n'
    assert problems(tmp_path, "evals.json", text) == [
        "evals.json:2: prompts[1]: must be a non-empty string (got number 5)",
        "evals.json:3: expected_responses[1]: must be a string (got a list)",
    ]


def test_omk_migrate_upgrades_legacy_lists_as_runevals_does(tmp_path):
    from datetime import datetime

    from omk.loader.formats.migrate import migrate

    path = tmp_path / "evals.json"
    path.write_text(LEGACY_PAIRS, encoding="utf-8")
    done = migrate(path, datetime(2026, 2, 5, 14, 30, 52))
    assert done.changed
    assert done.backup == tmp_path / "evals.json.bak.20260205143052"
    assert done.backup.read_text(encoding="utf-8") == LEGACY_PAIRS
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "schemaVersion": "1.2.0",
        "items": [
            {"prompt": "What is the return policy?", "expected_response": "Returns are accepted within 30 days."},
            {"prompt": "如何退货？", "expected_response": "30 天内可以退货。"},
        ],
    }


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("eval-samples.yaml", "samples:\n  - {sample_id: a, prompt: hi}\n", "YAML"),
        ("eval-samples.yml", "- sample_id: a\n  prompt: hi\n", "YAML"),
        ("eval-samples.jsonl", '{"sample_id": "a", "prompt": "hi"}\n', "JSON Lines"),
    ],
)
def test_omk_migrate_on_an_omk_file_says_it_is_one(tmp_path, name, text, kind):

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    proc = run_omk("migrate", name, cwd=tmp_path, drop=(), columns=None, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{name}: already an omk samples file ({kind}); nothing to migrate (omk doctor {name} checks it)"
    assert "parse error" not in proc.stdout + proc.stderr
    assert path.read_text(encoding="utf-8") == text
    assert len(list(tmp_path.iterdir())) == 1


def test_m365_groundedness_on_items_without_context_is_skipped_visibly_not_refused(tmp_path):
    """Microsoft's own datasets list Groundedness in default_evaluators while some items carry no
    context: the file loads, the metric is skipped on those items with a reason, the rest score."""
    import omk
    from omk.samples.model import Status

    doc = {
        "schemaVersion": "1.2.0",
        "default_evaluators": {"Groundedness": {}, "Citations": {}},
        "items": [
            {"prompt": "What is the per-diem?", "context": "The per-diem is $200."},
            {"prompt": "Hello!"},
        ],
    }
    path = tmp_path / "evals.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    samples = omk.load(path)
    assert [[a.type for a in s.assertions] for s in samples] == [["groundedness", "citations"]] * 2
    replies = tmp_path / "r.jsonl"
    replies.write_text(
        '{"sample_id": "evals-1", "output": "It is $200 [1]."}\n{"sample_id": "evals-2", "output": "Hi [1]."}\n', encoding="utf-8"
    )
    from judge_support import score_json

    from omk.testing import ModelServer
    from omk.testing.openai_chat import text_reply

    with ModelServer.for_openai([text_reply(score_json(5, "supported"))]) as fake:
        report = omk.evaluate(samples, target=f"replay:{replies}", judge=f"openai:m@{fake.url}", cache=False)
        assert len(fake.requests) == 1  # only the item with a context is judged
    first, second = report.result("evals-1"), report.result("evals-2")
    assert first.assertions[0].status is Status.PASSED
    assert first.assertions[0].score == 5
    grounded = second.assertions[0]
    assert grounded.status is Status.SKIPPED
    assert grounded.passed is None
    assert grounded.message.startswith("skipped: no context to judge groundedness against")
    assert second.assertions[1].type == "citations"
    assert second.assertions[1].passed is True
    assert second.status == "ok"
    assert second.passed


def _m365(tmp_path, item: dict) -> list:
    import omk

    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"schemaVersion": "1.11.0", "items": [item]}), encoding="utf-8")
    return omk.load(path)


def test_m365_inline_citation_format_loads_and_counts_markers_in_the_text(tmp_path):
    from omk.assertions.m365 import find_citations

    (sample,) = _m365(tmp_path, {"prompt": "p", "evaluators": {"Citations": {"citation_format": "inline", "threshold": 2}}})
    assert sample.assertions[-1].raw == {"type": "citations", "citation_format": "inline", "threshold": 2}
    text = "See [1] and [2](https://a.example/x) but not 【4:0†source】."
    assert [c.text for c in find_citations(text, "inline")] == ["[1]", "[2](https://a.example/x)"]


@pytest.mark.parametrize(
    ("mode", "types"),
    [(None, ["tools_only"]), ("subset", ["tools_only"]), ("all", ["tools_called"]), ("exact", ["tools_only", "tools_called"])],
)
def test_m365_allowed_tools_map_onto_tool_assertions(tmp_path, mode, types):
    item = {"prompt": "p", "evaluators_mode": "replace", "evaluators": {}, "allowed_tools": ["Search", "Calendar"]}
    if mode:
        item["allowed_tools_mode"] = mode
    (sample,) = _m365(tmp_path, item)
    assert [(a.type, a.raw["values"]) for a in sample.assertions] == [(t, ["Search", "Calendar"]) for t in types]


def test_tools_only_fails_on_a_call_outside_the_list():
    from helpers import check

    from omk.records import ToolCall, Trace

    trace = Trace(tool_calls=[ToolCall(tool="search", input={}), ToolCall(tool="Delete", input={})])
    bad = check({"type": "tools_only", "values": ["Search"]}, "x", trace)
    assert bad.passed is False
    assert bad.message == "called outside the allowed tools (Search): Delete"
    assert check({"type": "tools_only", "values": ["Search"]}, "x", Trace()).passed is True


def test_m365_unsupported_fields_say_so_instead_of_an_unrelated_suggestion(tmp_path):
    doc = {"schemaVersion": "1.11.0", "items": [{"prompt": "p", "grounding_sources": ["x"]}]}
    found = problems(tmp_path, "evals.json", json.dumps(doc, indent=1))
    assert found == [
        'evals.json:6: items[0] grounding_sources: is not a field omk reads on an M365 item (a newer M365 schema\'s field omk '
        'does not support yet, or your own): remove it, or keep custom labels in "extensions"',
    ]
    mode = {"schemaVersion": "1.11.0", "items": [{"prompt": "p", "allowed_tools_mode": "fuzzy", "allowed_tools": ["A"]}]}
    assert problems(tmp_path, "evals.json", json.dumps(mode, indent=1)) == [
        'evals.json:6: items[0] allowed_tools_mode: must be "subset", "all" or "exact" (got string "fuzzy")'
    ]
    assert "did you mean" not in " ".join(found)
    typo = problems(tmp_path, "evals.json", json.dumps({"items": [{"prompt": "p", "expected_respons": "x"}]}))
    assert typo == ['evals.json:1: items[0] expected_respons: unknown field (did you mean "expected_response"?)']


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'samples:\n  - sample_id: a\n    prompt: "unclosed\n  - sample_id: b\n',
            "s.yaml:5: YAML parse error at column 1: found unexpected end of stream (while scanning a quoted scalar at line 3); "
            "hint: a quoted string is not closed: add its closing quote",
        ),
        (
            "samples:\n  - sample_id: a\n   prompt: x\n",
            "s.yaml:3: YAML parse error at column 4: did not find expected '-' indicator (while parsing a block collection at line 2); "
            "hint: the items of one list must start at the same column",
        ),
        (
            "samples:\n\t- sample_id: a\n",
            "s.yaml:2: YAML parse error at column 1: found character that cannot start any token (while scanning for the next token "
            "at line 2); hint: YAML indents with spaces, not tabs",
        ),
        (
            "samples:\n  - sample_id: a\n    prompt: Note: read this\n",
            "s.yaml:3: YAML parse error at column 17: mapping values are not allowed in this context; "
            'hint: a value that contains ": " must be quoted, e.g. prompt: "Note: read this"',
        ),
        (
            'samples:\n  - sample_id: a\n    prompt: "C:\\qtemp"\n',
            "s.yaml:3: YAML parse error at column 16: found unknown escape character (while parsing a quoted scalar at line 3); "
            'hint: in "double quotes" a backslash starts an escape: use \\\\ or single quotes',
        ),
    ],
)
def test_yaml_syntax_errors_are_one_line_with_line_column_and_hint(tmp_path, text, expected):
    (found,) = problems(tmp_path, "s.yaml", text)
    assert found == expected
    assert "\n" not in found
    assert "<unicode string>" not in found


def test_an_assert_set_in_an_unknown_mode_names_it_and_still_reports_its_children(tmp_path):
    text = """
    samples:
      - sample_id: a
        prompt: hi
        assertions:
          - type: assert-set
            mode: most
            children:
              - {type: contains}
              - {type: regex, pattern: "("}
              - type: assert-set
                children:
                  - {type: regex, pattern: "[", flags: i}
    """
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:6: samples[0] (a) assertions[0].mode: must be one of "any" or "all" (got "most")',
        's.yaml:8: samples[0] (a) assertions[0].children[0]: "value" is required for type "contains"',
        "s.yaml:9: samples[0] (a) assertions[0].children[1].pattern: invalid regular expression: missing ) at position 1",
        "s.yaml:12: samples[0] (a) assertions[0].children[2].children[0].pattern: invalid regular expression: "
        "unterminated character set at position 1",
    ]


def test_omk_doctor_shows_every_assertion_type_in_use(tmp_path):

    kinds = [
        "{type: contains, value: a}", "{type: not_contains, value: b}", "{type: equals, value: c}",
        "{type: starts_with, value: d}", "{type: ends_with, value: e}", "{type: regex, pattern: f}",
        "{type: min_length, value: 1}", "{type: max_length, value: 900}", "{type: word_count_min, value: 1}",
        "{type: word_count_max, value: 900}", "{type: json_valid}", "{type: contains_any, values: [g, h]}",
        "{type: tools_only, values: [Read]}",
    ]  # fmt: skip
    lines = ["samples:"] + [f"  - {{sample_id: s{i}, prompt: p, assertions: [{k}]}}" for i, k in enumerate(kinds)]
    (tmp_path / "s.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {"COLUMNS": "200", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    proc = run_omk("doctor", "s.yaml", cwd=tmp_path, base=env, drop=(), columns=None, timeout=60)
    for kind in ("contains", "not_contains", "json_valid", "contains_any", "tools_only", "word_count_max"):
        assert f" {kind} " in proc.stdout, kind
