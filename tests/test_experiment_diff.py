"""omk diff's core: what changed sample by sample between run A and run B."""

from __future__ import annotations

import pytest
from cli_support import run_omk
from experiment_support import error, record
from hypothesis import given, settings
from hypothesis import strategies as st

from omk.stats import diff_runs
from omk.stats.diff import KINDS


def test_every_kind_of_change_is_listed_worst_first():
    a = {
        "flip_down": record(3.8),
        "flip_up": record(3.0),
        "breaks": record(4.0),
        "fixed": error(),
        "drops": record(4.5),
        "rises": record(3.6),
        "small": record(4.0),
        "same": record(4.2),
        "gone": record(4.0),
    }
    b = {
        "flip_down": record(3.4),
        "flip_up": record(3.9),
        "breaks": error(),
        "fixed": record(4.0),
        "drops": record(4.4),
        "rises": record(3.7),
        "small": record(3.91),
        "same": record(4.2),
        "fresh": record(2.0),
    }
    d = diff_runs(a, b, trivial=0.1)
    kinds = {c.sample_id: c.kinds for c in d.changes}
    assert kinds == {
        "flip_down": ("pass_to_fail", "score_down"),
        "flip_up": ("fail_to_pass", "score_up"),
        "breaks": ("pass_to_fail", "new_error"),
        "fixed": ("fail_to_pass", "error_fixed"),
        "drops": ("score_down",),
        "rises": ("score_up",),
        "fresh": ("new",),
        "gone": ("removed",),
    }
    order = [c.sample_id for c in d.changes]
    assert order == ["flip_down", "breaks", "drops", "flip_up", "fixed", "rises", "fresh", "gone"]
    assert (d.a_samples, d.b_samples, d.unchanged, d.regressed) == (9, 9, 2, 3)
    block = d.to_dict()
    assert block["counts"]["score_down"] == 2
    assert block["counts"]["new"] == 1
    change = next(c for c in block["changes"] if c["sample_id"] == "breaks")
    assert change["a"] == {"status": "ok", "passed": True, "composite": 4.0}
    assert change["b"] == {"status": "error", "passed": False, "composite": None}
    assert change["delta"] is None


def test_repeats_are_folded_before_comparing():
    a = {"s": [record(4.0), record(4.2)]}
    b = {"s": [record(3.0), record(4.4), error()]}  # mean 3.7, passes 1 of 3
    (change,) = diff_runs(a, b).changes
    assert change.kinds == ("pass_to_fail", "score_down")
    assert change.delta == pytest.approx(-0.4)


def test_trivial_must_be_positive():
    with pytest.raises(ValueError):
        diff_runs({}, {}, trivial=0)


composites = st.floats(min_value=1, max_value=5, allow_nan=False).map(lambda x: round(x, 2))
sides = st.dictionaries(st.sampled_from([f"s{i}" for i in range(8)]), st.one_of(composites.map(record), st.just(error())))


@settings(max_examples=60, deadline=None)
@given(sides, sides)
def test_reversing_the_runs_mirrors_every_change(a, b):
    mirror = {"pass_to_fail": "fail_to_pass", "new_error": "error_fixed", "score_down": "score_up", "new": "removed"}
    mirror |= {v: k for k, v in mirror.items()}
    forward = {c.sample_id: set(c.kinds) for c in diff_runs(a, b).changes}
    backward = {c.sample_id: {mirror[k] for k in c.kinds} for c in diff_runs(b, a).changes}
    assert forward == backward
    d = diff_runs(a, b)
    assert d.unchanged + sum(1 for c in d.changes if c.a_status and c.b_status) == len(set(a) & set(b))
    assert all(k in KINDS for c in d.changes for k in c.kinds)


def test_omk_diff_names_both_runs_and_the_assertions_that_changed(tmp_path):
    import json
    import os

    (tmp_path / "s.yaml").write_text(
        "samples:\n"
        "  - sample_id: refund\n    prompt: Refund window?\n    assertions:\n"
        "      - {type: contains, value: 30 days}\n      - {type: max_length, value: 200}\n"
        "  - sample_id: hello\n    prompt: hi\n    assertions: [{type: contains, value: hi}]\n",
        encoding="utf-8",
    )
    answers = {"a.jsonl": "Refunds within 30 days.", "b.jsonl": "Refunds within two weeks."}
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("OMK_TARGET", None)
    for name, refund in answers.items():
        lines = [{"sample_id": "refund", "output": refund}, {"sample_id": "hello", "output": "hi"}]
        (tmp_path / name).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        run = ("eval", "s.yaml", "--target", f"replay:{name}", "--no-judge", "--quiet", "--out", name[0])
        run_omk(*run, cwd=tmp_path, base=env, drop=(), columns=None, timeout=120)
    proc = run_omk("diff", "a", "b", cwd=tmp_path, base=env, drop=(), columns=None, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == [
        "A: a · target replay:a.jsonl",
        "B: b · target replay:b.jsonl",
        "1 sample changed, 1 unchanged (A 2, B 2 samples): 1 got worse, 0 better (score changes under 0.1 ignored)",
    ]
    assert lines[3].startswith("  refund: pass to fail, score down · pass 5.00 → fail ")
    assert lines[4:] == ["    assertions[0] contains '30 days': passed → failed — output does not contain \"30 days\""]
    listed = run_omk("diff", "a", "b", "--json", cwd=tmp_path, base=env, drop=(), columns=None, timeout=120)
    data = json.loads(listed.stdout)
    assert data["a_target"] == "replay:a.jsonl"
    assert data["b_target"] == "replay:b.jsonl"
    (change,) = data["changes"][0]["assertions"]
    assert change["where"] == "assertions[0]"
    assert change["a"]["status"] == "passed"
    assert change["b"]["status"] == "failed"
