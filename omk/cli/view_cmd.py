"""`omk view [RUNS…] [--port N] [--export DIR]`: the run folders' pages on 127.0.0.1, or as files."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_INCOMPLETE, EXIT_OK


def run_view(args: argparse.Namespace) -> int:
    from omk.view.site import Site, export, serve

    roots = [Path(p) for p in args.runs] or [Path(".omk") / "runs", Path(".omk") / "evolve"]
    site = Site(roots)
    for problem in site.problems:
        say(f"omk view: not read: {problem}", err=True)
    if args.export:
        written, skipped = export(site, Path(args.export))
        say(f"omk view: {len(site.runs)} run(s), {len(site.evolve)} evolve run(s), {len(written)} page(s) written to {args.export}")
        for line in skipped:
            say(f"omk view: not written: {line}", err=True)
        return EXIT_OK if not skipped else EXIT_INCOMPLETE
    server = serve(site, args.port, lambda url: say(f"omk view: {len(site.runs)} run(s), {len(site.evolve)} evolve run(s) on {url} (Ctrl-C stops)"))
    sys.stdout.flush()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return EXIT_OK
