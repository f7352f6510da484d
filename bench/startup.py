"""Benchmark 4: start-up. `omk --help`, and `omk doctor` on the bundled samples.

    python bench/startup.py [--runs 10]

Each run is a fresh process (what "cold" means here: no omk module loaded yet; the byte-code
caches exist, as after an install, and the OS file cache is warm). Also lists the heaviest
imports of `omk --help` from `python -X importtime`, so a regression names its culprit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, add_doc_args, machine, measure, median, omk_command, omk_version, publish

HELP_TARGET_S = 0.3


def heaviest_imports(cmd: list[str], count: int = 5) -> list[tuple[str, float]]:
    """(module, cumulative ms) of the slowest top-level imports of `cmd` under -X importtime."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *cmd], capture_output=True, text=True)
    found = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if not name.startswith("   ") and cumulative.strip().isdigit():  # top level only
            found.append((name.strip(), int(cumulative) / 1000))
    return sorted(found, key=lambda x: -x[1])[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_doc_args(parser)
    parser.set_defaults(runs=10)
    args = parser.parse_args()
    omk = omk_command()
    samples = ROOT / "samples"
    cases = {
        "`omk --help`": ([*omk, "--help"], (0,)),
        "`omk doctor samples/`": ([*omk, "doctor", str(samples)], (0, 1)),
    }
    rows = []
    for label, (cmd, ok) in cases.items():
        walls = [measure(cmd, cwd=samples, ok_codes=ok).wall_s for _ in range(args.runs)]
        rows.append((label, walls))
        print(f"{label}: {median(walls):.3f} s", file=sys.stderr)
    help_median = median(rows[0][1])
    verdict = "meets" if help_median < HELP_TARGET_S else "**misses**"
    imports = heaviest_imports(["-c", "import sys; from omk.cli.main import main; sys.argv = ['omk', '--help']; main()"])
    lines = [
        f"Measured {date.today().isoformat()}: each run a fresh process (byte-code caches present, OS file cache "
        f"warm), median of {args.runs} runs (min–max in brackets).",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}; Python start-up alone (`python -c pass`): "
        f"{median([measure([sys.executable, '-c', 'pass']).wall_s for _ in range(args.runs)]):.3f} s",
        "",
        "| command | wall time |",
        "|---|---|",
        *(f"| {label} | {median(w):.3f} s ({min(w):.3f}–{max(w):.3f}) |" for label, w in rows),
        "",
        f"`omk --help` {verdict} the {HELP_TARGET_S} s target. Its heaviest imports (cumulative, `-X importtime`): "
        + ", ".join(f"`{name}` {ms:.0f} ms" for name, ms in imports)
        + ".",
    ]
    publish(args, "startup", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
