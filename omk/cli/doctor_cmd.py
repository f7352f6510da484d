"""`omk doctor`: validate a sample set (all problems at once) and show what it covers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omk.cli.eval_cmd import resolve_samples
from omk.cli.main import EXIT_OK


def run_doctor(args: argparse.Namespace) -> int:
    from omk.doctor.coverage import coverage
    from omk.loader import load_samples

    paths = resolve_samples(args.samples, Path.cwd())
    loaded = load_samples(paths)
    report = {"files": [str(f) for f in loaded.files], "coverage": coverage(loaded.samples)}
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    cov = report["coverage"]
    console.print(f"[bold]{cov['samples']} samples[/bold] valid in {', '.join(report['files'])}")
    for key in ("capability", "difficulty", "construct", "provenance", "assertion_types", "layers"):
        table = Table(title=key.replace("_", " "), title_justify="left", show_header=False)
        table.add_column(key)
        table.add_column("count", justify="right")
        for name, count in cov[key].items():
            table.add_row(name, str(count))
        console.print(table)
    console.print(
        f"rubric {cov['with_rubric']} · dimensions {cov['with_dimensions']} · "
        f"mocks {cov['with_mocks']} · tripwires {cov['tripwires']}"
    )
    return EXIT_OK
