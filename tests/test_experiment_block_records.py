"""The experiment block is written and read through one set of records
(omk/records/experiment_block.py): every experiment report of the corpus, and a block an
experiment has just written, read and written back is the block as it was, key for key."""

from __future__ import annotations

import json

import msgspec
import pytest
from report_corpus import CORPUS

import omk
from omk.records.experiment_block import ExperimentBlock

WITH_BLOCK = sorted(
    p.name for p in CORPUS.iterdir() if (p / "report.json").is_file() and "experiment" in json.loads((p / "report.json").read_text("utf-8"))
)


def test_the_corpus_has_experiment_reports():
    assert {"experiment", "experiment-cost", "two-targets", "pairwise-votes"} <= set(WITH_BLOCK)


@pytest.mark.parametrize("name", WITH_BLOCK)
def test_a_corpus_block_reads_and_writes_back_unchanged(name):
    written = json.loads((CORPUS / name / "report.json").read_text("utf-8"))["experiment"]
    block = ExperimentBlock.read(written, f"{name}/report.json")
    again = block.to_json()
    assert again == written
    assert json.dumps(again) == json.dumps(written)  # the same keys in the same order
    verdict = msgspec.structs.replace(block.verdict, headline="changed")
    assert msgspec.structs.replace(block, verdict=verdict).to_json()["verdict"]["headline"] == "changed"  # written from the records


def test_a_fresh_experiment_block_reads_and_writes_back_unchanged(project, tmp_path):
    folder, target = project
    outcome = omk.run_experiment(
        [{"sample_id": f"s{i}", "prompt": f"say hello {i}", "assertions": [{"type": "contains", "value": "hello"}]} for i in range(3)],
        control="baseline",
        treatments=["system:Be brief."],
        target=target,
        judge=False,
        cwd=folder,
        seed=4,
        out=tmp_path / "run",
    )
    text = json.dumps(json.loads((tmp_path / "run" / "report.json").read_text("utf-8"))["experiment"])
    written = json.loads(text)
    assert set(written) >= {"format", "settings", "variants", "comparisons", "verdict", "seed", "schedule", "runs"}
    assert json.dumps(ExperimentBlock.read(written).to_json()) == text
    assert json.dumps(outcome.block.to_json()) == text  # the records the run built are the block it wrote
    assert ExperimentBlock.read(written) == outcome.block
    again = ExperimentBlock.of(outcome.analysis, outcome.block.runs, seed=4)  # from the analysis itself
    assert json.dumps(again.to_json()) == text
