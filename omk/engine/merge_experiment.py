"""`omk merge` of an experiment's shards: each variant's shards merged into `variants/<name>/`,
then the statistics and the verdict computed again over every pair, with the recorded seed (the
same verdict an unsharded run with that seed gives)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from omk.engine.merge import MergeOptions, ShardRun, merge_plain
from omk.engine.run_report import Report
from omk.engine.variant_records import BlockInputs, experiment_outcome, trigger_block
from omk.engine.variants import Variant
from omk.errors import InputError
from omk.records.shard import ShardInfo
from omk.stats import AnalysisSettings

if TYPE_CHECKING:
    from omk.engine.experiment import ExperimentOutcome


def merge_experiment(runs: Sequence[ShardRun], info: ShardInfo, options: MergeOptions) -> ExperimentOutcome:
    from omk.engine.evaluation import new_run_id
    from omk.engine.experiment import VARIANTS_DIR, ablation_of

    record = runs[0].record
    try:
        variants = [Variant(**v) for v in record["variants"]]
        seed, trivial = int(record["seed"]), float(record["trivial"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{runs[0].folder / 'experiment.json'}: not a readable experiment record ({exc})") from None
    reports: dict[str, Report] = {}
    digests = []
    for variant in variants:
        folders = [run.folder / VARIANTS_DIR / variant.name for run in runs]
        reports[variant.name], log = merge_plain(folders, info, options.out / VARIANTS_DIR / variant.name, options)
        digests.append(log.digests.values())
    now = datetime.now(UTC)
    inputs = BlockInputs(
        variants=variants,
        settings=AnalysisSettings(
            trivial=trivial, threshold=_threshold(runs[0], variants[0]), seed=seed, max_cost_increase=_number(record.get("max_cost_increase"))
        ),
        require=options.require or _text(record.get("require")),
        pairwise=None,  # the pairwise judge's verdicts are per shard; the merge leaves them out
        triggers=trigger_block(variants, digests),
        run_id=new_run_id(now),
        started_at=min(str(run.record.get("started_at") or "") for run in runs) or now.isoformat(timespec="seconds"),
        out_dir=options.out,
        formats=list(options.formats),
        lang=options.lang,
        shard=info,
        ablation=ablation_of(dict(record), runs[0].folder / "experiment.json"),  # --ablate: the parts to rank
    )
    return experiment_outcome(inputs, reports)


def _threshold(run: ShardRun, control: Variant) -> float:
    from omk.engine.experiment import VARIANTS_DIR
    from omk.runner.resume import read_manifest

    settings = read_manifest(run.folder / VARIANTS_DIR / control.name).get("settings") or {}
    value = settings.get("threshold")
    return float(value) if isinstance(value, int | float) else 3.5


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
