"""One test per loader message: FILE:LINE: samples[i] (id) FIELD: what is wrong."""

from __future__ import annotations

import pytest
from loader_helpers import one_problem, problems

HEAD = "samples:\n  - sample_id: a\n    prompt: p\n"


def test_five_mistakes_in_one_yaml_file_give_five_lines(tmp_path):
    text = """
    samples:
      - sample_id: a
        prompt: Review this
        asertions: []
      - sample_id: b
        prompt: Review that
        difficulty: extreme
        assertions:
          - type: containz
            value: x
          - type: contains
          - {type: contains, value: ok, weight: 0}
    """
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:4: samples[0] (a) asertions: unknown field "asertions" (did you mean "assertions"?); ignored',
        's.yaml:7: samples[1] (b) difficulty: must be one of "easy", "medium" or "hard" (got "extreme")',
        's.yaml:9: samples[1] (b) assertions[0].type: unknown assertion type "containz" (did you mean "contains"?)',
        's.yaml:11: samples[1] (b) assertions[1]: "value" is required for type "contains"',
        "s.yaml:12: samples[1] (b) assertions[2].weight: must be > 0 (got 0)",
    ]


def test_five_mistakes_in_one_json_file_give_five_lines(tmp_path):
    text = """
    [
      {"sample_id": "a", "prompt": "Review this",
       "asertions": []},
      {"sample_id": "b",
       "prompt": "Review that",
       "difficulty": "extreme",
       "assertions": [
         {"type": "containz", "value": "x"},
         {"type": "contains"},
         {"type": "contains", "value": "ok",
          "weight": 0}
       ]}
    ]
    """
    assert problems(tmp_path, "s.json", text) == [
        's.json:3: samples[0] (a) asertions: unknown field "asertions" (did you mean "assertions"?); ignored',
        's.json:6: samples[1] (b) difficulty: must be one of "easy", "medium" or "hard" (got "extreme")',
        's.json:8: samples[1] (b) assertions[0].type: unknown assertion type "containz" (did you mean "contains"?)',
        's.json:9: samples[1] (b) assertions[1]: "value" is required for type "contains"',
        "s.json:11: samples[1] (b) assertions[2].weight: must be > 0 (got 0)",
    ]


def test_problems_in_several_files_are_all_reported(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.yaml").write_text(HEAD + "    tripwire: maybe\n", encoding="utf-8")
    (tmp_path / "d" / "b.json").write_text('[{"sample_id": "x"}]', encoding="utf-8")
    from omk.core.errors import InputError
    from omk.loader import load_samples

    with pytest.raises(InputError) as info:
        load_samples([tmp_path / "d"])
    lines = [line.replace(f"{tmp_path}/", "") for line in info.value.lines()]
    assert lines == [
        'd/a.yaml:4: samples[0] (a) tripwire: must be true or false (got string "maybe")',
        'd/b.json:1: samples[0] (x): "prompt" is required',
    ]


# --- file level -------------------------------------------------------------------------------


def test_file_not_found(tmp_path):
    from omk.core.errors import InputError
    from omk.loader import load_samples

    with pytest.raises(InputError) as info:
        load_samples([tmp_path / "nope.yaml"])
    assert info.value.lines() == [f"{tmp_path}/nope.yaml: file not found"]


def test_folder_without_sample_files(tmp_path):
    from omk.core.errors import InputError
    from omk.loader import load_samples

    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_samples([tmp_path])
    assert info.value.lines()[0].startswith(f"{tmp_path}: no sample files found in this folder (looking for")


@pytest.mark.parametrize("name", ["s.yaml", "s.json"])
def test_empty_file(tmp_path, name):
    assert one_problem(tmp_path, "  \n", name) == (
        f'{name}: the file is empty; expected an array of samples or an object with a "samples" field'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just text\n", 's.yaml:1: expected an array of samples or an object with a "samples" field (got string "just text")'),
        ("[]\n", 's.yaml:1: the file has no samples (an empty list); expected an array of samples or an object with a "samples" field'),
        ("samples: 5\n", "s.yaml:1: samples: must be a list of samples (got number 5)"),
        ("samples: []\n", "s.yaml:1: samples: is empty: the file has no samples"),
        ("tests: []\n", 's.yaml:1: expected an array of samples or an object with a "samples" field'),
    ],
)
def test_file_shape(tmp_path, text, message):
    assert one_problem(tmp_path, text) == message


def test_single_sample_not_in_a_list_gets_a_hint(tmp_path):
    assert "a single sample must still be in a list" in one_problem(tmp_path, "sample_id: a\nprompt: p\n")


def test_unknown_top_level_field(tmp_path):
    text = HEAD + "sample: []\n"
    assert one_problem(tmp_path, text) == (
        's.yaml:4: sample: unknown top-level field "sample" (did you mean "samples"?); allowed: "schemaVersion", "samples", "requires", "$schema"'
    )


def test_requires_must_hold_string_lists(tmp_path):
    text = "requires:\n  tools: git\n  network: [x]\n" + HEAD
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:2: requires.tools: must be a list (got string "git")',
        's.yaml:3: requires.network: unknown field "network"',
    ]


def test_yaml_syntax_error_has_its_line(tmp_path):
    text = "samples:\n  - sample_id: a\n    prompt: [unclosed\n  - sample_id: b\n"
    line = one_problem(tmp_path, text)
    assert line.startswith("s.yaml:4: YAML parse error at column ")


def test_json_syntax_error_has_its_line(tmp_path):
    text = '[\n  {"sample_id": "a", "prompt": "p"}\n  {"sample_id": "b"}]\n'
    assert one_problem(tmp_path, text, "s.json") == "s.json:3: JSON parse error: Expecting ',' delimiter (column 3)"


def test_a_json_trailing_comma_says_so_on_the_comma_line(tmp_path):
    text = '[\n  {"sample_id": "a", "prompt": "p"},\n]\n'
    assert one_problem(tmp_path, text, "s.json") == (
        "s.json:2: JSON parse error: a trailing comma at column 36 before ']': JSON allows none, remove it"
    )
    text = '[{"sample_id": "a", "prompt": "p", "assertions": [],\n}]\n'
    assert "a trailing comma at column 52 before '}'" in one_problem(tmp_path, text, "t.json")


def test_an_indentation_mistake_is_not_told_to_quote(tmp_path):
    text = "samples:\n  - sample_id: a\n    prompt: hi\n     rubric: be kind\n"
    line = one_problem(tmp_path, text)
    assert line.startswith("s.yaml:4: YAML parse error")
    assert "must be quoted" not in line
    assert 'hint: check the indentation: "rubric:" is indented deeper than the key above it' in line
    text = "samples:\n  - sample_id: a\n    prompt: Note: read this\n"
    assert 'must be quoted, e.g. prompt: "Note: read this"' in one_problem(tmp_path, text, "q.yaml")


def test_a_missing_samples_file_suggests_the_near_name_that_exists(tmp_path):
    from omk.core.errors import InputError
    from omk.loader import load_samples

    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "eval-samples.yaml").write_text("samples: []\n", encoding="utf-8")
    for given in ("evals/eval-sample.yaml", "eval/eval-samples.yaml"):
        with pytest.raises(InputError) as info:
            load_samples([tmp_path / given])
        assert info.value.lines() == [f"{tmp_path / given}: file not found; did you mean {tmp_path / 'evals' / 'eval-samples.yaml'}?"]


def test_invalid_utf8(tmp_path):
    raw = b"samples:\n  - sample_id: a\n    prompt: caf\xe9\n"
    assert one_problem(tmp_path, raw) == (
        "s.yaml:3: not valid UTF-8 text (byte 0xe9 at column 16); save the file as UTF-8"
    )


def test_utf16_file(tmp_path):
    raw = (HEAD).encode("utf-16")
    assert one_problem(tmp_path, raw) == "s.yaml: the file is UTF-16 text; save it as UTF-8"


def test_utf8_bom_is_fine(tmp_path):
    from loader_helpers import load

    assert load(tmp_path, "s.json", b'\xef\xbb\xbf[{"sample_id": "a", "prompt": "p"}]').samples[0].sample_id == "a"


def test_two_yaml_documents(tmp_path):
    assert one_problem(tmp_path, HEAD + "---\n" + HEAD).startswith(
        "s.yaml:4: YAML parse error: expected a single document"
    )


def test_duplicate_key_yaml(tmp_path):
    assert one_problem(tmp_path, HEAD + "    prompt: q\n") == (
        's.yaml:4: samples[0] (a) prompt: duplicate key "prompt" (first defined at line 3)'
    )


def test_duplicate_key_json(tmp_path):
    text = '[{"sample_id": "a",\n  "prompt": "p",\n  "prompt": "q"}]'
    assert one_problem(tmp_path, text, "s.json") == (
        's.json:3: samples[0] (a) prompt: duplicate key "prompt" (first defined at line 2)'
    )


def test_unsupported_tag_and_undefined_alias(tmp_path):
    text = HEAD + "    context: !include other.txt\n    rubric: *nowhere\n"
    assert problems(tmp_path, "s.yaml", text) == [
        "s.yaml:4: samples[0] (a) context: unsupported YAML tag !include",
        "s.yaml:5: samples[0] (a) rubric: undefined alias *nowhere",
    ]


def test_deep_nesting_is_refused_not_crashed(tmp_path):
    text = "samples: " + "[" * 100_000 + "]" * 100_000 + "\n"
    assert "nesting deeper than 200 levels" in one_problem(tmp_path, text)


def test_alias_bomb_is_refused(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    assert "aliases expand to too much data" in one_problem(tmp_path, "\n".join(lines) + "\n")


def test_deep_json_is_refused_not_crashed(tmp_path):
    assert "nesting too deep" in one_problem(tmp_path, "[" * 100_000 + "]" * 100_000, "s.json")


# --- sample level -----------------------------------------------------------------------------


def test_sample_must_be_a_mapping(tmp_path):
    assert one_problem(tmp_path, "samples:\n  - just a prompt\n") == (
        's.yaml:2: samples[0]: a sample must be a mapping with sample_id and prompt (got string "just a prompt")'
    )


def test_required_fields(tmp_path):
    assert problems(tmp_path, "s.yaml", "samples:\n  - context: c\n") == [
        's.yaml:2: samples[0]: "sample_id" is required',
        's.yaml:2: samples[0]: "prompt" is required',
    ]


def test_numeric_sample_id_says_to_quote_it(tmp_path):
    assert one_problem(tmp_path, "samples:\n  - sample_id: 001\n    prompt: p\n") == (
        "s.yaml:2: samples[0] sample_id: must be a string (got number 1) (quote it to make it text)"
    )


def test_blank_prompt(tmp_path):
    assert one_problem(tmp_path, "samples:\n  - sample_id: a\n    prompt: '  '\n") == (
        "s.yaml:3: samples[0] (a) prompt: must not be empty or blank"
    )


def test_provenance_enum(tmp_path):
    assert one_problem(tmp_path, HEAD + "    provenance: llm\n") == (
        's.yaml:4: samples[0] (a) provenance: must be one of "human", "llm-generated" or "production-trace" (got "llm")'
    )


def test_capability_must_be_a_list_of_non_empty_strings(tmp_path):
    assert one_problem(tmp_path, HEAD + "    capability: security\n") == (
        's.yaml:4: samples[0] (a) capability: must be a list (got string "security")'
    )
    assert one_problem(tmp_path, HEAD + "    capability: [ok, '']\n") == (
        "s.yaml:4: samples[0] (a) capability[1]: must not be empty"
    )


def test_duplicate_sample_id_in_one_file(tmp_path):
    assert one_problem(tmp_path, HEAD + "  - sample_id: a\n    prompt: q\n") == (
        's.yaml:4: samples[1] (a) sample_id: duplicate sample_id "a" (first defined at line 2)'
    )


def test_dimensions_need_text(tmp_path):
    assert one_problem(tmp_path, HEAD + "    dimensions:\n      security: ''\n") == (
        "s.yaml:5: samples[0] (a) dimensions.security: must not be empty"
    )


def test_mock_needs_a_return_form_and_known_match_fields(tmp_path):
    text = HEAD + "    mocks:\n      - tool: Read\n        match: {path: x}\n"
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:5: samples[0] (a) mocks[0]: needs "return", "return_file" or "return_seq"',
        's.yaml:6: samples[0] (a) mocks[0].match.path: unknown field "path" (did you mean "file_path"?)',
    ]


def test_mocks_strict_must_be_boolean(tmp_path):
    assert one_problem(tmp_path, HEAD + "    mocksStrict: 'yes'\n") == (
        's.yaml:4: samples[0] (a) mocksStrict: must be true or false (got string "yes")'
    )


def test_environment_fields(tmp_path):
    assert one_problem(tmp_path, HEAD + "    environment: {cli: [git]}\n") == (
        's.yaml:4: samples[0] (a) environment.cli: unknown field "cli" (did you mean "cli_available"?)'
    )


def test_tool_needs_a_name(tmp_path):
    assert one_problem(tmp_path, HEAD + "    tools:\n      - description: reads\n") == (
        's.yaml:5: samples[0] (a) tools[0]: "name" is required'
    )


# --- assertions -------------------------------------------------------------------------------


def a(text: str) -> str:
    """HEAD plus one assertion line (line 5)."""
    return HEAD + "    assertions:\n      - " + text + "\n"


@pytest.mark.parametrize(
    ("assertion", "message"),
    [
        ("just text", 'assertions[0]: an assertion must be a mapping with a type (got string "just text")'),
        ("{value: x}", 'assertions[0]: "type" is required'),
        ("{type: containz, value: x}", 'assertions[0].type: unknown assertion type "containz" (did you mean "contains"?)'),
        ("{type: 5}", 'assertions[0].type: "type" must be a string naming an assertion type (got number 5)'),
        ("{type: contains}", 'assertions[0]: "value" is required for type "contains"'),
        ("{type: contains, value: ''}", "assertions[0].value: must not be empty"),
        ("{type: contains, value: x, weight: -1}", "assertions[0].weight: must be > 0 (got -1)"),
        ("{type: contains, value: x, weight: true}", "assertions[0].weight: must be a number (got boolean true)"),
        ('{type: contains, value: x, not: "true"}', 'assertions[0].not: must be true or false (got string "true")'),
        ("{type: contains, value: x, layer: facts}", 'assertions[0].layer: must be one of "fact" or "behavior" (got "facts")'),
        ("{type: regex, pattern: x, flag: m}", 'assertions[0].flag: unknown field "flag" for type "regex" (did you mean "flags"?)'),
        ("{type: regex, pattern: 'a(b'}", "assertions[0].pattern: invalid regular expression: missing ) at position 3"),
        ("{type: regex, pattern: a, flags: q}", "assertions[0].flags: unsupported regular expression flag 'q' (use any of i, m, s, u, g, y)"),
        ("{type: json_schema, schema: {type: nope}}", "assertions[0].schema: invalid JSON Schema at $.type: 'nope' is not valid under any of the given schemas"),
        ("{type: contains_all, values: []}", "assertions[0].values: must not be empty"),
        ("{type: max_length, value: '100'}", 'assertions[0].value: must be a number (got string "100")'),
        ("{type: max_length, value: .inf}", "assertions[0].value: must be a finite number (got inf)"),
        ("{type: rouge_n_min}", 'assertions[0]: "reference" is required for type "rouge_n_min"'),
        ("{type: bleu_min, threshold: 0.5}", 'assertions[0]: "reference" is required for type "bleu_min"'),
        ("{type: bleu_min, reference: r, threshold: 2}", "assertions[0].threshold: must be <= 1 (got 2)"),
        ("{type: tool_input_contains, value: Read}", 'assertions[0].value: must be "Tool:text": a tool name, a colon, then the text to look for (got "Read")'),
        ("{type: tool_output_contains, value: 'Read: '}", 'assertions[0].value: must be "Tool:text" with a non-blank tool name and text (got "Read: ")'),
        ("{type: mock_hit, value: Read}", 'assertions[0].value: must be a mock key "Tool:N" with a 1-based ordinal, e.g. "Read:1" (got "Read")'),
        ("{type: mock_hit, value: 'Read:1'}", 'assertions[0].value: references missing mock "Read:1"; available mock keys: (none)'),
        ("{type: faithfulness}", 'assertions[0]: "faithfulness" needs the sample\'s "context" or its own "reference"'),
        ("{type: context_recall}", 'assertions[0]: "context_recall" needs the sample\'s "context" or its own "reference"'),
        ("{type: custom, fn: check.txt}", "assertions[0].fn: custom hook 'check.txt' must be a .py, .js or .mjs file"),
        ("{type: assert-set, children: []}", "assertions[0].children: must not be empty"),
        ("{type: assert-set, mode: some, children: [{type: json_valid}]}", 'assertions[0].mode: must be one of "any" or "all" (got "some")'),
        (
            "{type: assert-set, children: [{type: semantic_similarity, reference: r}]}",
            'assertions[0].children[0].type: "semantic_similarity" is judge-scored and cannot be nested in an assert-set',
        ),
        (
            "{type: assert-set, children: [{type: contains}]}",
            'assertions[0].children[0]: "value" is required for type "contains"',
        ),
    ],
)
def test_assertion_messages(tmp_path, assertion, message):
    assert one_problem(tmp_path, a(assertion)) == f"s.yaml:5: samples[0] (a) {message}"


def test_mock_hit_lists_the_available_keys(tmp_path):
    text = HEAD + (
        "    mocks:\n"
        "      - {tool: Read, return: a}\n"
        "      - {tool: Bash, return: b}\n"
        "      - {tool: Bash, return_seq: [c, d]}\n"
        "    assertions:\n"
        "      - {type: mock_hit, value: 'Bash:2'}\n"
        "      - {type: mock_hit, value: 'bash:1'}\n"
        "      - {type: mock_hit, value: 'Bash:3'}\n"
    )
    assert one_problem(tmp_path, text) == (
        's.yaml:11: samples[0] (a) assertions[2].value: references missing mock "Bash:3"; '
        "available mock keys: Read:1, Bash:1, Bash:2"
    )


def test_nesting_deeper_than_16_levels(tmp_path):
    inner = "{type: contains, value: x}"
    for _ in range(16):
        inner = "{type: assert-set, children: [" + inner + "]}"
    found = one_problem(tmp_path, a(inner))
    assert found.endswith("children: assert-set nesting is too deep (at most 16 levels)")
    assert found.startswith("s.yaml:5: samples[0] (a) assertions[0]" + ".children[0]" * 15 + ".children:")


def test_fifteen_levels_of_nesting_are_fine(tmp_path):
    from loader_helpers import load

    inner = "{type: contains, value: x}"
    for _ in range(15):
        inner = "{type: assert-set, children: [" + inner + "]}"
    assert load(tmp_path, "s.yaml", a(inner)).samples


def test_line_numbers_of_nested_fields_are_exact(tmp_path):
    text = """
    # a comment first
    samples:
      - sample_id: a
        prompt: p

        assertions:
          - type: assert-set
            children:
              - type: contains
                value: x
              - type: regex
                pattern: "("
          - type: equals
            value: ok
            weight: -2
    """
    assert problems(tmp_path, "s.yaml", text) == [
        "s.yaml:12: samples[0] (a) assertions[0].children[1].pattern: invalid regular expression: missing ) at position 1",
        "s.yaml:15: samples[0] (a) assertions[1].weight: must be > 0 (got -2)",
    ]


def test_a_bad_regex_is_reported_with_the_other_problems_of_its_sample(tmp_path):
    text = HEAD + "    difficulty: hardest\n    assertions:\n      - {type: regex, pattern: '['}\n"
    assert [line.split(": ", 2)[1] for line in problems(tmp_path, "s.yaml", text)] == [
        "samples[0] (a) difficulty",
        "samples[0] (a) assertions[0].pattern",
    ]


def test_jsonl_problems_name_the_record_line(tmp_path):
    text = '{"sample_id": "a", "prompt": "p"}\n\n{"sample_id": "b"}\n{broken\n'
    assert problems(tmp_path, "x.jsonl", text) == [
        'x.jsonl:3: samples[1] (b): "prompt" is required',
        "x.jsonl:4: samples[2]: JSON parse error: Expecting property name enclosed in double quotes (column 2)",
    ]
