"""`omk merge RUN_DIR… --out DIR`: the shards of a split run joined into one run folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_OK


def run_merge(args: argparse.Namespace) -> int:
    from omk.engine.experiment import ExperimentOutcome
    from omk.engine.merge import MergeOptions
    from omk.engine.merge_run import merge
    from omk.report import check_formats

    formats = list(dict.fromkeys(f.strip() for f in f"json,{args.format or ''}".split(",") if f.strip()))
    check_formats(formats)
    options = MergeOptions(Path(args.out), tuple(formats), args.lang, args.partial, args.require)
    merged = merge([Path(d) for d in args.run_dirs], options)
    from omk.report.i18n import shard_label, t

    lang = args.lang or "en"
    shard = merged.report.shard if isinstance(merged, ExperimentOutcome) else merged.shard
    if shard is not None and shard.partial:
        say("omk: " + t("{label}: the report covers only the shards merged", lang).format(label=shard_label(shard, lang)), err=True)
    if isinstance(merged, ExperimentOutcome):
        from omk.cli.experiment_cmd import show_outcome

        require = options.require or (merged.block.require.policy if merged.block.require else None)
        return show_outcome(merged, require, quiet=args.quiet, lang=lang)

    summary = merged.summary
    verdict = t("gate passed" if summary.gate_passed else "gate failed", lang)
    say(f"{verdict}: {summary.passed}/{summary.total} · {shard_label(shard, lang) if shard else ''} · {options.out / 'report.json'}")
    return EXIT_OK if merged.passed else EXIT_GATE
