"""`omk view [RUNS…] [--port N] [--export DIR]`: the run folders' pages on 127.0.0.1, or as files."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_INCOMPLETE, EXIT_OK


def run_view(args: argparse.Namespace) -> int:
    from omk.report.i18n_evolve import t
    from omk.view.site import Site, export, serve

    roots = [Path(p) for p in args.runs] or [Path(".omk") / "runs", Path(".omk") / "evolve"]
    site = Site(roots, args.lang)
    for problem in site.problems:
        say(t("omk view: not read: {problem}", args.lang).format(problem=problem), err=True)
    if args.export:
        written, skipped = export(site, Path(args.export))
        said = t("omk view: {runs} run(s), {evolve} evolve run(s), {pages} page(s) written to {out}", args.lang)
        say(said.format(runs=len(site.runs), evolve=len(site.evolve), pages=len(written), out=args.export))
        for line in skipped:
            say(t("omk view: not written: {line}", args.lang).format(line=line), err=True)
        return EXIT_OK if not skipped else EXIT_INCOMPLETE
    ready = t("omk view: {runs} run(s), {evolve} evolve run(s) on {url} (Ctrl-C stops)", args.lang)
    server = serve(site, args.port, lambda url: say(ready.format(runs=len(site.runs), evolve=len(site.evolve), url=url)))
    sys.stdout.flush()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return EXIT_OK
