"""`omk gold check RUN_DIR` and `omk gold init RUN_DIR`: the judge against people's labels."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_OK


def run_gold(args: argparse.Namespace) -> int:
    from omk.errors import InputError
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
            say(f"{out}: {count} samples to label (score 1-5, dimensions, pass; rater: your name)")
        return EXIT_OK
    from omk.gold import CheckSettings
    from omk.gold import check_run as run_check
    from omk.report.gold import text_lines

    threshold = document.summary.threshold if document.summary.threshold is not None else 3.5
    settings = CheckSettings(threshold=float(threshold), level=args.level)
    files = [Path(f) for f in args.gold or []]
    found = run_check(document, files, settings, str(args.run_dir))
    if found is None:
        raise InputError(f"{args.run_dir}: no labels: give --gold FILE (omk gold init writes one) or add gold: to the samples")
    if args.json:
        say(json.dumps(found.to_json(), ensure_ascii=False, indent=2))
    else:
        for line in text_lines(found):
            say(line)
    return EXIT_GATE if found.flagged else EXIT_OK


