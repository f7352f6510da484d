"""What loads and how: the seed example, YAML 1.2 scalars, JSON Lines, folders, discovery."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from loader_helpers import load, one_problem, write

from omk.core.errors import InputError
from omk.loader import discover, load_samples
from omk.loader.discover import is_samples_file
from omk.loader.yaml_lines import parse_yaml
from omk.samples.model import Layer

SEED = """
[
  {
    "sample_id": "s001",
    "prompt": "审查这段代码的安全性",
    "context": "function auth(u, p) { db.query('SELECT * FROM users WHERE name=' + u); }",
    "rubric": "应识别 SQL 注入风险并建议参数化查询",
    "assertions": [
      { "type": "contains", "value": "SQL 注入", "weight": 1 },
      { "type": "contains", "value": "参数化", "weight": 1 },
      { "type": "not_contains", "value": "没有问题", "weight": 0.5 }
    ],
    "dimensions": {
      "security": "是否识别出注入漏洞",
      "actionability": "是否给出可直接使用的修复代码"
    }
  }
]
"""


def test_the_seed_example_loads(tmp_path):
    loaded = load(tmp_path, "eval-samples.json", SEED)
    (sample,) = loaded.samples
    assert sample.sample_id == "s001"
    assert sample.prompt == "审查这段代码的安全性"
    assert [(a.type, a.get("value"), a.weight) for a in sample.assertions] == [
        ("contains", "SQL 注入", 1.0),
        ("contains", "参数化", 1.0),
        ("not_contains", "没有问题", 0.5),
    ]
    assert sample.dimensions == {"security": "是否识别出注入漏洞", "actionability": "是否给出可直接使用的修复代码"}
    assert sample.source is not None
    assert (sample.source.line, sample.source.path) == (2, "samples[0]")
    assert sample.assertions[2].source.line == 10
    assert sample.base_dir == tmp_path.resolve()
    assert loaded.files == [tmp_path / "eval-samples.json"]


def test_the_bundled_samples_load():
    root = Path(__file__).resolve().parent.parent
    loaded = load_samples([root / "samples" / "eval-samples.yaml"])
    assert len(loaded.samples) >= 10


def test_every_sample_field_is_carried(tmp_path):
    text = """
    samples:
      - sample_id: full
        prompt: p
        context: c
        cwd: work
        rubric: r
        capability: [a, b]
        difficulty: hard
        construct: quality
        provenance: human
        mocks:
          - {tool: Read, match: {file_path_endswith: a.py}, return: {ok: true}}
        mocksStrict: true
        tripwire: true
        environment: {cli_available: [git], files_available: [a.py], notes: n}
        tools:
          - {name: Read, description: reads, parameters: {type: object}}
        x-owner: ana
        assertions:
          - {type: contains, value: 42}
          - {type: max_length, value: 10, layer: fact, not: true, weight: 2}
          - type: assert-set
            mode: any
            children: [{type: equals, value: 3.5}, {type: regex, pattern: "\\\\d+"}]
    """
    (s,) = load(tmp_path, "s.yaml", text).samples
    assert (s.context, s.cwd, s.rubric, s.capability, s.difficulty, s.construct, s.provenance) == (
        "c", "work", "r", ("a", "b"), "hard", "quality", "human",
    )
    assert s.mocks == ({"tool": "Read", "match": {"file_path_endswith": "a.py"}, "return": {"ok": True}},)
    assert s.mocks_strict is True
    assert s.tripwire is True
    assert s.environment == {"cli_available": ["git"], "files_available": ["a.py"], "notes": "n"}
    assert s.tools[0]["name"] == "Read"
    assert s.raw["x-owner"] == "ana"
    contains, length, group = s.assertions
    assert contains.get("value") == 42  # a number value is accepted
    assert (length.layer, length.negate, length.weight) == (Layer.FACT, True, 2.0)
    assert contains.layer is None
    assert contains.negate is False
    assert [c.type for c in group.children] == ["equals", "regex"]
    assert group.children[1].compiled is not None  # prepared at load
    assert group.children[1].source.path == "samples[0].assertions[2].children[1]"


def test_omk_054_fields_are_accepted(tmp_path):
    text = "- {sample_id: a, prompt: p, allowedTools: [Read], expectedTools: [Read], covers: [{targetKind: skill, ref: x}]}\n"
    assert load(tmp_path, "s.yaml", text).samples[0].raw["allowedTools"] == ["Read"]


def test_no_length_or_cjk_rule_on_values(tmp_path):
    """omk 0.54's 2-40 characters / no CJK / no spaces rule is not applied."""
    text = "- sample_id: a\n  prompt: p\n  assertions:\n    - {type: contains, value: x}\n" + (
        "    - {type: equals, value: 这是一个非常长的中文句子用来确认没有四十个字符的限制也没有禁止中日韩文字的规则存在于此处再加一些}\n"
        "    - {type: regex, pattern: 注入|参数化}\n"
        "    - {type: contains_all, values: [SQL 注入, prepared statement]}\n"
    )
    assert len(load(tmp_path, "s.yaml", text).samples[0].assertions) == 4


# --- YAML ---------------------------------------------------------------------------------------


def test_yaml_12_core_scalars():
    doc = parse_yaml(
        "a: [yes, no, on, off, y, n, 0o17, 0x1F, 017, 1_000, 1e3, .5, -.inf, .NaN, ~, null, Null, '', TRUE, "
        "False, 2024-01-01, 12:30, '12', \"true\", !!str 5, !!int '7', !!float 1, +3, -0]\n"
    )
    values = doc.data["a"]
    expected = ["yes", "no", "on", "off", "y", "n", 15, 31, 17, "1_000", 1000.0, 0.5, -math.inf]
    assert values[:13] == expected
    assert math.isnan(values[13])
    assert values[14:] == [None, None, None, "", True, False, "2024-01-01", "12:30", "12", "true", "5", 7, 1.0, 3, 0]
    assert [type(v) for v in values[6:9]] == [int, int, int]
    assert doc.issues == []


def test_yaml_lines_of_keys_and_items():
    doc = parse_yaml("# c\nsamples:\n  - sample_id: a\n    assertions:\n      - type: x\n\n      - {type: y, value: 1}\n")
    assert doc.line(("samples",)) == 2
    assert doc.line(("samples", 0)) == 3
    assert doc.line(("samples", 0, "assertions", 1, "value")) == 7
    assert doc.line(("samples", 0, "assertions", 1, "missing")) == 7  # falls back to the parent
    assert doc.line(("samples", 0, "assertions", 0)) == 5


def test_block_scalars_quoted_strings_and_comments(tmp_path):
    text = """
    samples:
      - sample_id: "007"      # quoted: stays text
        prompt: |
          line one
          line two
        rubric: >
          folded
          text
    """
    (s,) = load(tmp_path, "s.yaml", text).samples
    assert (s.sample_id, s.prompt, s.rubric) == ("007", "line one\nline two\n", "folded text\n")


def test_anchors_aliases_and_merge_keys(tmp_path):
    text = """
    defaults: &defaults
      capability: [review]
      difficulty: easy
    samples:
      - <<: *defaults
        sample_id: a
        prompt: p
        difficulty: hard
        assertions: &checks
          - {type: contains, value: x}
      - <<: *defaults
        sample_id: b
        prompt: q
        assertions: *checks
    """
    # `defaults` is not a known top-level field: the file must say where shared parts live.
    assert one_problem(tmp_path, text).startswith('s.yaml:1: defaults: unknown top-level field "defaults"')
    fixed = """
    - &first
      sample_id: a
      prompt: p
      capability: [review]
      difficulty: easy
      assertions: &checks
        - {type: contains, value: x}
    - <<: *first
      sample_id: b
      difficulty: hard
    - sample_id: c
      prompt: r
      assertions: *checks
    """
    a, b, c = load(tmp_path, "t.yaml", fixed).samples
    assert (b.prompt, b.capability, b.difficulty) == ("p", ("review",), "hard")
    assert [x.get("value") for x in c.assertions] == ["x"]


def test_merged_problem_is_reported_at_the_merge_line(tmp_path):
    text = "- &first {sample_id: a, prompt: p, difficulty: easy}\n- <<: *first\n  sample_id: b\n  difficulty: exotic\n"
    assert one_problem(tmp_path, text) == (
        's.yaml:4: samples[1] (b) difficulty: must be one of "easy", "medium" or "hard" (got "exotic")'
    )


# --- JSON / JSON Lines -------------------------------------------------------------------------


def test_json_lines(tmp_path):
    records = [{"sample_id": f"s{i}", "prompt": "p", "assertions": [{"type": "contains", "value": "x"}]} for i in range(3)]
    text = "\n".join(json.dumps(r) for r in records) + "\n\n"
    loaded = load(tmp_path, "set.samples.jsonl", text)
    assert [s.sample_id for s in loaded.samples] == ["s0", "s1", "s2"]
    assert [s.source.line for s in loaded.samples] == [1, 2, 3]


def test_json_lines_duplicate_key(tmp_path):
    assert one_problem(tmp_path, '{"sample_id": "a", "prompt": "p", "prompt": "q"}\n', "x.jsonl") == (
        'x.jsonl:1: samples[0] (a) prompt: duplicate key "prompt"'
    )


def test_other_extensions_are_read_as_json(tmp_path):
    assert load(tmp_path, "samples.txt", '[{"sample_id": "a", "prompt": "p"}]').samples[0].sample_id == "a"


# --- folders and discovery ----------------------------------------------------------------------


def test_folder_loading_order_and_skipped_names(tmp_path):
    folder = tmp_path / "evals"
    write(folder, "b.yaml", "- {sample_id: b, prompt: p}\n")
    write(folder, "a.json", '[{"sample_id": "a", "prompt": "p"}]')
    write(folder, "c.samples.jsonl", '{"sample_id": "c", "prompt": "p"}\n')
    for skipped in ("report.json", "Health-2024.json", "_draft.yaml", "omk.yaml", "responses.jsonl", ".hidden.json", "notes.md"):
        write(folder, skipped, "not samples at all: [")
    (folder / "sub").mkdir()
    write(folder / "sub", "d.yaml", "- {sample_id: d, prompt: p}\n")
    loaded = load_samples([folder])
    assert [s.sample_id for s in loaded.samples] == ["a", "b", "c"]
    assert [f.name for f in loaded.files] == ["a.json", "b.yaml", "c.samples.jsonl"]


def test_is_samples_file():
    assert is_samples_file(Path("eval-samples.jsonl"))
    assert is_samples_file(Path("X.YAML"))
    assert not is_samples_file(Path("responses.jsonl"))
    assert not is_samples_file(Path("OMK.yml"))
    assert not is_samples_file(Path("eval-samples.schema.json"))
    assert is_samples_file(Path("schema.json"))


def test_a_folder_made_by_omk_init_loads_as_a_folder(tmp_path):
    """`omk init` writes eval-samples.schema.json beside its samples: the folder still loads."""
    from omk.cli.main import main

    assert main(["init", str(tmp_path / "my-evals")]) == 0
    assert (tmp_path / "my-evals" / "eval-samples.schema.json").is_file()
    loaded = load_samples([tmp_path / "my-evals"])
    assert [f.name for f in loaded.files] == ["eval-samples.yaml"]
    assert loaded.samples


def test_duplicate_sample_id_across_files(tmp_path):
    folder = tmp_path / "evals"
    write(folder, "a.yaml", "- {sample_id: x, prompt: p}\n")
    write(folder, "b.yaml", "# second\n- {sample_id: x, prompt: q}\n")
    with pytest.raises(InputError) as info:
        load_samples([folder])
    assert info.value.lines() == [
        f'{folder}/b.yaml:2: samples[0] (x) sample_id: duplicate sample_id "x" (first defined at {folder}/a.yaml:1)'
    ]


def test_requires_are_unioned(tmp_path):
    folder = tmp_path / "evals"
    write(folder, "a.yaml", "requires: {tools: [git], env: [TOKEN]}\nsamples: [{sample_id: a, prompt: p}]\n")
    write(folder, "b.json", '{"requires": {"tools": ["git", "jq"]}, "samples": [{"sample_id": "b", "prompt": "p"}]}')
    assert load_samples([folder]).requires == {"tools": ["git", "jq"], "env": ["TOKEN"]}


def test_same_file_twice_is_loaded_once(tmp_path):
    path = write(tmp_path, "s.yaml", "- {sample_id: a, prompt: p}\n")
    assert len(load_samples([path, str(path)]).samples) == 1


def test_discover(tmp_path):
    assert discover(tmp_path) == []
    write(tmp_path / "evals", "eval-samples.json", "[]")
    assert discover(tmp_path) == [tmp_path / "evals" / "eval-samples.json"]
    write(tmp_path, "eval-samples.json", "[]")
    write(tmp_path, "eval-samples.yml", "[]")
    assert discover(tmp_path) == [tmp_path / "eval-samples.yml"]
    write(tmp_path, "eval-samples.yaml", "[]")
    assert discover(tmp_path) == [tmp_path / "eval-samples.yaml"]


def test_problem_objects_carry_the_parts(tmp_path):
    path = write(tmp_path, "s.yaml", "- {sample_id: a, prompt: p, difficulty: x}\n")
    with pytest.raises(InputError) as info:
        load_samples([path])
    (p,) = info.value.problems
    assert (p.file, p.line, p.where, p.field) == (str(path), 1, "samples[0] (a)", "difficulty")
