"""Loaded samples stay compact: the parsed file is gone after loading, equal content is one
object, and a JSON Lines file is read one line at a time."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import os
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

import pytest
import yaml
from loader_helpers import problems, write

import omk.loader
from omk.assertions.context import CheckContext
from omk.assertions.evaluate import evaluate
from omk.assertions.structured import _VALIDATORS, MAX_VALIDATORS, prepare_schema
from omk.assertions.text import compile_regex
from omk.core.errors import InputError
from omk.loader import load_samples
from omk.loader.document import Document
from omk.loader.read import read_file
from omk.loader.share import Sharer
from omk.records import SampleResult, Trace
from omk.samples.model import _TUPLES, AssertionSpec, Sample, Status

SCHEMA = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["safe", "vulnerable"]}}}


def sample(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "sample_id": f"s{i}",
        "prompt": f"review snippet {i}",
        "capability": ["security", "sql"],
        "assertions": [
            {"type": "json_schema", "schema": SCHEMA},
            {"type": "regex", "pattern": "vuln(erable)?"},
            {"type": "rouge_n_min", "reference": f"the answer of sample {i}", "threshold": 0.5},
            {"type": "assert-set", "mode": "any", "children": [{"type": "contains", "value": "a"}, {"type": "contains", "value": "b"}]},
        ],
        **extra,
    }


def conversation(i: int) -> dict[str, Any]:
    turns = [{"prompt": "first", "assertions": [{"type": "contains", "value": "x"}]}, {"prompt": "second"}]
    return {"sample_id": f"c{i}", "turns": turns, "assertions": [{"type": "max_length", "value": 100}]}


RECORDS = [sample(0), conversation(1), sample(2), conversation(3)]


def write_set(folder: Path, fmt: str) -> Path:
    if fmt == "json":
        return write(folder, "eval-samples.json", json.dumps({"samples": RECORDS}, indent=2))
    if fmt == "yaml":
        return write(folder, "eval-samples.yaml", yaml.safe_dump(RECORDS, sort_keys=False))
    return write(folder, "eval-samples.jsonl", "\n".join(json.dumps(r) for r in RECORDS) + "\n")


# --- nothing keeps the parsed file ---------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_the_parsed_document_is_garbage_once_loading_returns(tmp_path, monkeypatch, fmt):
    seen: list[weakref.ref[Document]] = []

    def reading(path: Path, quick: Any = None) -> Document:
        doc = read_file(path, quick)  # a JSON file read through the load's memo too (omk.loader.record_memo)
        seen.append(weakref.ref(doc))
        seen.append(weakref.ref(doc.lines))
        return doc

    monkeypatch.setattr(omk.loader, "read_file", reading)
    loaded = load_samples([write_set(tmp_path, fmt)])
    gc.collect()
    assert len(loaded.samples) == 4
    assert len(seen) == 2
    assert [ref() for ref in seen] == [None, None]  # neither the document nor its line map


@pytest.mark.parametrize("name", ["m365/evals.json", "bigsky/dataset.json"])
def test_foreign_formats_keep_no_document_either(monkeypatch, name):
    seen: list[weakref.ref[Document]] = []

    def reading(path: Path, quick: Any = None) -> Document:
        doc = read_file(path, quick)
        seen.append(weakref.ref(doc))
        return doc

    monkeypatch.setattr(omk.loader, "read_file", reading)
    loaded = load_samples([Path(__file__).resolve().parent.parent / "samples" / name])
    gc.collect()
    assert loaded.samples
    assert all(s.source.line for s in loaded.samples)
    assert seen
    assert seen[0]() is None
    assert all(a.source.line for s in loaded.samples for a in s.assertions)  # placed while loading


def test_a_json_lines_file_makes_no_document(tmp_path, monkeypatch):
    def reading(path: Path) -> Document:
        raise AssertionError("a JSON Lines samples file is not read whole")

    monkeypatch.setattr(omk.loader, "read_file", reading)
    assert len(load_samples([write_set(tmp_path, "jsonl")]).samples) == 4


def _walk(spec: AssertionSpec, rel: tuple[Any, ...]):
    yield spec, rel
    for i, child in enumerate(spec.children):
        yield from _walk(child, (*rel, "children", i))


def places(s: Sample) -> list[tuple[Any, tuple[Any, ...]]]:
    """(source, path inside the sample) of the sample, its assertions and turns, nested ones too."""
    found: list[tuple[Any, tuple[Any, ...]]] = [(s.source, ())]
    for k, spec in enumerate(s.assertions):
        found += [(x.source, r) for x, r in _walk(spec, ("assertions", k))]
    for j, turn in enumerate(s.turns):
        found.append((turn.source, ("turns", j)))
        for k, spec in enumerate(turn.assertions):
            found += [(x.source, r) for x, r in _walk(spec, ("turns", j, "assertions", k))]
    return found


@pytest.mark.parametrize("fmt", ["json", "yaml", "jsonl"])
def test_every_line_is_the_one_the_parsed_file_gives(tmp_path, fmt):
    path = write_set(tmp_path, fmt)
    doc = read_file(path)  # what the loader placed lines with before it let the document go
    prefix: tuple[Any, ...] = ("samples",) if fmt == "json" else ()
    loaded = load_samples([path])
    checked = 0
    for i, s in enumerate(loaded.samples):
        for source, rel in places(s):
            want = doc.line((*prefix, i)) if fmt == "jsonl" else doc.line((*prefix, i, *rel))
            assert (source.file, source.line) == (str(path), want), (i, rel)
            label = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rel)
            assert source.path == f"samples[{i}]{label}"
            checked += 1
    assert checked == 2 * 7 + 2 * 5
    for i, s in enumerate(loaded.samples):  # what every result says of its sample
        assert SampleResult.start(s, "p").to_json()["source"] == {"file": str(path), "line": doc.line((*prefix, i))}
    if fmt != "jsonl":  # the lines of a pretty-printed file differ from part to part
        assert len({src.line for src, _ in places(loaded.samples[0])}) == 7


def test_a_part_is_not_placed_in_a_file_changed_since_loading(tmp_path):
    path = write_set(tmp_path, "json")
    loaded = load_samples([path])
    path.write_text(json.dumps({"samples": [sample(9)]}, indent=3), encoding="utf-8")
    os.utime(path, ns=(1, 1))
    first = loaded.samples[0]
    assert first.source.line == 3  # found while loading
    assert first.assertions[1].source.line is None  # unknown rather than wrong
    assert first.assertions[1].source.path == "samples[0].assertions[1]"


# --- equal content is one object -----------------------------------------------------------------


def _run(specs: list[AssertionSpec], s: Sample, output: str) -> list[Any]:
    ctx = CheckContext(output=output, trace=Trace(), sample=s)
    return asyncio.run(evaluate(specs, ctx))


def test_equal_assertions_share_their_content_and_compiled_checks(tmp_path):
    loaded = load_samples([write_set(tmp_path, "jsonl")])
    a, _, b, _ = loaded.samples
    for k in (0, 1, 3):
        assert a.assertions[k] is not b.assertions[k]  # each sample has its own spec...
        assert a.assertions[k].raw is b.assertions[k].raw  # ...over one shared content
        assert a.assertions[k].compiled is b.assertions[k].compiled
    assert a.assertions[0].compiled is prepare_schema(a.assertions[0])  # one validator per schema
    assert a.assertions[1].compiled is not None
    assert a.capability is b.capability
    assert a.assertions[2].raw is not b.assertions[2].raw  # different references stay apart
    assert a.raw is not b.raw
    assert a.raw["assertions"][0] is b.raw["assertions"][0]
    assert (a.assertions[3].children[1].source.line, b.assertions[3].children[1].source.line) == (1, 3)


def test_running_one_sample_does_not_change_another_that_shares_its_assertions(tmp_path):
    loaded = load_samples([write_set(tmp_path, "json")])
    a, _, b, _ = loaded.samples
    before = copy.deepcopy([a.raw, b.raw])
    bad = _run(a.assertions, a, '{"verdict": "unsure"}')
    good = _run(b.assertions, b, '{"verdict": "vulnerable", "why": "a b"}')
    assert [r.status for r in bad[:2]] == [Status.FAILED, Status.FAILED]
    assert [r.status for r in good[:2]] == [Status.PASSED, Status.PASSED]
    assert _run(a.assertions, a, '{"verdict": "vulnerable"}')[0].status is Status.PASSED
    assert [a.raw, b.raw] == before  # nothing a check does writes into the shared dicts


def test_changing_one_spec_gives_it_its_own_copy(tmp_path):
    a, _, b, _ = load_samples([write_set(tmp_path, "yaml")]).samples
    a.assertions[1].weight = 3.0
    a.assertions[3].children = []
    assert (a.assertions[1].weight, b.assertions[1].weight) == (3.0, 1.0)
    assert (len(a.assertions[3].children), len(b.assertions[3].children)) == (0, 2)
    assert b.assertions[1].source.path == "samples[2].assertions[1]"


def test_a_written_out_spec_equals_one_built_by_hand():
    spec = AssertionSpec.of(type="contains", raw={"type": "contains", "value": "x"}, weight=2.0)
    assert spec == AssertionSpec.of(type="contains", raw={"type": "contains", "value": "x"}, weight=2.0)
    assert spec != AssertionSpec.of(type="contains", raw={"type": "contains", "value": "x"})
    assert spec.children == ()
    assert spec.source is None
    assert "weight=2.0" in repr(spec)


def test_the_several_item_fields_of_a_sample_are_tuples(tmp_path):
    a, conv, b, _ = load_samples([write_set(tmp_path, "jsonl")]).samples
    assert a.mocks == ()
    assert b.tools == ()
    assert a.turns == ()
    assert conv.history == ()
    assert json.dumps(a.inlined_urls) == "[]"
    assert type(conv.turns) is tuple
    assert all(type(s.capability) is tuple for s in (a, conv, b))
    with pytest.raises(AttributeError):
        a.mocks.append({"tool": "x"})  # visibly immutable: a tuple has no append
    a.history += ({"role": "user", "content": "hi"},)
    assert a.history == ({"role": "user", "content": "hi"},)
    assert b.history == ()
    built = Sample(sample_id="x", prompt="p", capability=["search"], mocks=[{"tool": "Read", "return": "x"}])
    assert built.capability == ("search",)
    assert type(built.mocks) is tuple  # lists given in Python are kept as tuples


def test_equal_values_are_shared_but_json_types_stay_apart():
    shared = Sharer()
    one = shared.sample({"a": {"v": 1}, "b": {"v": 1.0}, "c": {"v": True}, "d": {"v": 1}, "e": [-0.0, 0.0]})
    assert one["a"] is one["d"]
    assert one["a"] is not one["b"]
    assert one["b"] is not one["c"]
    assert [str(x) for x in one["e"]] == ["-0.0", "0.0"]
    two = shared.sample({"x": {"v": 1}, "keys": ["a", "b"]})
    assert two["x"] is one["a"]
    assert shared.sample([1]) == [1]


def test_the_sharing_tables_are_bounded():
    shared = Sharer(limit=8)
    for i in range(100):
        shared.sample({"id": f"s{i}", "v": {"n": i}, "f": i + 0.5})
        shared.path(("assertions", i))
    tables = (shared._containers, shared._strings, shared._numbers, shared._paths)
    assert all(0 < len(table) <= 8 for table in tables)


def test_the_compile_caches_are_bounded():
    for i in range(MAX_VALIDATORS + 20):
        prepare_schema(AssertionSpec.of(type="json_schema", raw={"type": "json_schema", "schema": {"minLength": i}}))
    assert len(_VALIDATORS) == MAX_VALIDATORS
    assert compile_regex.cache_info().maxsize is not None
    assert compile_regex("a+b", "i") is compile_regex("a+b", "i")


# --- JSON Lines, one line at a time --------------------------------------------------------------


def test_a_json_lines_file_larger_than_the_size_cap_loads(tmp_path, monkeypatch):
    path = write(tmp_path, "big.samples.jsonl", "".join(json.dumps(sample(i)) + "\n" for i in range(200)))
    monkeypatch.setenv("OMK_MAX_SAMPLE_FILE_BYTES", "2000")  # each line is below it, the file far above
    assert path.stat().st_size > 50 * 2000
    assert len(load_samples([path]).samples) == 200


def test_a_json_lines_file_is_never_in_memory_whole(tmp_path):
    path = tmp_path / "eval-samples.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(2000):  # ~2 kB a line, nearly all of it notes that are equal in every line
            f.write(json.dumps({"sample_id": f"s{i}", "prompt": "p" * 40, "x-notes": "n" * 2000}) + "\n")
    tracemalloc.start()
    try:
        loaded = load_samples([path])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded.samples) == 2000
    assert len(loaded.warnings) == 0
    assert peak < path.stat().st_size * 0.5  # the notes are kept once; the text of the file never was whole


def test_a_line_over_the_cap_is_an_error_naming_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("OMK_MAX_SAMPLE_FILE_BYTES", "600")
    long = {"sample_id": "long", "prompt": "p" * 700}
    text = f'{{"sample_id": "a", "prompt": "p"}}\n\n{json.dumps(long)}\n{{"sample_id": "b"}}\n'
    assert problems(tmp_path, "x.jsonl", text) == [
        "x.jsonl:3: samples[1]: this line is longer than the 600 bytes omk reads in one line (OMK_MAX_SAMPLE_FILE_BYTES)",
        'x.jsonl:4: samples[2] (b): "prompt" is required',
    ]


def test_a_json_file_over_the_cap_points_at_json_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("OMK_MAX_SAMPLE_FILE_BYTES", "100")
    (found,) = problems(tmp_path, "s.json", json.dumps([sample(0)]))
    assert found.startswith("s.json: cannot read the file: ")
    assert "larger than the 100 bytes omk reads" in found
    assert found.endswith("; a JSON Lines file (*.jsonl, one sample per line) has no file-size limit")


def test_json_lines_problems_ids_and_warnings_keep_their_lines(tmp_path):
    text = (
        '{"sample_id": "a", "prompt": "p", "promt": "q"}\n'
        '{"sample_id": "b", "prompt": "p", "assertions": [{"type": "regex", "pattern": "("}]}\n'
        "\n"
        '{"sample_id": "a", "prompt": "p"}\n'
        '{"sample_id": "c", "prompt": "p", "difficulty": "hardest"}\n'
    )
    found = problems(tmp_path, "x.jsonl", text)
    assert [line.split(": ", 2)[:2] for line in found] == [
        ["x.jsonl:1", "samples[0] (a) promt"],
        ["x.jsonl:2", "samples[1] (b) assertions[0].pattern"],
        ["x.jsonl:4", "samples[2] (a) sample_id"],
        ["x.jsonl:5", "samples[3] (c) difficulty"],
    ]
    assert found[0].endswith("; ignored")
    assert found[2].endswith('duplicate sample_id "a" (first defined at line 1)')


def test_a_record_cut_short_is_reported_at_its_own_line_and_column(tmp_path):
    text = '{"sample_id": "a", "prompt": "p"\r\n{"sample_id": "b", "prompt": "p"\n{"sample_id": "c", "prompt": "p"'
    assert problems(tmp_path, "x.jsonl", text) == [
        f"x.jsonl:{n}: samples[{n - 1}]: JSON parse error: Expecting ',' delimiter (column {33 + (n == 1)})" for n in (1, 2, 3)
    ]


def test_a_json_lines_file_that_is_not_utf8_is_one_problem(tmp_path):
    text = b'{"sample_id": "a", "prompt": "p"}\n{"sample_id": "b", "difficulty": "x"}\n{"sample_id": "c", "prompt": "\xff"}\n'
    other = write(tmp_path, "b.jsonl", '{"sample_id": "a", "prompt": "p"}\n')
    with pytest.raises(InputError) as info:
        load_samples([write(tmp_path, "a.jsonl", text), other])
    assert [line.replace(f"{tmp_path}/", "") for line in info.value.lines()] == [
        "a.jsonl:3: not valid UTF-8 text (byte 0xff at column 31); save the file as UTF-8",
    ]  # and "a" of the unreadable file is no duplicate of b.jsonl's


def test_a_blank_json_lines_file_is_empty(tmp_path):
    assert problems(tmp_path, "x.jsonl", "\n  \n") == [
        'x.jsonl: the file is empty; expected an array of samples or an object with a "samples" field'
    ]


@pytest.mark.parametrize("name", _TUPLES)
def test_a_list_given_for_a_tuple_field_becomes_a_tuple(name):
    """Each of a sample's tuple fields given as a list (an in-memory sample) is kept as a tuple."""
    sample = Sample(sample_id="a", prompt="p", **{name: [{"k": 1}]})
    assert getattr(sample, name) == ({"k": 1},)
    assert type(getattr(sample, name)) is tuple


def test_specs_equal_by_what_they_say_are_not_unequal():
    """`==` and `!=` of two specs agree (the spec compares its type, content and place, not how
    it stores them): a spec placed in a sample and a copy with its own core and source."""
    from omk.loader.places import SampleRef

    origin = SampleRef("s.json", 3, 0, None)
    placed = AssertionSpec.of(type="contains", raw={"type": "contains", "value": "x"})
    placed.place(origin, ("assertions", 0))
    alone = AssertionSpec.of(type="contains", raw=placed.raw, source=placed.source)
    assert placed == alone
    assert (placed != alone) is False
