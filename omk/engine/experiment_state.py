"""The state of one experiment (`ExperimentState`) and what finishing it gives (`ExperimentOutcome`).

omk/engine/experiment.py runs an experiment; omk/engine/variant_records.py turns its variants'
reports into the experiment block. Both read this state, kept here so that neither imports the
other's module for it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.engine.evaluation import Evaluation
from omk.engine.options import EvalOptions
from omk.engine.run_report import Report
from omk.engine.variants import Variant
from omk.records.document import ReportDocument
from omk.records.experiment_block import Ablation, ExperimentBlock
from omk.records.shard import ShardInfo
from omk.samples.model import Sample
from omk.stats import ExperimentAnalysis

if TYPE_CHECKING:
    from omk.engine.ablation import AblationPlan

VARIANTS_DIR = "variants"  # an experiment's folder keeps each variant's run in variants/<name>/


@dataclass(slots=True)
class ExperimentOutcome:
    reports: dict[str, Report]  # per variant, control first
    analysis: ExperimentAnalysis  # variants, paired comparisons and the verdict, as computed
    block: ExperimentBlock  # report.json's `experiment` block, typed (`block.to_json()` as written)
    report: ReportDocument  # the experiment's report.json; its results are the control's, read when walked
    out_dir: Path | None
    files: list[Path] = field(default_factory=list)  # what the experiment wrote into out_dir: report.json first

    @property
    def ablation(self) -> Ablation | None:
        """`omk eval --ablate` / `omk.ablate`: the skill's parts ranked by what removing each one cost."""
        return self.block.ablation


@dataclass(slots=True)
class ExperimentState:
    """What one experiment holds: its variants' evaluations, seed, run folder and the blocks the
    run adds. omk.engine.experiment.Experiment adds the steps (execute, compare, finish)."""

    options: EvalOptions
    variants: list[Variant]
    evaluations: list[Evaluation]
    seed: int
    run_id: str
    started_at: str
    out_dir: Path | None
    trivial: float = 0.1
    pairwise: bool = False  # the pairwise judge compares treatment and control answers
    pairwise_block: dict[str, Any] | None = None
    max_cost_increase: float | None = None  # percent (--max-cost-increase, omk.yaml): more is CAUTIOUS
    shard: ShardInfo | None = None  # `--shard I/N`: this part of the experiment, and the whole plan's fingerprint
    ablation: AblationPlan | None = None  # `--ablate`: the skill's parts, one per treatment (omk/engine/ablation.py)
    scratch: Path | None = None  # a temporary folder of ablated copies (a dry run, a run kept in memory)

    def remove_scratch(self) -> None:
        """Remove the temporary copies of an ablation that writes no run folder (none to resume)."""
        if self.scratch is not None:
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    @property
    def control(self) -> Evaluation:
        return self.evaluations[0]

    def schedule(self) -> list[tuple[int, Sample, int]]:
        """(variant index, sample, repeat) still to run: sample-major, variants shuffled per sample."""
        rng = random.Random(self.seed)
        control = self.control
        jobs = []
        for sample in control.samples:
            for repeat in range(control.repeat):
                order = list(range(len(self.evaluations)))
                rng.shuffle(order)
                jobs += [(i, sample, repeat) for i in order if (sample.sample_id, repeat) not in self.evaluations[i].log]
        return jobs
