"""What a plain run loads: the experiment engine, its statistics and the gold-label checks stay
unloaded until a run needs them (start-up is paid on every `omk eval`), and the statistics
package's names, imported on first use, are the functions and classes its modules define."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import omk.stats

ROOT = Path(__file__).resolve().parents[1]

# Loaded only by experiments, gold labels, or a target that asks for them.
NOT_IN_A_PLAIN_RUN = (
    "omk.engine.experiment",
    "omk.records.experiment_block",
    "omk.stats.analysis",
    "omk.stats.verdict",
    "omk.gold",
    "omk.scoring.triggering",
    "omk.records.gold",
    "omk.records.triggering",
    "omk.records.budget",
    "omk.records.shard",
    "omk.llm.http",
    "urllib.request",
    # the --repeat spread, the judge's records and settings, experiments' records and variants,
    # shards, pairwise win rates, skills, URL inlining and a conversation's session
    "omk.records.repeats",
    "omk.scoring.variance",
    "omk.stats.reliability",
    "omk.records.judging",
    "omk.records.judge_settings",
    "omk.records.experiment_manifest",
    "omk.engine.variants",
    "omk.engine.shards",
    "omk.stats.pairwise_rate",
    "omk.domain.skillset",
    "omk.inline.inliner",
    "omk.inline.policy",
    "omk.targets.session",
    "omk.targets.mocks",
)

# A package's own names loaded on first use (its facade), each the object its module defines.
FORWARDED = (
    ("omk.records", "JudgeBlock", "omk.records.judging"),
    ("omk.records", "JudgeItem", "omk.records.judging"),
    ("omk.records", "SampleAgreement", "omk.records.judging"),
)

PROBE = """
import json, sys
from omk.cli.main import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_a_plain_replayed_run_leaves_the_experiment_machinery_unloaded(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.yaml").write_text(
        "samples:\n  - sample_id: s1\n    prompt: say hi\n    assertions:\n      - type: contains\n        value: hi\n",
        encoding="utf-8",
    )
    (tmp_path / "out.jsonl").write_text(json.dumps({"sample_id": "s1", "output": "hi there"}) + "\n", encoding="utf-8")
    argv = ["omk", "eval", "eval-samples.yaml", "--target", "replay:out.jsonl", "--no-judge", "--no-cache", "--quiet", "--out", "run"]
    code = f"import sys; sys.argv = {argv!r}\n" + PROBE
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert (tmp_path / "run" / "report.json").is_file(), done.stderr
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "omk.engine.evaluation" in loaded  # the probe saw a real run
    assert not [name for name in NOT_IN_A_PLAIN_RUN if name in loaded]


def test_every_statistics_name_is_what_its_module_defines() -> None:
    # import every module of the package first: a module named like one of the package's names
    # would then shadow that name (the import system sets it on the package)
    for path in Path(omk.stats.__file__).parent.glob("*.py"):
        importlib.import_module(f"omk.stats.{path.stem}") if path.stem != "__init__" else None
    for name in omk.stats.__all__:
        home = importlib.import_module(omk.stats._HOMES[name])
        assert getattr(omk.stats, name) is getattr(home, name), name


def test_a_packages_lazy_name_is_its_modules_object() -> None:
    for old, name, new in FORWARDED:
        assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name), (old, name)
    for old in {old for old, _, _ in FORWARDED}:
        assert not hasattr(importlib.import_module(old), "NoSuchName"), old  # anything else is still an AttributeError


def test_help_loads_neither_msgspec_nor_the_records() -> None:
    """`omk --help` builds its parser and prints: no record, and not msgspec, which the records
    (and only they) need."""
    code = "import sys; sys.argv = ['omk', '--help']\n" + PROBE
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "usage: omk" in done.stdout, done.stderr
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "omk.cli.main" in loaded  # the probe saw the parser
    assert not [name for name in loaded if name == "msgspec" or name.startswith("omk.records")]
