"""The quick ways of loading never accept what the careful way refuses, nor read it differently.

A JSON Lines line is read first through the load's memo of its parts' text
(omk.loader.record_memo): whatever it answers must be exactly what the careful way
(`parse_record`, then `Sharer.sample`) makes of the line, and it must answer None whenever the
careful way finds a problem (a repeated key above all: the memo checks for one by counting
colons). A top-level assertion the validator found clean is not checked again in the same load
(omk.loader.validate): the verdicts with and without that memo must be the same.

The inputs are valid samples mutated at random (seeded, so a failure repeats): text edits for
the parsing, value edits for the validation; then whole files, loaded both ways.
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import pytest

import omk.loader as loader_module
from omk.core.errors import InputError
from omk.loader import load_samples
from omk.loader.json_lines import parse_record
from omk.loader.record_memo import RecordMemo
from omk.loader.share import DEEP, Sharer
from omk.loader.validate import check_sample

SCHEMA = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["a", "b"]}, "n": {"minimum": 1}}}


def base_samples() -> list[dict]:
    """Valid samples that between them use what the memo and the validator take apart."""
    return [
        {
            "sample_id": "s1",
            "prompt": "Review: a:b and \"quoted\": colon",
            "capability": ["security", "sql"],
            "assertions": [
                {"type": "contains", "value": "injection"},
                {"type": "regex", "pattern": "param(eter)?i[sz]ed"},
                {"type": "json_schema", "schema": SCHEMA},
                {"type": "max_length", "value": 2000, "weight": 0.5},
                {"type": "rouge_n_min", "reference": "{\"verdict\": \"a\"}", "n": 1, "threshold": 0.75},
                {"type": "assert-set", "mode": "any", "children": [{"type": "contains", "value": "x"}, {"type": "contains", "value": "y"}]},
            ],
            "dimensions": {"security": "finds it", "tone": "plain"},
        },
        {
            "sample_id": "s2",
            "prompt": "Use the tool",
            "context": "the docs say: yes",
            "mocks": [{"tool": "Read", "return": {"text": "ok", "lines": [1, 2.5, -0.0, True, None]}}],
            "assertions": [
                {"type": "mock_hit", "value": "Read:1"},
                {"type": "faithfulness"},
                {"type": "contains", "value": "injection"},
                {"type": "word_count_max", "value": 90},
            ],
            "x-team": {"owner": "me"},
        },
        {
            "sample_id": "s3",
            "turns": [
                {"prompt": "first", "context": "c", "assertions": [{"type": "contains", "value": "a"}]},
                {"prompt": "second", "assertions": [{"type": "faithfulness"}, {"type": "contains", "value": "injection"}]},
            ],
            "assertions": [{"type": "contains", "value": "injection"}],
        },
    ]


INSERTS = [
    '"a": 1, ', '"prompt": "again", ', '"type": "regex", ', '":', ":", "\\u003a", "\\u003A", ",", "]", "}", "[", "{",
    '"', "1e400", "NaN", "-Infinity", "\\ud800", "\\\\", " ", "\t", "\x01", "0", "-", ".5", "1" * 40, "é", "\\u00e9",
    '{"type": "contains", "value": "x"}, ', '"value": "Read:1", ', '"n": 1.0, ', '"weight": true, ',
]  # fmt: skip
KEY = re.compile(r'"([A-Za-z_-]+)": ')


def mutate_text(text: str, rng: random.Random) -> str:
    """One random edit of a JSON line: most keep it JSON, many repeat a key, some break it."""
    choice = rng.randrange(6)
    if choice <= 1:  # repeat a member's key just before it (often the same object: a repeated key)
        keys = list(KEY.finditer(text))
        if keys:
            m = rng.choice(keys)
            value = rng.choice(['0', '"v"', "[]", "{}", "null", '"a:b"', '{"k": 1, "k": 2}'])
            return text[: m.start()] + f'"{m.group(1)}": {value}, ' + text[m.start() :]
    if choice == 2:  # delete a short span
        at = rng.randrange(len(text))
        return text[:at] + text[at + rng.randint(1, 3) :]
    if choice == 3:  # a key or a value swapped for another one of the line
        keys = list(KEY.finditer(text))
        if len(keys) >= 2:
            a, b = rng.sample(keys, 2)
            return text[: a.start(1)] + b.group(1) + text[a.end(1) :]
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(INSERTS) + text[at:]


def careful(text: str) -> tuple[object, bool]:
    value, issues = parse_record(text, 1, 0)
    return Sharer().sample(value) if value is not None else None, bool(issues)


def lines_to_try(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = [json.dumps(s, ensure_ascii=rng.random() < 0.5) for s in base_samples()]
    texts += [json.dumps(s, separators=(",", ":")) for s in base_samples()]
    out = list(texts)
    for _ in range(count):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            text = mutate_text(text, rng)
        out.append(text)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_the_memo_reads_a_line_as_the_careful_way_or_not_at_all(seed):
    memo = RecordMemo(Sharer())  # one memo for all the lines, as in a load: parts repeat between them
    answered = refused = 0
    for text in lines_to_try(seed, 1500):
        quick = memo.record(text.encode("utf-8"))
        value, has_issues = careful(text)
        if quick is None:
            refused += 1
            continue
        answered += 1
        assert not has_issues, f"the memo accepted a line the careful way refuses: {text!r}"
        # json.dumps tells 1, 1.0 and true apart, and keeps the key order
        assert json.dumps(quick) == json.dumps(value), text
    assert answered > 300  # both ways were taken
    assert refused > 300


def test_a_repeated_key_is_never_missed():
    memo = RecordMemo(Sharer())
    lines = [
        '{"sample_id": "a", "prompt": "p", "sample_id": "b"}',
        '{"sample_id": "a", "prompt": "x:y", "prompt": "p"}',  # the dropped value's colon
        '{"a:b": 1, "a:b": 2}',  # a key with a colon
        '{"sample_id": "a", "assertions": [{"type": "contains", "value": "x"}]}',
        '{"sample_id": "a", "assertions": [{"type": "contains", "value": "x", "value": "y"}]}',
        '{"sample_id": "a", "assertions": [{"type": "contains", "value": "x"}], "assertions": []}',
        '{"sample_id": "a", "m": {"k": {"z": 1, "z": 2}}}',
        '{"sample_id": "a\\u003a", "sample_id": "b"}',  # an escaped colon
        '{"p": "\\":", "p": 1}',
    ]
    for text in lines:
        quick = memo.record(text.encode())
        _, has_issues = careful(text)
        assert (quick is None) or not has_issues, text
    assert memo.record(lines[3].encode()) is not None  # and a valid line is read


def mutate_value(sample: dict, rng: random.Random) -> dict:
    """One random edit of a sample's data: a field of an assertion, a mock, a context."""
    sample = copy.deepcopy(sample)
    turns = sample.get("turns") if isinstance(sample.get("turns"), list) else []
    lists = [x for x in [sample.get("assertions"), *(t.get("assertions") for t in turns)] if isinstance(x, list)]
    items = [a for group in lists for a in group if isinstance(a, dict)]
    items += [c for a in items if isinstance(a.get("children"), list) for c in a["children"] if isinstance(c, dict)]
    edit = rng.randrange(5)
    if edit == 0 and items:
        item = rng.choice(items)
        key = rng.choice([*item, "value", "weight", "not", "children", "extra"])
        item[key] = rng.choice([None, "x", "Read:0", "Write:1", 0, -1, 1.5, float("inf"), True, [], {}, [{"type": "contains", "value": 1}]])
    elif edit == 1:
        sample.pop(rng.choice(["context", "mocks", "prompt"]), None)
    elif edit == 2:
        sample["mocks"] = rng.choice([[], [{"tool": "Write", "return": "ok"}], "no"])
    elif edit == 3 and items:
        item = rng.choice(items)
        item["type"] = rng.choice(["contains", "faithfulness", "mock_hit", "assert-set", "judge", "nope", "context_recall"])
    elif lists and items:
        lists[0].append(copy.deepcopy(rng.choice(items)))
    return sample


@pytest.mark.parametrize("seed", range(3))
def test_the_validators_memo_changes_no_verdict(seed):
    rng = random.Random(seed)
    shared, seen = Sharer(), {}
    samples = base_samples()
    for _ in range(600):
        sample = rng.choice(samples)
        for _ in range(rng.randint(0, 2)):
            sample = mutate_value(sample, rng)
        raw = shared.sample(json.loads(json.dumps(sample)))  # shared as loading shares it
        assert check_sample(raw, seen) == check_sample(raw, None), raw
    assert sum(1 for entry in seen.values() if entry[2]) >= 5  # top-level verdicts were kept and used


def test_a_clean_assertion_is_checked_again_where_its_sample_matters():
    """mock_hit and faithfulness look at their sample: found clean in one, wrong in the next."""
    shared, seen = Sharer(), {}
    good = shared.sample({"sample_id": "a", "prompt": "p", "context": "c", "mocks": [{"tool": "Read", "return": "x"}],
                          "assertions": [{"type": "mock_hit", "value": "Read:1"}, {"type": "faithfulness"}, {"type": "contains", "value": "x"}]})  # fmt: skip
    bad = shared.sample({"sample_id": "b", "prompt": "p", "assertions": [{"type": "mock_hit", "value": "Read:1"}, {"type": "faithfulness"}]})
    assert check_sample(good, seen) == []
    assert good["assertions"][0] is bad["assertions"][0]  # the same shared dict
    assert [p for p, _ in check_sample(bad, seen)] == [("assertions", 0, "value"), ("assertions", 1)]
    assert seen[id(good["assertions"][2])][2]  # the memo was there to be used


class _NoMemo:
    def __init__(self, shared: Sharer):
        pass

    def record(self, line: bytes) -> None:
        return None


def outcome(path: Path) -> tuple[str, list[object], list[str]]:
    try:
        loaded = load_samples([path])
    except InputError as exc:
        return str(exc), [], []
    samples = [
        (s.raw, s.source.line if s.source else None, [(a.type, a.raw, a.source.line if a.source else None) for a in s.assertions])
        for s in loaded.samples
    ]
    return "", samples, [str(w) for w in loaded.warnings]


@pytest.mark.parametrize("seed", range(3))
def test_a_file_loads_the_same_with_and_without_the_memo(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    texts = lines_to_try(seed, 200)
    lines = []
    for i in range(300):  # mostly valid lines (each its own id), some broken
        if rng.random() < 0.85:
            sample = base_samples()[rng.randrange(3)]
            if rng.random() < 0.3:
                sample = mutate_value(sample, rng)
            sample["sample_id"] = f"s{i}" if rng.random() < 0.97 else "s1"
            lines.append(json.dumps(sample))
        else:
            lines.append(rng.choice(texts))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with_memo = outcome(path)
    monkeypatch.setattr(loader_module, "RecordMemo", _NoMemo)
    assert outcome(path) == with_memo


@pytest.mark.parametrize("seed", range(3))
def test_a_json_file_loads_the_same_with_and_without_the_memo(tmp_path, monkeypatch, seed):
    """A JSON file is read sample by sample through the memo when it is plainly valid."""
    rng = random.Random(seed)
    texts = lines_to_try(seed, 40)
    for round_ in range(12):
        samples = [json.dumps({**base_samples()[rng.randrange(3)], "sample_id": f"s{i}"}, indent=rng.choice([None, 2]))
                   for i in range(rng.randint(1, 6))]  # fmt: skip
        if round_ % 3 == 1:  # one sample not plainly valid, or a repeated id
            samples.insert(rng.randrange(len(samples) + 1), rng.choice([*texts, samples[0]]))
        body = ",\n  ".join(samples)
        text = rng.choice([f'{{"samples": [\n  {body}\n]}}', f"[{body}]", f'{{"samples": [{body}], "x": 1}}',
                           f'{{"samples": [{body}], "samples": []}}', f'\ufeff  [ {body} ]\n'])  # fmt: skip
        path = tmp_path / f"s{round_}.json"
        path.write_text(text, encoding="utf-8")
        with monkeypatch.context() as m:
            with_memo = outcome(path)
            m.setattr(loader_module, "json_document", lambda text, memo: None)
            assert outcome(path) == with_memo, text


@pytest.mark.parametrize("depth", [10, DEEP - 2, DEEP, 200, 300, 980, 995, 1200])
def test_deep_nesting_is_left_to_the_careful_way(depth):
    """Where the careful way's parse stops for nesting, the memo never reads the line: it reads
    none nested deeper than the `Sharer` shares."""
    text = '{"sample_id": "a", "prompt": "p", "x-deep": ' + "[" * depth + "]" * depth + "}"
    quick = RecordMemo(Sharer()).record(text.encode())
    assert quick is None if depth >= DEEP else quick is not None
    value, has_issues = careful(text)
    assert quick is None or (not has_issues and json.dumps(quick) == json.dumps(value))


def sharing(records: list[object]) -> list[object]:
    """Which containers and strings of `records` are one object: each written as the order in
    which it was first met, walking every record in turn."""
    first: dict[int, int] = {}
    out: list[object] = []
    keep: list[object] = []  # held, so no id is reused during the walk

    def walk(value: object) -> None:
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


@pytest.mark.parametrize("seed", range(3))
def test_the_memo_shares_what_the_careful_way_shares(seed):
    """Not only equal values: the same parts are one object (what the validator's and the
    builder's memos, keyed by the object, rely on), line after line of one load."""
    rng = random.Random(seed)
    lines = []
    for i in range(200):
        sample = base_samples()[rng.randrange(3)]
        if rng.random() < 0.4:
            sample = mutate_value(sample, rng)
        sample["sample_id"] = f"s{i}"
        lines.append(json.dumps(sample, separators=rng.choice([(", ", ": "), (",", ":")])))
    memo, careful_sharer = RecordMemo(Sharer()), Sharer()
    quick, refused = [], 0
    for line in lines:  # as a load reads them: a line the memo refuses is read the careful way
        record = memo.record(line.encode())
        if record is None:
            refused += 1
            record = memo.shared.sample(parse_record(line, 1, 0)[0])
        quick.append(record)
    slow = [careful_sharer.sample(parse_record(line, 1, 0)[0]) for line in lines]
    assert refused < len(lines) // 4  # most lines were read by the memo
    assert json.dumps(quick) == json.dumps(slow)
    assert sharing(quick) == sharing(slow)
    assert len(set(sharing(quick))) < len(sharing(quick)) // 2  # most parts were shared


SHELL_VALUES = [None, "", " ", "x", "easy", "hard", "human", 0, 1.5, True, [], ["a"], [""], ["a", 1], {}, {"k": "v"},
                {"k": ""}, {"": "v"}, [{"tool": "Read", "return": "x"}], [{"tool": ""}], {"notes": "n"}, {"cli_available": [1]}]  # fmt: skip


def mutate_shell(sample: dict, rng: random.Random) -> dict:
    """One random edit of a sample's own fields: a known field given another value, a field
    dropped, or a field the schema does not know (an "x-" one or another)."""
    sample = dict(sample)
    edit = rng.randrange(4)
    if edit == 0:
        sample.pop(rng.choice(["sample_id", "prompt", "capability", "assertions"]), None)
    elif edit == 1:
        sample[rng.choice(["x-team", "x-", "notes", "prompts"])] = rng.choice(SHELL_VALUES)
    else:
        field = rng.choice(["sample_id", "prompt", "context", "difficulty", "provenance", "capability", "dimensions",
                            "mocks", "environment", "tripwire", "assertions", "tools", "category", "workspace"])  # fmt: skip
        sample[field] = rng.choice(SHELL_VALUES)
    return sample


@pytest.mark.parametrize("seed", range(3))
def test_the_shell_checked_field_by_field_says_what_the_whole_check_says(seed):
    """The sample shell's "valid?" taken field by field, a value that samples share checked
    once (omk.loader.validate.Shell), against the whole shell's compiled check."""
    from omk.loader.validate import Shell, schemas

    rng, shared, seen = random.Random(seed), Sharer(), {}
    whole, shell = schemas().sample, Shell(schemas().sample._schema)
    said = {True: 0, False: 0}
    for _ in range(1500):
        sample = rng.choice(base_samples())
        for _ in range(rng.randint(0, 3)):
            sample = mutate_shell(sample, rng)
        raw = shared.sample(json.loads(json.dumps(sample)))  # shared as loading shares it
        verdict = shell.valid(raw, seen)
        assert verdict == (whole.errors(raw) == []), raw
        assert shell.valid(raw) == verdict  # and without the memo
        said[verdict] += 1
    assert min(said.values()) > 300  # both answers were given
    assert len(seen) > 10  # shared values were kept, and their verdicts used


def test_content_keys_tell_apart_what_json_tells_apart():
    """The `Sharer` keys content by its JSON text (msgspec's, or json's where msgspec would write
    null): contents that differ never get one key, equal ones always do."""
    from omk.loader.share import _key

    scalars = [None, True, False, 0, 1, -1, 0.0, -0.0, 1.0, 0.75, 1e300, float("inf"), float("-inf"), float("nan"),
               10**30, 10**400, "", "null", "1", "é", "\u2028", "a\"b", "x" * 300]  # fmt: skip
    values = [*([v] for v in scalars), *({"k": v} for v in scalars), *({"k": v, "z": None} for v in scalars)]
    values += [{"a": 1, "b": 2}, {"b": 2, "a": 1}, [[]], [{}], {"k": []}, {"k": {}}, [1, [2]], [[1], 2]]
    keys = [_key(v) for v in values]
    assert None not in keys
    assert len(set(keys)) == len(values)
    assert [_key(json.loads(json.dumps(v))) for v in values[:3]] == keys[:3]  # the same content, read again
