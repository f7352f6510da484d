"""A YAML file read through the memo of its pieces (omk.loader.yaml_memo) reads exactly as the
careful way (`parse_yaml`) reads it, or the memo answers None.

Exactly: the same values (1, 1.0 and true told apart, key order kept), no issue, and the same
line for every path the careful way has a line for (and for paths below and beside those).
The inputs are realistic samples files, written in several YAML styles with parts repeated
between samples (what the memo takes apart), then mutated at random, seeded so that a failure
repeats: lines re-indented, quotes that open across a cut, block scalars with indentation
indicators, comments at column 0, blank lines, anchors and aliases, repeated keys, merge keys,
flow collections over several lines, tabs, CRLF, a byte-order mark, Chinese text, document
markers. Then whole files are loaded both ways: the same samples, problems and lines.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

import omk.loader.yaml_memo as yaml_memo
from omk.core.errors import InputError
from omk.loader import load_samples
from omk.loader.document import ParseFailure
from omk.loader.share import Sharer
from omk.loader.yaml_lines import parse_yaml
from omk.loader.yaml_memo import quick_yaml, read_yaml, yaml_document

SCHEMA = {
    "type": "object",
    "required": ["verdict", "severity"],
    "properties": {"verdict": {"enum": ["vulnerable", "safe"]}, "severity": {"enum": ["low", "high"]}, "line": {"minimum": 1}},
}


def base_samples(count: int = 6) -> list[dict[str, Any]]:
    """Samples whose assertions, capability lists and schemas repeat from one to the next."""
    out = []
    for i in range(count):
        assertions: list[dict[str, Any]] = [
            {"type": "contains", "value": "injection"},
            {"type": "regex", "pattern": "param(eter)?i[sz]ed: (quer(y|ies))"},
            {"type": "json_schema", "schema": SCHEMA},
            {"type": "rouge_n_min", "reference": f"the lookup at line {i} concatenates untrusted input into sql, " * 2, "n": 1, "threshold": 0.75},
            {"type": "max_length", "value": 2000 if i % 2 else 2000.0, "weight": 0.5},
            {"type": "assert-set", "mode": "any", "children": [{"type": "contains", "value": "prepared"}, {"type": "contains", "value": "bind"}]},
        ]
        sample: dict[str, Any] = {
            "sample_id": f"s{i}",
            "prompt": f"Review snippet {i}: is it safe?\nAnswer as JSON." if i % 3 == 0 else f"Review snippet {i}",
            "capability": ["security-review", "sql"],
            "context": "注意：这是中文上下文，重复出现。\n第二行。" if i % 2 else "yes",
            "assertions": assertions[: 3 + i % 4] + assertions[3 + i % 4 :],
            "dimensions": {"security": "finds the injection", "tone": "plain"},
        }
        if i % 3 == 2:
            sample["turns"] = [{"prompt": "first", "assertions": [{"type": "contains", "value": "a"}]}, {"prompt": "second"}]
        out.append(sample)
    return out


class _Plain(yaml.SafeDumper):
    """Every repeated part written out again (no anchors: the memo is for text that repeats)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class _Indented(_Plain):
    """Lists indented under their key (`key:\\n  - item`), not at the key's column."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _block_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Blocks(_Indented):
    pass


_Blocks.add_representer(str, _block_text)


def write(samples: list[dict[str, Any]], style: int) -> str:
    """The samples as a YAML file in one of several styles."""
    dumper = [_Plain, _Indented, _Blocks][style % 3]
    text = yaml.dump(samples, Dumper=dumper, allow_unicode=True, sort_keys=False, width=80)
    if style % 2:
        return "# yaml-language-server: $schema=x.json\nschemaVersion: omk.eval-sample-set/1\nsamples:\n" + text
    return text if style % 4 else f"samples:\n{text}requires:\n  omk: '>=0.1'\n"


INSERTED = [
    "", "#", "# - type: contains", "  # comment", "- type: contains", "  - type: contains", "    value: x", "  value: y",
    "  prompt: |2\n     indented\n    - not an item", "  prompt: >-\n    folded\n\n    - still text", "  'quoted", '  "open',
    "  closed'", 'x"', "  - '", "  - [a,", "  b]", "  - {type: contains,", "    value: z}", "  anchor: &a {type: contains, value: x}",
    "  - *a", "  - &b x", "  alias: *b", "  <<: {merged: 1}", "  << : *a", "  sample_id: again", "  assertions: []",
    "\t- type: contains", "  \tvalue: x", "---", "...", "%YAML 1.2", "  名字: 中文的值", "  - 中文", "? complex", ": value",
    "  key: !!str 12", "  key2: !custom x", "  - !!int 7", "  yes: on", "  n: 0o17", "-", "  -", "- - nested", "samples:",
]  # fmt: skip


def mutate(text: str, rng: random.Random) -> str:
    """One random edit of a YAML file, line by line."""
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    edit = rng.randrange(10)
    if edit <= 2:
        lines.insert(at, rng.choice(INSERTED))
    elif edit == 3:  # re-indent a line
        lines[at] = " " + lines[at] if rng.random() < 0.5 else lines[at][1:]
    elif edit == 4:  # a quote or bracket somewhere in a line
        column = rng.randrange(len(lines[at]) + 1)
        lines[at] = lines[at][:column] + rng.choice("'\"[]{}#&*!|>") + lines[at][column:]
    elif edit == 5:  # a block of lines repeated elsewhere (a part seen before, a repeated key)
        end = min(len(lines), at + rng.randint(1, 12))
        lines[rng.randrange(len(lines)) : 0] = lines[at:end]
    elif edit == 6:
        del lines[at : at + rng.randint(1, 3)]
    elif edit == 7:  # leading spaces become a tab
        stripped = lines[at].lstrip(" ")
        if len(stripped) < len(lines[at]):
            lines[at] = "\t" + stripped
    elif edit == 8:
        return rng.choice(["\ufeff" + text, text.replace("\n", "\r\n"), text.replace("\n", "\r", 1), text + "\n\n# end"])
    else:  # a line's value swapped for another line's
        other = rng.choice(lines)
        if ": " in lines[at] and ": " in other:
            lines[at] = lines[at].split(": ", 1)[0] + ": " + other.split(": ", 1)[1]
    return "\n".join(lines)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1, 1.0 and True apart), key order kept."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def check_same_reading(text: str) -> bool:
    """Assert the memo reads `text` as the careful way does, or not at all; True when it read it."""
    try:
        careful = parse_yaml(text)
    except ParseFailure:
        careful = None
    found = quick_yaml(text)
    if found is None:
        return False
    assert careful is not None, f"the memo read a file the careful way refuses:\n{text}"
    assert not careful.issues, f"the memo read a file with issues {careful.issues}:\n{text}"
    quick = found[0]
    assert same(quick.data, careful.data), text
    for path, line in careful.lines.lines.items():  # type: ignore[attr-defined]  # parse_yaml's lines are a LineTable
        assert quick.line(path) == line, (path, text)
        assert quick.line((*path, "missing")) == careful.line((*path, "missing")), (path, text)
        assert quick.line((*path, 99)) == careful.line((*path, 99)), (path, text)
    return True


def texts_to_try(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    bases = [write(base_samples(rng.randint(2, 7)), style) for style in range(6)]
    out = list(bases)
    for _ in range(count):
        text = rng.choice(bases)
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        out.append(text)
    return out


def test_the_memo_reads_the_realistic_files_and_puts_stand_ins():
    for style in range(6):
        text = write(base_samples(), style)
        plan = yaml_memo._Plan("\n" + text)
        assert plan.cut(), style
        assert len(plan.stand_ins) >= 10, style  # repeated assertions, lists, schemas stood in
        assert check_same_reading(text), style


@pytest.mark.parametrize("seed", range(6))
def test_the_memo_reads_a_file_as_the_careful_way_or_not_at_all(seed):
    read = refused = 0
    for text in texts_to_try(seed, 250):
        if check_same_reading(text):
            read += 1
        else:
            refused += 1
    assert read > 30  # both ways were taken
    assert refused > 25


@pytest.mark.parametrize(
    "text",
    [
        # a quoted string that spans a cut: the item after it is text, not an item
        "samples:\n- sample_id: a\n  assertions:\n  - type: contains\n    value: 'x\n  - type: contains\n    value: y'\n"
        "- sample_id: b\n  assertions:\n  - type: contains\n    value: y'\n",
        # a flow list over several lines whose next line looks like a key at the sample's column
        "- sample_id: a\n  tags: [a,\n  b: c]\n  assertions:\n  - type: contains\n    value: long enough to be kept as a piece\n"
        "- sample_id: b\n  tags: [a,\n  b: c]\n  assertions:\n  - type: contains\n    value: long enough to be kept as a piece\n",
        # an anchor in one sample, its alias in the next
        "- sample_id: a\n  assertions:\n  - &x {type: contains, value: long enough to be kept as a piece}\n"
        "- sample_id: b\n  assertions:\n  - *x\n",
        # an alias in a repeated piece: the anchor it names was given another value in between
        "- sample_id: a\n  v: &a x\n  assertions:\n  - type: contains\n    value: *a\n    weight: 1\n"
        "- sample_id: b\n  v: &a y\n  assertions:\n  - type: contains\n    value: *a\n    weight: 1\n",
        # a line break libyaml counts and the cuts do not (a lone carriage return)
        "- sample_id: a\n  assertions:\n  - type: contains\n    value: long enough to be kept as a piece\n"
        "- sample_id: b\r  x: 1\n  assertions:\n  - type: contains\n    value: long enough to be kept as a piece\n",
        # the same field twice in one sample, the second a repeat
        "- sample_id: a\n  dimensions:\n    tone: plain\n    length: short\n  dimensions:\n    tone: plain\n    length: short\n",
        # a block scalar whose text holds lines that look like items
        "- sample_id: a\n  prompt: |2\n     lead\n    - type: contains\n  assertions:\n  - type: contains\n    value: x y z w\n"
        "- sample_id: b\n  prompt: |2\n     lead\n    - type: contains\n  assertions:\n  - type: contains\n    value: x y z w\n",
    ],
)
def test_cuts_in_the_wrong_place_are_never_believed(text):
    check_same_reading(text)
    check_same_reading(text.replace("\n", "\r\n"))


def test_a_repeated_part_is_found_at_its_own_lines():
    one = "- sample_id: a{n}\n  assertions:\n  - type: json_schema\n    schema:\n      type: object\n      required: [x]\n  - type: contains\n    value: long enough to be kept\n"
    text = "".join(one.format(n=n) for n in range(4))
    quick = read_yaml(text)
    assert quick.line((3, "assertions", 0, "schema", "required")) == 6 + 3 * 8
    assert quick.line((3, "assertions", 1, "value")) == 8 + 3 * 8
    assert quick.line((3, "assertions", 1, "nothing", "here")) == 7 + 3 * 8
    assert quick.data[3]["assertions"][0] is quick.data[0]["assertions"][0]  # read once


ITEMS = {
    "a": "  - type: contains\n    value: alpha, long enough to be a piece\n",
    "b": "  - type: json_schema\n    schema:\n      type: object\n      required: [x]\n",
    "c": "  - type: regex\n    pattern: gamma, long enough to be a piece\n",
    "u": "  - type: contains\n    value: unique {n}, long enough to be a piece\n",
}


@pytest.mark.parametrize("orders", [["abc", "ac", "cab", "bca", "abc"], ["abab", "baba"], ["aaa", "aa"], ["abuc", "aubc", "ucab"], ["a", "abcabc", "cba"]])
def test_repeated_items_in_any_order_are_read_in_their_place(orders):
    """Items that repeat in another order, or within their own list: each stands for its own."""
    text = "samples:\n"
    for n, order in enumerate(orders):
        text += f"- sample_id: s{n}\n  assertions:\n" + "".join(ITEMS[k].format(n=n) for k in order)
    assert check_same_reading(text)
    assert check_same_reading(text.replace("\n  - ", "\n    - ").replace("\n    ", "\n      ").replace("\n      - t", "\n    - t"))


def walk_sharing(records: list[Any]) -> list[int]:
    """Which containers and strings are one object, written as the order each was first met."""
    first: dict[int, int] = {}
    out: list[int] = []
    keep: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, (dict, list, str)):
            keep.append(value)
            out.append(first.setdefault(id(value), len(first)))
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for record in records:
        walk(record)
    return out


@pytest.mark.parametrize("style", range(6))
def test_the_memo_shares_what_the_careful_way_shares(style):
    text = write(base_samples(7), style)
    doc = yaml_document(text, Sharer())
    assert doc.shared
    careful = parse_yaml(text)
    sharer = Sharer()
    prefix = ["samples"] if isinstance(careful.data, dict) else []
    slow = [sharer.sample(s) for s in (careful.data["samples"] if prefix else careful.data)]
    fast = doc.data["samples"] if prefix else doc.data
    assert json.dumps(fast) == json.dumps(slow)
    assert walk_sharing(fast) == walk_sharing(slow)


def outcome(path: Path) -> tuple[str, list[Any], list[str]]:
    try:
        loaded = load_samples([path])
    except InputError as exc:
        return str(exc), [], []
    samples = [
        (s.raw, s.source.line if s.source else None, [(a.type, a.raw, a.source.line if a.source else None) for a in s.assertions])
        for s in loaded.samples
    ]
    return "", samples, [str(w) for w in loaded.warnings]


def problems_in(sample: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A sample with a mistake the validator finds (or none)."""
    sample = json.loads(json.dumps(sample))
    edit = rng.randrange(5)
    if edit == 0:
        sample["assertions"][rng.randrange(len(sample["assertions"]))]["weight"] = rng.choice([0, "heavy", -1])
    elif edit == 1:
        sample["assertions"].append({"type": "containz", "value": "x"})
    elif edit == 2:
        sample["promt"] = "typo"
    elif edit == 3:
        sample["sample_id"] = "s1"
    return sample


@pytest.mark.parametrize("seed", range(3))
def test_a_file_loads_the_same_with_and_without_the_memo(tmp_path, monkeypatch, seed):
    """Problems, their lines (a part's line found again after loading too) and warnings."""
    rng = random.Random(seed)
    for round_ in range(8):
        samples = [problems_in(s, rng) if rng.random() < 0.3 else s for s in base_samples(rng.randint(3, 9))]
        text = write(samples, rng.randrange(6))
        if round_ % 2:
            text = mutate(text, rng)
        path = tmp_path / f"s{round_}.yaml"
        path.write_text(text, encoding="utf-8")
        with monkeypatch.context() as m:
            with_memo = outcome(path)
            m.setattr(yaml_memo, "quick_yaml", lambda text: None)
            assert outcome(path) == with_memo, text
