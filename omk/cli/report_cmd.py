"""`omk report RUN_DIR --format …`: re-render a finished run from its report.json alone."""

from __future__ import annotations

import argparse
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_OK
from omk.errors import InputError


def run_report(args: argparse.Namespace) -> int:
    from omk.report import check_formats, write_format
    from omk.report.json_report import read_report

    source = Path(args.run_dir)
    report = read_report(source)
    formats = list(dict.fromkeys(f.strip() for f in args.format.split(",") if f.strip()))
    check_formats(formats)
    out = Path(args.out) if args.out else (source if source.is_dir() else source.parent)
    for fmt in formats:  # json only when asked: the run's own report.json is left as it is
        try:
            say(write_format(out, report, fmt, args.lang))
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:  # a field edited into a shape omk never writes
            raise InputError(f"{source}: cannot render {fmt} from this report ({type(exc).__name__}: {exc}); was report.json edited by hand?") from None
    return EXIT_OK
