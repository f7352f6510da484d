"""`omk gold check RUN_DIR` and `omk gold init RUN_DIR`: the judge against people's labels."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_OK


def run_gold(args: argparse.Namespace) -> int:
    from omk.core.errors import InputError
    from omk.records.document import read_document

    document = read_document(Path(args.run_dir))
    if args.gold_command == "init":
        from omk.gold import template_lines

        lines = template_lines(document.results)  # made as the results are read, one at a time
        out = Path(args.out) if args.out else None
        if out is None:
            for line in lines:
                say(line)
        else:
            if out.exists() and not args.force:
                raise InputError(f"{out}: already exists (--force replaces it; your labels would be lost)")
            count = 0
            with out.open("w", encoding="utf-8") as f:
                for line in lines:
                    f.write(f"{line}\n")
                    count += 1
            from omk.report.i18n import t

            said = t("{out}: {count} samples to label (score 1-5, dimensions, pass; rater: your name)", args.lang or "en")
            say(said.format(out=out, count=count))
        return EXIT_OK
    from omk.gold import CheckSettings
    from omk.gold import check_run as run_check
    from omk.report.gold import text_lines

    threshold = document.summary.threshold if document.summary.threshold is not None else 3.5
    settings = CheckSettings(threshold=float(threshold), level=args.level)
    files = [Path(f) for f in args.gold or []]
    found = run_check(document, files, settings, str(args.run_dir))
    if found is None:
        raise InputError(_no_labels(str(args.run_dir), files))
    if args.json:
        say(json.dumps(found.to_json(), ensure_ascii=False, indent=2))
    else:
        for line in text_lines(found, getattr(args, "lang", None) or "en"):
            say(line)
    return EXIT_GATE if found.flagged else EXIT_OK




def _no_labels(run_dir: str, files: list[Path]) -> str:
    """Why there is nothing to check: no labels file was given, or every label in the files
    given is still empty (as `omk gold init` writes them)."""
    if not files:
        return f"{run_dir}: no labels: give --gold FILE (omk gold init writes one) or add gold: to the samples"
    names = ", ".join(str(f) for f in files)
    return (
        f"{names}: every label is still empty: fill in score (1-5), pass (true/false) or dimensions, "
        "and rater, on the lines of the samples you judged, then run omk gold check again"
    )
