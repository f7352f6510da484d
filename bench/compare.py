"""Before/after of benchmarks 2 and 3: two omk checkouts run by run against one bench server.

    python bench/compare.py --before PATH [--before-python PY] [--after PATH] [--after-python PY]
                            [--rounds 7] [--samples 500] [--concurrency 16] [--high 64] [--delay 0.05]

Each round runs, for the "before" checkout and then the "after" one: a first run with an empty
cache, the unchanged rerun, and a first run at `--high` concurrency with the samples scaled to
the same limit (`--no-cache`), the same commands as `bench/concurrency.py`. Interleaving the two
commits is what makes the comparison fair on a shared machine, whose speed drifts over an hour.

A checkout is imported through PYTHONPATH (`git worktree add /tmp/old <commit>` makes one); its
Python may be another virtualenv, for dependencies that differ between the commits. Prints a
Markdown table; docs/benchmarks.md quotes it by hand.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, WORK, median
from concurrency import FakeServer, write_samples


class Side:
    def __init__(self, name: str, checkout: Path, python: str, work: Path):
        self.name, self.checkout, self.python = name, checkout.resolve(), python
        self.folder = work / name
        self.folder.mkdir(parents=True, exist_ok=True)
        compileall.compile_dir(self.checkout / "omk", quiet=1)  # as pip install would
        self.rows: dict[str, list[float]] = {k: [] for k in ("first", "phase", "rerun", "high", "high_phase")}

    def commit(self) -> str:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=self.checkout, capture_output=True, text=True)
        return out.stdout.strip() or str(self.checkout)

    def run(self, server: FakeServer, samples: Path, concurrency: int, *extra: str) -> tuple[float, float]:
        out = self.folder / "run"
        shutil.rmtree(out, ignore_errors=True)
        env = {
            **os.environ,
            "PYTHONPATH": str(self.checkout),
            "OPENAI_BASE_URL": f"{server.url}/v1",
            "OPENAI_API_KEY": "bench-key",
        }
        cmd = [self.python, "-m", "omk", "eval", str(samples), "--target", "openai:bench-model", "--no-judge",
               "--concurrency", str(concurrency), "--out", str(out), "--quiet", *extra]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=self.folder, capture_output=True, text=True)
        wall = time.perf_counter() - start
        report = out / "report.json"
        if not report.exists():
            raise RuntimeError(f"{self.name}: no report ({proc.returncode}): {proc.stderr[-2000:]}")
        summary = json.loads(report.read_text(encoding="utf-8"))["summary"]
        if summary["errored"]:
            raise RuntimeError(f"{self.name}: {summary['errored']} samples errored: {proc.stderr[-2000:]}")
        return wall, summary["duration_ms"] / 1000

    def round(self, server: FakeServer, samples: Path, high_samples: Path | None, args: argparse.Namespace) -> None:
        shutil.rmtree(self.folder / ".omk", ignore_errors=True)  # an empty cache: every sample is called
        wall, phase = self.run(server, samples, args.concurrency)
        self.rows["first"].append(wall)
        self.rows["phase"].append(phase)
        self.rows["rerun"].append(self.run(server, samples, args.concurrency)[0])
        if high_samples is not None:
            wall, phase = self.run(server, high_samples, args.high, "--no-cache")
            self.rows["high"].append(wall)
            self.rows["high_phase"].append(phase)


def table(before: Side, after: Side, args: argparse.Namespace, high_n: int) -> str:
    def cell(side: Side, process: str, phase: str) -> str:
        return f"{median(side.rows[process]):.2f} s / {median(side.rows[phase]):.2f} s"

    def rerun(side: Side) -> str:
        r, f = median(side.rows["rerun"]), median(side.rows["first"])
        return f"{r:.2f} s ({r / f:.0%})"

    lines = [
        f"| measure | before ({before.commit()}) | after ({after.commit()}) |",
        "|---|---|---|",
        f"| {args.samples} calls at concurrency {args.concurrency}: process / run phase | "
        f"{cell(before, 'first', 'phase')} | {cell(after, 'first', 'phase')} |",
        f"| cached rerun, process (share of the first run) | {rerun(before)} | {rerun(after)} |",
    ]
    if high_n:
        lines.append(
            f"| {high_n} calls at concurrency {args.high}: process / run phase | "
            f"{cell(before, 'high', 'high_phase')} | {cell(after, 'high', 'high_phase')} |"
        )
    limit = args.samples / args.concurrency * args.delay
    lines.append("")
    lines.append(f"Medians of {args.rounds} interleaved rounds; the physical limit is {limit:.2f} s at both concurrencies.")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the older checkout (a folder holding omk/)")
    parser.add_argument("--before-python", default=sys.executable)
    parser.add_argument("--after", type=Path, default=ROOT, help="the newer checkout (default: this one)")
    parser.add_argument("--after-python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--high", type=int, default=64, help="0: skip the high-concurrency run")
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args()
    work = (args.work / "compare").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    samples = work / "samples.json"
    write_samples(samples, args.samples)
    high_n = args.samples * args.high // args.concurrency if args.high else 0
    high_samples = work / "samples-high.json" if high_n else None
    if high_samples is not None:
        write_samples(high_samples, high_n)
    sides = [Side("before", args.before, args.before_python, work), Side("after", args.after, args.after_python, work)]
    server = FakeServer(args.delay)
    try:
        for r in range(args.rounds):
            for side in sides:
                side.round(server, samples, high_samples, args)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        server.stop()
    print(table(*sides, args, high_n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
