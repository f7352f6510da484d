"""`omk merge RUN_DIR… --out DIR`: the shards of a split run joined into one run folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omk.cli.main import EXIT_GATE, EXIT_OK


def run_merge(args: argparse.Namespace) -> int:
    from omk.engine.experiment import ExperimentOutcome
    from omk.engine.merge import MergeOptions, merge
    from omk.report import check_formats

    formats = list(dict.fromkeys(f.strip() for f in f"json,{args.format or ''}".split(",") if f.strip()))
    check_formats(formats)
    options = MergeOptions(Path(args.out), tuple(formats), args.lang, args.partial, args.require)
    merged = merge([Path(d) for d in args.run_dirs], options)
    shard = merged.report.shard if isinstance(merged, ExperimentOutcome) else merged.shard
    if shard is not None and shard.partial:
        print(f"omk: {shard.label()}: the report covers only the shards merged", file=sys.stderr)
    if isinstance(merged, ExperimentOutcome):
        from omk.cli.experiment_cmd import show_outcome

        return show_outcome(merged, options.require or (merged.block.require.policy if merged.block.require else None), quiet=args.quiet)
    from omk.cli.console import say

    summary = merged.summary
    verdict = "gate passed" if summary.gate_passed else "gate failed"
    say(f"{verdict}: {summary.passed}/{summary.total} · {shard.label() if shard else ''} · {options.out / 'report.json'}")
    return EXIT_OK if merged.passed else EXIT_GATE
