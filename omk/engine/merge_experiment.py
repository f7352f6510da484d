"""`omk merge` of an experiment's shards: each variant's shards merged into `variants/<name>/`,
then the statistics and the verdict computed again over every pair, with the recorded seed (the
same verdict an unsharded run with that seed gives)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError
from omk.engine.merge import MergeOptions, ShardRun, merge_plain
from omk.engine.run_report import Report
from omk.engine.variant_records import BlockInputs, experiment_outcome, trigger_block
from omk.engine.variants import Variant
from omk.records.experiment_block import PairwiseBlock
from omk.records.experiment_manifest import ExperimentManifest
from omk.records.shard import ShardInfo
from omk.stats import AnalysisSettings

if TYPE_CHECKING:
    from omk.engine.experiment import ExperimentOutcome


def merge_experiment(runs: Sequence[ShardRun], info: ShardInfo, options: MergeOptions) -> ExperimentOutcome:
    from omk.engine.experiment import VARIANTS_DIR, ablation_of, variant_of
    from omk.engine.state import new_run_id

    record = runs[0].record
    assert isinstance(record, ExperimentManifest)  # merge() sends only an experiment's shards here
    variants = [variant_of(v) for v in record.variants]
    seed, trivial = record.seed, float(record.trivial)
    reports: dict[str, Report] = {}
    digests = []
    order: list[str] = []  # the control's sample ids, in the plan's order
    for variant in variants:
        folders = [run.folder / VARIANTS_DIR / variant.name for run in runs]
        reports[variant.name], log = merge_plain(folders, info, options.out / VARIANTS_DIR / variant.name, options)
        digests.append(log.digests.values())
        order = order or [sid for sid, _ in log.digests]
    now = datetime.now(UTC)
    inputs = BlockInputs(
        variants=variants,
        settings=AnalysisSettings(
            trivial=trivial, threshold=_threshold(runs[0], variants[0]), seed=seed, max_cost_increase=_number(record.max_cost_increase)
        ),
        require=options.require or record.require,
        pairwise=merged_pairwise(runs, order),
        triggers=trigger_block(variants, digests),
        run_id=new_run_id(now),
        started_at=min(run.record.started_at for run in runs) or now.isoformat(timespec="seconds"),
        out_dir=options.out,
        formats=list(options.formats),
        lang=options.lang,
        shard=info,
        ablation=ablation_of(record, runs[0].folder / "experiment.json"),  # --ablate: the parts to rank
    )
    return experiment_outcome(inputs, reports)


def merged_pairwise(runs: Sequence[ShardRun], order: list[str]) -> dict[str, Any] | None:
    """The pairwise judge's verdicts of every shard in one block: each comparison's verdicts in the
    plan's order (`order`: the control's sample ids), its tallies and win rates counted again over
    all of them, the judge's cost added up. None when the shards ran without the pairwise judge."""
    from omk.engine.pairwise import regroup

    blocks = [_pairwise_of(run) for run in runs]
    first = blocks[0]
    if first is None:
        if any(b is not None for b in blocks):
            raise InputError(f"{runs[0].folder / 'report.json'}: experiment.pairwise: missing, but other shards have one")
        return None
    for run, block in zip(runs[1:], blocks[1:], strict=True):
        if block is None or block.judge != first.judge or len(block.pairs) != len(first.pairs):
            raise InputError(f"{run.folder / 'report.json'}: experiment.pairwise: another judge or other comparisons than {runs[0].folder}")
    place = {sid: i for i, sid in reversed(list(enumerate(order)))}
    merged = []
    for j, head in enumerate(first.pairs):
        entries = [v for b in blocks if b is not None for v in b.pairs[j].verdicts]
        entries.sort(key=lambda v: place.get(v.sample_id or "", len(place)))  # stable: a sample's keys keep their order
        level = head.win_rate[0].ci_level if head.win_rate and head.win_rate[0].ci_level is not None else 0.95
        merged.append(regroup(head, entries, float(level)))
    costs = [b.judge_cost_usd for b in blocks if b is not None and b.judge_cost_usd is not None]
    return msgspec.structs.replace(first, judge_cost_usd=round(sum(costs), 6) if costs else None, pairs=tuple(merged)).to_json()


def _pairwise_of(run: ShardRun) -> PairwiseBlock | None:
    """A shard's `experiment.pairwise` block; an InputError when it is not one omk wrote."""
    from omk.records.document import read_document

    where = run.folder / "report.json"
    return PairwiseBlock.of_report(read_document(run.folder).data, str(where))


def _threshold(run: ShardRun, control: Variant) -> float:
    from omk.engine.experiment import VARIANTS_DIR
    from omk.runner.resume import read_manifest

    return float(read_manifest(run.folder / VARIANTS_DIR / control.name).settings.threshold)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
