"""The run folder's records (run.json, experiment.json) and the pairwise block, read back through
their typed classes: what omk wrote reads back to the same JSON, a broken field is one located line."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.core.errors import InputError
from omk.engine.ablation import AblationPlan
from omk.engine.experiment import ablation_of, resume_experiment, variant_of
from omk.engine.options import EvalOptions
from omk.records.experiment_block import PairwiseBlock
from omk.records.experiment_manifest import ExperimentManifest
from omk.records.manifest import RunManifest
from omk.runner import resume as rs

ROOT = Path(__file__).resolve().parents[1]
WRITTEN = ROOT / "tests" / "fixtures" / "manifests"  # as omk wrote them before these records existed
REPORTS = ROOT / "tests" / "fixtures" / "reports"


@pytest.mark.parametrize("name", ["run.json", "run-shard.json"])
def test_a_run_json_written_before_reads_back_to_the_same_json(name):
    data = json.loads((WRITTEN / name).read_text(encoding="utf-8"))
    manifest = RunManifest.read((WRITTEN / name).read_bytes(), name)
    assert manifest.to_json() == data
    assert manifest.settings.threshold == 3.5
    assert manifest.samples_files[0].endswith("eval-samples.yaml")


@pytest.mark.parametrize("name", ["run.json", "run-shard.json", "experiment.json", "experiment-ablate-shard.json"])
def test_a_record_omk_wrote_is_written_again_byte_for_byte(name):
    text = (WRITTEN / name).read_text(encoding="utf-8")
    if name.startswith("run"):
        written = json.dumps(RunManifest.read(text.encode(), name).to_json(), ensure_ascii=False, indent=2, default=str)
    else:
        written = json.dumps(ExperimentManifest.read(text.encode(), name).to_json(), ensure_ascii=False, indent=2)
    assert written + "\n" == text


def test_a_null_or_missing_setting_reads_as_its_default():
    data = json.loads((WRITTEN / "run.json").read_text(encoding="utf-8"))
    data["settings"] = {"threshold": None, "repeat": 0, "formats": [], "judge": None, "lang": None}
    data["git"] = None
    manifest = RunManifest.read(json.dumps(data).encode(), "run.json")
    assert (manifest.settings.threshold, manifest.settings.repeat, manifest.settings.formats) == (3.5, 1, ("json",))
    assert (manifest.settings.judge, manifest.settings.lang, manifest.settings.concurrency) == ((), "en", 4)
    data["settings"] = None
    assert RunManifest.read(json.dumps(data).encode(), "run.json").settings == RunManifest.read(
        json.dumps({**data, "settings": {}}).encode(), "run.json"
    ).settings


def test_a_shards_run_json_keeps_its_part_and_places():
    manifest = RunManifest.read((WRITTEN / "run-shard.json").read_bytes(), "run.json")
    assert manifest.shard is not None
    assert (manifest.shard.index, manifest.shard.count) == (1, 2)
    assert manifest.positions[:3] == (1, 2, 5)


@pytest.mark.parametrize("name", ["experiment.json", "experiment-ablate-shard.json"])
def test_an_experiment_json_written_before_reads_back_to_the_same_json(name):
    data = json.loads((WRITTEN / name).read_text(encoding="utf-8"))
    record = ExperimentManifest.read((WRITTEN / name).read_bytes(), name)
    assert record.to_json() == data
    variants = [variant_of(v) for v in record.variants]
    assert variants[0].role == "control"
    assert all(v.params == {} for v in variants)


def test_an_ablations_parts_read_back_checked():
    record = ExperimentManifest.read((WRITTEN / "experiment-ablate-shard.json").read_bytes(), "experiment.json")
    plan = ablation_of(record, WRITTEN / "experiment.json")
    assert plan is not None
    assert [p.name for p in plan.parts] == ["Acme support tone", "Reply rules"]
    assert plan.to_json() == record.ablation
    broken = json.loads(json.dumps(record.ablation))
    broken["parts"][1]["tokens"] = "many"
    with pytest.raises(InputError, match=r"^experiment\.json: ablation\.parts\[1\]\.tokens: expected an integer, found 'many'$"):
        AblationPlan.read(broken, "experiment.json")
    del broken["parts"][0]["variant"]
    with pytest.raises(InputError, match=r"^experiment\.json: ablation\.parts\[0\]\.variant: missing$"):
        AblationPlan.read(broken, "experiment.json")


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("experiment.json", {"seed": "x"}, r"^run/experiment\.json: seed: expected an integer, found 'x'$"),
        ("experiment.json", {"seed": None}, r"^run/experiment\.json: seed: expected an integer, found NoneType$"),
        ("experiment.json", {"format": "other"}, r"run/experiment\.json: format: expected 'omk-experiment-run/1'"),
        ("experiment.json", {"variants": [{"role": "control"}]}, r"^run/experiment\.json: variants\[0\]\.name: missing$"),
        ("experiment.json", {"pairwise": "yes"}, r"run/experiment\.json: pairwise: expected true, false or null"),
        ("run.json", {"run_id": 3}, r"^run/run\.json: run_id: expected a string, found int$"),
        ("run.json", {"cli": None}, r"^run/run\.json: cli: expected an object"),
        ("run.json", {"samples_files": ["a.yaml", 2]}, r"run/run\.json: samples_files\[1\]: expected a string"),
        ("run.json", {"samples_files": [""]}, r"run/run\.json: samples_files: expected a list of samples files' paths"),
        ("run.json", {"settings": {"repeat": "2"}}, r"run/run\.json: settings\.repeat: expected an integer or null"),
        ("run.json", {"target": "cmd:x"}, r"run/run\.json: target: expected an object or null"),
        ("run.json", {"format": None}, r"^run/run\.json: format: expected 'omk-run/1', found NoneType$"),
        ("run.json", {"format": "omk-run/1", "run_id": None}, r"^run/run\.json: run_id: expected a string, found NoneType$"),
        ("run.json", {"shard": {"count": 2, "plan": "p", "index": 1, "positions": [0, "a"]}}, r"^run/run\.json: shard\.positions\[1\]: expected an integer, found 'a'$"),
        ("run.json", {"shard": {"count": 2, "plan": "p", "index": 3}}, r"^run/run\.json: shard\.index: expected a shard number from 1 to its count \(2\), found 3$"),
        ("experiment.json", {"variants": []}, r"^run/experiment\.json: variants: expected a list of the variants, found none$"),
    ],
)
def test_a_broken_record_is_one_located_line(name, change, message):
    data = {**json.loads((WRITTEN / name).read_text(encoding="utf-8")), **change}
    read = ExperimentManifest.read if name.startswith("experiment") else RunManifest.read
    with pytest.raises(InputError, match=message) as caught:
        read(json.dumps(data).encode(), f"run/{name}")
    assert "\n" not in str(caught.value)
    assert "report.json" not in str(caught.value)


def test_the_pairwise_block_reads_back_to_the_same_json():
    for name in ("pairwise-votes", "two-targets"):
        block = json.loads((REPORTS / name / "report.json").read_text(encoding="utf-8"))["experiment"]["pairwise"]
        read = PairwiseBlock.read(block, "report.json", "experiment.pairwise")
        assert read.to_json() == block
        assert read.pairs
        assert read.pairs[0].verdicts


def test_a_pairwise_block_omk_did_not_write_is_named():
    block = json.loads((REPORTS / "two-targets" / "report.json").read_text(encoding="utf-8"))["experiment"]["pairwise"]
    with pytest.raises(InputError, match=r"report\.json: experiment\.pairwise\.pairs\[0\]\.verdicts: expected a list of verdicts"):
        PairwiseBlock.read({**block, "pairs": [{"control": "a"}]}, "report.json", "experiment.pairwise")
    with pytest.raises(InputError, match=r"experiment\.pairwise\.pairs: expected a list of comparisons"):
        PairwiseBlock.read({**block, "pairs": {}}, "report.json", "experiment.pairwise")


def test_resuming_a_folder_with_a_broken_record_says_where(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({**json.loads((WRITTEN / "run.json").read_text()), "cwd": ["x"]}), encoding="utf-8")
    with pytest.raises(InputError, match=r"run\.json: cwd: expected a string, found a list"):
        rs.read_manifest(tmp_path)
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "experiment.json").write_text(json.dumps({**json.loads((WRITTEN / "experiment.json").read_text()), "trivial": "big"}))
    with pytest.raises(InputError, match=r"experiment\.json: trivial: expected a number, found 'big'"):
        resume_experiment(exp, EvalOptions())


def omk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, drop=("OMK_TARGET",), columns=None, timeout=120)


def test_the_cli_names_a_broken_experiment_record_and_exits_2(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    data = json.loads((WRITTEN / "experiment.json").read_text(encoding="utf-8"))
    (run / "experiment.json").write_text(json.dumps({**data, "seed": "x"}), encoding="utf-8")
    proc = omk("eval", "--resume", "run", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "experiment.json: seed: expected an integer, found 'x'" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["experiment", "two-targets"])
def test_verdict_json_prints_the_experiment_block_as_written(tmp_path, name):
    shutil.copy(REPORTS / name / "report.json", tmp_path / "report.json")
    proc = omk("verdict", str(tmp_path), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = json.loads((REPORTS / name / "report.json").read_text(encoding="utf-8"))["experiment"]
    assert json.loads(proc.stdout) == written
