"""The shape of omk's data: one class per name across the package, and report JSON read back only
through the records of omk/records (each with one `to_json` and one checked `from_json`)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from collections import defaultdict
from pathlib import Path

OMK = Path(__file__).resolve().parent.parent / "omk"

# Keys that only results, reports and experiment blocks have: reading one of them from a mapping
# (`x["scores"]`, `x.get("composite")`) outside omk/records is a hand-written reader of report JSON.
REPORT_KEYS = frozenset(
    {"scores", "composite", "judge_skipped", "duration_ms", "mock_stats", "per_sample", "gate_passed",
     "b_better", "a_better", "always_passed", "never_passed", "skipped_judge_items",
     "agreement", "mean_abs_diff", "pair_count", "sample_count", "pearson", "prompt_hash", "prompt_version", "debias_length", "models"}
)  # fmt: skip

# Readers known to remain, as (module, key). Each must still exist (the test fails when one is gone,
# so the entry goes with the fix). None today.
KNOWN_READERS: set[tuple[str, str]] = set()


def class_names(root: Path) -> dict[str, list[str]]:
    """Every class defined at the top of a module under `root`, by name: where each is defined."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found[node.name].append(str(path.relative_to(root.parent)))
    return found


def hand_readers(root: Path, skip: str = "records") -> set[tuple[str, str]]:
    """(module, key) for each read of a report key from a mapping outside `root/skip`."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(root.parent))
        for node in ast.walk(tree):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                key = node.args[0].value
            if key in REPORT_KEYS:
                found.add((where, key))
    return found


def test_one_class_per_name_across_the_package():
    twice = {name: places for name, places in class_names(OMK).items() if len(places) > 1}
    assert twice == {}, f"class names defined more than once: {twice}"


def test_the_class_check_finds_a_name_defined_twice(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "x.py").write_text("class Trace:\n    pass\n", encoding="utf-8")
    (pkg / "y.py").write_text("class Trace:\n    pass\n\nclass Other:\n    pass\n", encoding="utf-8")
    found = class_names(pkg)
    assert sorted(found["Trace"]) == ["pkg/a/x.py", "pkg/y.py"] and found["Other"] == ["pkg/y.py"]


def test_no_module_outside_the_records_reads_report_json_by_hand():
    found = hand_readers(OMK)
    assert found - KNOWN_READERS == set(), "read these through omk/records instead"
    assert KNOWN_READERS - found == set(), "a known reader is gone: delete its entry"


def test_the_reader_check_finds_subscripts_and_gets(tmp_path):
    pkg = tmp_path / "omk"
    (pkg / "records").mkdir(parents=True)
    (pkg / "records" / "ok.py").write_text("def f(d):\n    return d['scores']\n", encoding="utf-8")
    (pkg / "bad.py").write_text(
        "def f(d):\n    d['composite'] = 1\n    return d.get('duration_ms'), d['scores']['fact'], d.get('other')\n",
        encoding="utf-8",
    )
    assert hand_readers(pkg) == {("omk/bad.py", "duration_ms"), ("omk/bad.py", "scores")}


def unfrozen_records(modules: list[object]) -> list[str]:
    """Each dataclass defined in `modules` that is not frozen, or holds a list or dict in a field
    typed as one, as `Class` or `Class.field`."""
    found = []
    for module in modules:
        for value in vars(module).values():
            if not (dataclasses.is_dataclass(value) and isinstance(value, type) and value.__module__ == getattr(module, "__name__", None)):
                continue
            if not value.__dataclass_params__.frozen:
                found.append(value.__name__)
            found += [f"{value.__name__}.{f.name}" for f in dataclasses.fields(value) if str(f.type).startswith(("list[", "dict["))]
    return found


def test_every_record_omk_writes_is_frozen_with_tuples_for_several_items():
    modules = [importlib.import_module(f"omk.records.{p.stem}") for p in sorted((OMK / "records").glob("*.py"))]
    assert unfrozen_records(modules) == []


def test_the_frozen_check_finds_a_mutable_record_and_a_list_field():
    import types

    module = types.ModuleType("fake_records")

    @dataclasses.dataclass
    class Loose:
        items: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class Tight:
        items: tuple[int, ...] = ()
        held: dict[str, int] = dataclasses.field(default_factory=dict)

    for cls in (Loose, Tight):
        cls.__module__ = "fake_records"
        setattr(module, cls.__name__, cls)
    assert unfrozen_records([module]) == ["Loose", "Loose.items", "Tight.held"]
