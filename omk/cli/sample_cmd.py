"""`omk sample --from-run RUN_DIR [--output FILE]`: samples that replay a recorded run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_OK


def run_sample(args: argparse.Namespace) -> int:
    from omk.authoring.from_run import samples_from_run
    from omk.errors import InputError

    out = Path(args.output) if args.output else None
    if out is not None and out.exists():
        raise InputError(f"{out}: already exists; choose another --output (recorded samples are not merged into a file)")
    found = samples_from_run(Path(args.from_run))
    for line in found.left_out:
        print(f"left out {line}", file=sys.stderr)
    if out is None:
        sys.stdout.write(found.text)
        return EXIT_OK
    out.write_text(found.text, encoding="utf-8")
    say(f"{out}: {found.count} {'sample' if found.count == 1 else 'samples'} recorded from {args.from_run}")
    return EXIT_OK
