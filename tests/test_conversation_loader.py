"""Conversations in the omk format: `turns: [{prompt, context?, assertions?, rubric?, dimensions?}]`."""

from __future__ import annotations

import json

import jsonschema
import pytest
from loader_helpers import load, one_problem, problems

from omk.core.errors import InputError
from omk.loader import load_samples
from omk.schema.build import SCHEMA_FILE


def test_a_conversation_loads_with_its_turns_and_their_sources(tmp_path):
    loaded = load(
        tmp_path,
        "s.yaml",
        """
        samples:
          - sample_id: c
            mocks:
              - {tool: lookup_order, return: {status: shipped}}
            assertions:
              - {type: not_contains, value: "as an AI"}
            rubric: polite
            turns:
              - prompt: Hi, my order is late.
              - prompt: It is A1001.
                context: order table
                rubric: names the carrier
                dimensions: {tone: calm}
                assertions:
                  - {type: mock_hit, value: "lookup_order:1"}
                  - {type: regex, pattern: "A\\\\d+"}
        """,
    )
    (sample,) = loaded.samples
    assert sample.prompt == "Hi, my order is late."  # the first turn's, for listings
    assert [t.prompt for t in sample.turns] == ["Hi, my order is late.", "It is A1001."]
    first, second = sample.turns
    assert first.assertions == []
    assert first.rubric is None
    assert first.context is None
    assert second.context == "order table"
    assert second.rubric == "names the carrier"
    assert second.dimensions == {"tone": "calm"}
    assert [a.type for a in second.assertions] == ["mock_hit", "regex"]
    assert second.assertions[1].compiled is not None  # prepared once at load, like the sample's own
    assert second.source.line == 10
    assert second.source.path == "samples[0].turns[1]"
    assert second.assertions[0].source.path == "samples[0].turns[1].assertions[0]"
    assert second.assertions[0].source.line == 15
    assert [a.type for a in sample.assertions] == ["not_contains"]
    assert sample.rubric == "polite"


def test_prompt_and_turns_exclude_each_other(tmp_path):
    text = """
    - sample_id: c
      prompt: hello
      turns: [{prompt: a}]
    """
    assert one_problem(tmp_path, text) == (
        's.yaml:2: samples[0] (c) prompt: a sample has either "prompt" or "turns", not both: '
        "move this prompt into the first turn"
    )


def test_neither_prompt_nor_turns_is_the_usual_missing_prompt(tmp_path):
    assert one_problem(tmp_path, "- sample_id: c\n") == 's.yaml:1: samples[0] (c): "prompt" is required'


def test_a_conversation_has_no_sample_wide_context(tmp_path):
    text = """
    - sample_id: c
      context: the policy
      turns: [{prompt: a}]
    """
    assert one_problem(tmp_path, text) == (
        's.yaml:2: samples[0] (c) context: a conversation takes its context per turn: '
        'move "context" into the turn it belongs to'
    )


def test_turns_must_be_a_non_empty_list_of_turns(tmp_path):
    assert one_problem(tmp_path, "- {sample_id: c, turns: []}\n") == "s.yaml:1: samples[0] (c) turns: must not be empty"
    assert one_problem(tmp_path, "- {sample_id: c, turns: hi}\n") == (
        's.yaml:1: samples[0] (c) turns: must be a list (got string "hi")'
    )
    assert one_problem(tmp_path, "- {sample_id: c, turns: [hi]}\n") == (
        's.yaml:1: samples[0] (c) turns[0]: must be a mapping (got string "hi")'
    )


def test_each_turn_needs_a_non_blank_prompt(tmp_path):
    text = """
    - sample_id: c
      turns:
        - prompt: fine
        - context: no prompt here
        - prompt: "  "
    """
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:4: samples[0] (c) turns[1]: "prompt" is required',
        "s.yaml:5: samples[0] (c) turns[2].prompt: must not be empty or blank",
    ]


def test_unknown_turn_field_names_the_near_one(tmp_path):
    text = """
    - sample_id: c
      turns:
        - prompt: a
          asertions: []
    """
    loaded = load(tmp_path, "s.yaml", text)
    assert [w.render().replace(f"{tmp_path}/", "") for w in loaded.warnings] == [
        's.yaml:4: samples[0] (c) turns[0].asertions: unknown field "asertions" (did you mean "assertions"?); ignored'
    ]
    path = tmp_path / "s.yaml"
    with pytest.raises(InputError) as info:
        load_samples([path], strict=True)
    assert [line.replace(f"{tmp_path}/", "") for line in info.value.lines()] == [
        's.yaml:4: samples[0] (c) turns[0].asertions: unknown field "asertions" (did you mean "assertions"?)'
    ]


def test_turn_extension_keys_are_allowed(tmp_path):
    loaded = load(tmp_path, "s.yaml", "- sample_id: c\n  turns:\n    - {prompt: a, x-note: why}\n")
    assert loaded.samples[0].turns[0].raw["x-note"] == "why"


def test_bad_turn_assertions_are_each_reported_with_their_path(tmp_path):
    text = """
    - sample_id: c
      turns:
        - prompt: a
          assertions:
            - {type: containz, value: x}
            - {type: contains}
            - {type: regex, pattern: "(open"}
        - prompt: b
          assertions:
            - {type: mock_hit, value: "Read:1"}
            - {type: contains, value: ok, weight: 0}
    """
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:5: samples[0] (c) turns[0].assertions[0].type: unknown assertion type "containz" (did you mean "contains"?)',
        's.yaml:6: samples[0] (c) turns[0].assertions[1]: "value" is required for type "contains"',
        "s.yaml:7: samples[0] (c) turns[0].assertions[2].pattern: invalid regular expression: missing ) at position 5",
        's.yaml:10: samples[0] (c) turns[1].assertions[0].value: references missing mock "Read:1"; available mock keys: (none)',
        "s.yaml:11: samples[0] (c) turns[1].assertions[1].weight: must be > 0 (got 0)",
    ]


def test_a_bad_regex_in_a_turn_shows_up_beside_other_problems(tmp_path):
    text = """
    - sample_id: c
      difficulty: extreme
      turns:
        - prompt: a
          assertions:
            - {type: regex, pattern: "(open"}
    """
    found = problems(tmp_path, "s.yaml", text)
    assert len(found) == 2
    assert "turns[0].assertions[0].pattern: invalid regular expression" in found[1]


def test_turn_assertions_see_the_samples_mocks_and_their_turns_context(tmp_path):
    ok = """
    - sample_id: c
      mocks: [{tool: Read, return: x}]
      turns:
        - prompt: a
          context: the doc
          assertions:
            - {type: mock_hit, value: "Read:1"}
            - {type: faithfulness}
    """
    assert len(load(tmp_path, "ok.yaml", ok).samples) == 1
    bad = """
    - sample_id: c
      turns:
        - prompt: a
          assertions:
            - {type: faithfulness}
    """
    assert one_problem(tmp_path, bad) == (
        "s.yaml:5: samples[0] (c) turns[0].assertions[0]: \"faithfulness\" needs the turn's \"context\" or its own \"reference\""
    )


def test_sample_wide_assertions_needing_context_need_it_on_every_turn(tmp_path):
    text = """
    - sample_id: c
      assertions:
        - {type: context_recall}
      turns:
        - {prompt: a, context: doc}
        - {prompt: b}
    """
    assert one_problem(tmp_path, text) == (
        's.yaml:3: samples[0] (c) assertions[0]: "context_recall" needs a "context" on every turn or its own "reference"'
    )
    every = text.replace("{prompt: b}", "{prompt: b, context: doc2}")
    assert len(load(tmp_path, "ok.yaml", every).samples) == 1


def test_json_conversations_report_json_lines(tmp_path):
    text = """
    [
      {"sample_id": "c",
       "turns": [
         {"prompt": "a"},
         {"prompt": "b",
          "assertions": [{"type": "contains"}]}
       ]}
    ]
    """
    assert one_problem(tmp_path, text, "s.json") == 's.json:6: samples[0] (c) turns[1].assertions[0]: "value" is required for type "contains"'


def test_shipped_schema_says_the_same():
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    good = {"sample_id": "c", "turns": [{"prompt": "a", "assertions": [{"type": "contains", "value": "x"}]}]}
    assert list(validator.iter_errors([good])) == []
    for bad in (
        {"sample_id": "c", "prompt": "p", "turns": [{"prompt": "a"}]},
        {"sample_id": "c", "context": "doc", "turns": [{"prompt": "a"}]},
        {"sample_id": "c"},
        {"sample_id": "c", "turns": []},
        {"sample_id": "c", "turns": [{"prompt": "a", "asertions": []}]},
        {"sample_id": "c", "turns": [{"prompt": "a", "assertions": [{"type": "containz", "value": "x"}]}]},
    ):
        assert list(validator.iter_errors([bad])), bad
