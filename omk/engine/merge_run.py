"""`omk merge`'s entry: the shards read and checked, then merged as a plain run
(omk/engine/merge.py) or as an experiment (omk/engine/merge_experiment.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omk.core.errors import InputError
from omk.engine.merge import MergeOptions, check_shards, merge_plain, read_shard
from omk.engine.merge_experiment import merge_experiment
from omk.engine.run_report import Report
from omk.runner.folder_lock import claim_folder


def merge(folders: Sequence[Path], options: MergeOptions) -> Report | Any:
    """Merge the shard folders into `options.out`: a `Report` for a plain run, an
    `ExperimentOutcome` for an experiment."""
    if not folders:
        raise InputError("omk merge: give the shards' run folders")
    runs = sorted((read_shard(f) for f in folders), key=lambda r: r.info.index or 0)
    info = check_shards(runs, options.partial)
    out = options.out.resolve()
    if any(run.folder.resolve() == out for run in runs):
        raise InputError(f"{out}: --out is one of the shards; give a new folder")
    lock = claim_folder(out)
    try:
        if runs[0].experiment:
            return merge_experiment(runs, info, options)
        return merge_plain([r.folder for r in runs], info, options.out, options)[0]
    finally:
        lock.release()
