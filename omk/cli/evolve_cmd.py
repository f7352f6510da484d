"""`omk evolve SKILL_DIR [SAMPLES ...] --improver SPEC`: parse, print (the loop is omk.evolve's)."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_INCOMPLETE, EXIT_OK


def run_evolve(args: argparse.Namespace) -> int:
    from omk.engine.options import EvalOptions
    from omk.evolve.loop import EvolveConfig
    from omk.evolve.plan import plan_lines
    from omk.evolve.run import evolve
    from omk.evolve.splits import parse_shares

    cwd = Path.cwd()
    out = Path(args.out) if args.out else cwd / ".omk" / "evolve" / datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    options = EvalOptions(samples=list(args.samples), target=args.target, repeat=args.repeat, quiet=True, lang=args.lang)
    config = EvolveConfig(
        skill=Path(args.skill_dir).resolve(), options=options, cwd=cwd, out=out.resolve(), focus=args.focus,
        rounds=args.rounds, candidates=args.candidates, shares=parse_shares(args.split), seed=args.seed,
        budget_usd=args.budget_usd,
    )  # fmt: skip
    if args.dry_run:
        say("\n".join(plan_lines(config, args.improver, args.lang)))
        return EXIT_OK
    from omk.evolve.report import terminal_lines
    from omk.report.i18n_evolve import t

    done = evolve(config, args.improver, write=args.write, lang=args.lang)
    code = EXIT_INCOMPLETE if done.report.level == "STOPPED" else EXIT_OK
    if args.json:
        say(json.dumps(done.report.to_json(), indent=2, ensure_ascii=False))
        return code
    say("\n".join(terminal_lines(done.report, args.lang)))
    wrote = t(" · wrote {path}", args.lang).format(path=config.skill / "SKILL.md") if done.written else ""
    say(t("report: {path}", args.lang).format(path=config.out / "report.md") + wrote)
    return code
