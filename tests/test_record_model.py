"""The shape of omk's data: one class per name across the package, report JSON read back only
through the records of omk/records (each with one `to_json` and one checked `from_json`), and every
frozen value a `msgspec.Struct` (`class X(msgspec.Struct, frozen=True)`), never a frozen dataclass."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import msgspec

OMK = Path(__file__).resolve().parent.parent / "omk"

# Keys that only omk's own JSON has (results, the report header, the experiment and pairwise blocks,
# run.json and experiment.json): reading one from a mapping (`x["scores"]`, `x.get("composite")`)
# anywhere outside omk/records is a hand-written reader of what omk wrote.
REPORT_KEYS = frozenset(
    {"scores", "composite", "judge_skipped", "duration_ms", "mock_stats", "per_sample", "gate_passed",
     "b_better", "a_better", "always_passed", "never_passed", "skipped_judge_items", "samples_files",
     "judge_cost_usd", "verdicts", "comparisons", "started_at", "finished_at", "trivial", "win_rate",
     "judge_models", "skipped_judge_reason", "pairwise", "experiment", "positions",
     "agreement", "mean_abs_diff", "pair_count", "sample_count", "pearson", "prompt_hash", "prompt_version", "debias_length", "models"}
)  # fmt: skip

# Keys omk's JSON shares with other JSON (sample files, API responses, judges' replies, label files,
# omk.yaml): a read of one is a hand reader unless the module is one of OTHER_JSON.
SHARED_KEYS = frozenset(
    {"sample_id", "status", "trace", "turns", "output", "judge", "target", "results", "seed", "variants",
     "summary", "error", "tokens", "tool_calls", "assertions", "repeat", "control", "treatment", "cli",
     "settings", "shard", "gold", "pairs", "verdict", "ablation", "require", "rule", "orders", "cached",
     "passed", "format", "cwd", "git", "run_id", "reports", "targets", "position", "triggering",
     "max_cost_increase"}
)  # fmt: skip

# Modules (or folders) that read JSON other than what omk wrote, and what it is. The replay target
# reads its own documented input format (`{"sample_id", "output", "trace"}` or `turns`, checked line
# by line with its own errors), which a run's results.jsonl meets by carrying the same fields; it
# reads nothing else of a result.
OTHER_JSON = {
    "omk/api.py": "the Python API's keyword options",
    "omk/assertions/": "assertion specs and hooks' replies",
    "omk/authoring/": "sample drafts",
    "omk/store/cache.py": "its own cache entries",
    "omk/cli/doctor_cmd.py": "the doctor's diagnostics, built in this process",
    "omk/cli/power_cmd.py": "the power figures, built in this process",
    "omk/doctor/": "the diagnostics it builds",
    "omk/engine/ablation.py": "omk.yaml",
    "omk/engine/pairwise.py": "the pairwise judge's parsed reply",
    "omk/engine/variant_choice.py": "omk.yaml's variants",
    "omk/engine/variants.py": "omk.yaml's variants",
    "omk/gold/": "people's labels files",
    "omk/inline/": "fetched pages",
    "omk/judge/": "judges' replies",
    "omk/llm/": "model API responses",
    "omk/loader/": "user sample files",
    "omk/report/html_paged.py": "its own table of words",
    "omk/sessions/": "Claude Code's and Codex's session files",
    "omk/targets/": "model API responses, CLI streams, replay files",
    "omk/testing/": "requests to the scripted model server",
    "omk/domain/trace_io.py": "traces as targets and replay files give them",
}

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


def hand_readers(root: Path, skip: str = "records", other: Mapping[str, str] = OTHER_JSON) -> set[tuple[str, str]]:
    """(module, key) for each read of a key of omk's JSON (`x[key]`, `x.get(key)`, or a Fields'
    `obj`/`objs`/`raw`, which only the records use on what omk wrote) outside `root/skip`: a key
    only omk's JSON has anywhere, a key it shares with other JSON outside the modules of `other`."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(root.parent))
        keys = REPORT_KEYS if any(where.startswith(prefix) for prefix in other) else REPORT_KEYS | SHARED_KEYS
        for node in ast.walk(tree):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "obj", "objs", "raw")  # a mapping's, or a Fields' outside the records
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                key = node.args[0].value
            if key in keys:
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
    assert sorted(found["Trace"]) == ["pkg/a/x.py", "pkg/y.py"]
    assert found["Other"] == ["pkg/y.py"]


def test_no_module_outside_the_records_reads_report_json_by_hand():
    found = hand_readers(OMK)
    assert found - KNOWN_READERS == set(), "read these through omk/records instead"
    assert KNOWN_READERS - found == set(), "a known reader is gone: delete its entry"


def test_each_module_said_to_read_other_json_still_reads_some():
    """An entry of OTHER_JSON whose module no longer reads any shared key goes, so the list does
    not grow into a blanket exemption."""
    found = hand_readers(OMK, other={})
    for prefix in OTHER_JSON:
        assert any(where.startswith(prefix) for where, _ in found), f"{prefix} reads no shared key now: delete its entry"


def test_the_reader_check_finds_subscripts_and_gets(tmp_path):
    pkg = tmp_path / "omk"
    (pkg / "records").mkdir(parents=True)
    (pkg / "loader").mkdir()
    (pkg / "records" / "ok.py").write_text("def f(d):\n    return d['scores'], d['sample_id']\n", encoding="utf-8")
    (pkg / "bad.py").write_text(
        "def f(d):\n    d['composite'] = 1\n    return d.get('duration_ms'), d['scores']['fact'], d.get('other'), d.obj('experiment')\n",
        encoding="utf-8",
    )
    (pkg / "resume.py").write_text("def f(m):\n    return m['seed'], m.get('variants'), m.get('pairwise')\n", encoding="utf-8")
    (pkg / "loader" / "read.py").write_text("def f(d):\n    return d['sample_id'], d.get('verdicts')\n", encoding="utf-8")
    assert hand_readers(pkg, other={"omk/loader/": "user sample files"}) == {
        ("omk/bad.py", "duration_ms"), ("omk/bad.py", "scores"), ("omk/bad.py", "experiment"),
        ("omk/resume.py", "seed"), ("omk/resume.py", "variants"), ("omk/resume.py", "pairwise"),
        ("omk/loader/read.py", "verdicts"),  # a key only omk's JSON has is a hand reader even there
    }  # fmt: skip


def unfrozen_records(modules: list[object]) -> list[str]:
    """Each class defined in `modules` that is a dataclass (a record is a msgspec struct), a
    struct that is not frozen, or a struct holding a list or dict in a field typed as one, as
    `Class` or `Class.field`."""
    found = []
    for module in modules:
        for value in vars(module).values():
            if not (isinstance(value, type) and value.__module__ == getattr(module, "__name__", None)):
                continue
            if dataclasses.is_dataclass(value):
                found.append(f"{value.__name__} (a dataclass)")
                continue
            if not issubclass(value, msgspec.Struct):
                continue
            if not value.__struct_config__.frozen:
                found.append(value.__name__)
            types = list(value.__annotations__.items())
            found += [f"{value.__name__}.{name}" for name, kind in types if str(kind).startswith(("list[", "dict["))]
    return found


def frozen_dataclasses(root: Path) -> list[str]:
    """Each class under `root` made a frozen value another way than as a msgspec struct: a
    `@dataclass(frozen=True)` or a class decorator named `record`, as `module:Class`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                name = ast.unparse(call.func if call else decorator).rsplit(".", 1)[-1]
                frozen = call is not None and any(k.arg == "frozen" and ast.unparse(k.value) == "True" for k in call.keywords)
                if name == "record" or (name == "dataclass" and frozen):
                    found.append(f"{path.relative_to(root.parent)}:{node.name}")
    return found


# Frozen dataclasses known to remain, as `module:Class`. Each must still exist (the test fails when
# one is gone, so the entry goes with it). `omk --help` builds its parser from the settings' table
# (omk/settings/spec.py) and loads nothing else that needs msgspec: importing msgspec there would
# cost more start-up than these three dataclasses do. TargetSettings is also a read-only Mapping (for
# target kinds written against a dict), which a struct cannot be (the metaclasses conflict).
KNOWN_DATACLASSES = {
    "omk/settings/spec.py:Flag",
    "omk/settings/spec.py:Api",
    "omk/settings/spec.py:Setting",
    "omk/settings/target_settings.py:TargetSettings",
}


def test_every_frozen_value_in_omk_is_a_msgspec_struct():
    found = set(frozen_dataclasses(OMK))
    assert found - KNOWN_DATACLASSES == set(), "write `class X(msgspec.Struct, frozen=True)` instead"
    assert KNOWN_DATACLASSES - found == set(), "a known frozen dataclass is gone: delete its entry"


def test_the_struct_check_finds_frozen_dataclasses_and_records(tmp_path):
    pkg = tmp_path / "omk"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "import dataclasses\nfrom dataclasses import dataclass\n\n"
        "@dataclass(frozen=True, slots=True)\nclass One:\n    x: int\n\n"
        "@dataclasses.dataclass(frozen=True)\nclass Two:\n    x: int\n\n"
        "@record\nclass Three:\n    x: int\n\n"
        "@dataclass(slots=True)\nclass Mutable:\n    x: int\n\n"
        "class Four(msgspec.Struct, frozen=True):\n    x: int\n",
        encoding="utf-8",
    )
    assert frozen_dataclasses(pkg) == ["omk/a.py:One", "omk/a.py:Two", "omk/a.py:Three"]


def test_every_record_omk_writes_is_frozen_with_tuples_for_several_items():
    modules = [importlib.import_module(f"omk.records.{p.stem}") for p in sorted((OMK / "records").glob("*.py"))]
    assert unfrozen_records(modules) == []


def test_the_frozen_check_finds_a_dataclass_a_mutable_struct_and_a_list_field():
    import types

    module = types.ModuleType("fake_records")

    @dataclasses.dataclass
    class Loose:
        items: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class Tight:
        items: tuple[int, ...] = ()
        held: dict[str, int] = dataclasses.field(default_factory=dict)

    class Open(msgspec.Struct):
        items: tuple[int, ...] = ()

    class Shut(msgspec.Struct, frozen=True):
        items: list[int] = []

    for cls in (Loose, Tight, Open, Shut):
        cls.__module__ = "fake_records"
        setattr(module, cls.__name__, cls)
    assert unfrozen_records([module]) == ["Loose (a dataclass)", "Tight (a dataclass)", "Open", "Shut.items"]
