"""`omk report RUN_DIR --format …`: re-render a finished run from its report.json alone."""

from __future__ import annotations

import argparse
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_OK


def run_report(args: argparse.Namespace) -> int:
    from omk.records.document import read_document
    from omk.report import check_formats, write_format

    source = Path(args.run_dir)
    report = read_document(source)  # a field edited into a shape omk never writes is an InputError here
    formats = list(dict.fromkeys(f.strip() for f in args.format.split(",") if f.strip()))
    check_formats(formats)
    out = Path(args.out) if args.out else (source if source.is_dir() else source.parent)
    for fmt in formats:  # json only when asked: the run's own report.json is left as it is
        say(str(write_format(out, report, fmt, args.lang)))
    return EXIT_OK
