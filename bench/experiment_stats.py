"""Benchmark: the experiment statistics (omk.stats), pure Python.

    python bench/experiment_stats.py [--runs 5]

Times the paired bootstrap alone at several sample counts (B = 10,000, the default), and a
whole `analyze()` of two variants with three layers, which computes four intervals per
comparison (composite and each layer) from one set of random draws. In-process timings, median of the runs.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, add_doc_args, machine, median, omk_version, publish

sys.path.insert(0, str(ROOT))

from omk.stats import AnalysisSettings, Record, VariantRun, analyze, bootstrap_mean_ci  # noqa: E402


def timed(fn, runs: int) -> list[float]:
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - start)
    return walls


def variants(n: int, rng: random.Random) -> list[VariantRun]:
    def rec(level: float) -> Record:
        layers = {k: round(min(5.0, max(1.0, level + rng.gauss(0, 0.3))), 2) for k in ("fact", "behavior", "judge")}
        composite = round(sum(layers.values()) / 3, 2)
        return Record(composite=composite, layers=layers, passed=composite >= 3.5, cost_usd=0.002, latency_ms=900)

    levels = [rng.gauss(3.5, 0.8) for _ in range(n)]
    control = VariantRun("control", {f"s{i}": [rec(x)] for i, x in enumerate(levels)}, "control")
    treatment = VariantRun("skill", {f"s{i}": [rec(x + 0.2)] for i, x in enumerate(levels)})
    return [control, treatment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_doc_args(parser)
    parser.add_argument("--sizes", default="30,200,1000", help="sample counts, comma-separated")
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    rng = random.Random(1)
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        deltas = [rng.gauss(0.2, 0.6) for _ in range(n)]
        boot = timed(lambda d=deltas: bootstrap_mean_ci(d, resamples=args.resamples), args.runs)
        data = variants(n, rng)
        whole = timed(lambda v=data: analyze(v, AnalysisSettings(resamples=args.resamples)), args.runs)
        rows.append(f"| {n} | {median(boot):.3f} s ({min(boot):.3f}–{max(boot):.3f}) | {median(whole):.2f} s |")
        print(rows[-1], file=sys.stderr)
    markdown = "\n".join(
        [
            "## Experiment statistics",
            "",
            f"Measured {date.today().isoformat()} with `python bench/experiment_stats.py`, {omk_version()}, "
            f"{machine()}, load average {os.getloadavg()[0]:.1f} at the end (a shared machine: figures vary "
            f"up to 2× with the load); in-process, median of {args.runs} runs (min–max in brackets). B = "
            f"{args.resamples:,} resamples, pure Python (`random.Random.choices`). A whole `analyze()` of two "
            "variants with three layers computes four intervals (composite, fact, behavior, judge) from one set "
            "of random draws.",
            "",
            "| paired samples | one bootstrap CI | whole analyze() |",
            "|---|---|---|",
            *rows,
        ]
    )
    publish(args, "experiment-stats", markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
