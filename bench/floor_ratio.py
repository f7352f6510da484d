"""omk against the floor: how many times the CPU of a hand-written program doing the same checks.

    python bench/floor_ratio.py [--sizes 10000,100000] [--runs 5] [--before CHECKOUT] [--no-doc]

Writes bench/scale.py's suite (10 deterministic assertions per sample, recorded outputs) at each
size, then runs, round after round (interleaved, so a change in the machine's load touches every
row alike), each as a whole process:
- omk: `omk eval eval-samples.jsonl --target replay:responses.jsonl --no-judge --no-cache --quiet --out DIR`;
- the floor: `python bench/floor.py SUITE OUT` (the same ten checks hand-written, no loader, no report);
- with `--before CHECKOUT`, the same omk command run from another checkout of omk (its folder put
  first on PYTHONPATH), to show the ratio before and after a change in the same session.
Prints each omk's median CPU time (user + system of the process and its descendants) over the
floor's at every size, with wall times and peak memory (the kernel's peak RSS of the process).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Measurement, add_doc_args, machine, measure, median, omk_command, omk_version, publish
from scale import omk_counts, write_suite

FLOOR = Path(__file__).resolve().parent / "floor.py"
TARGET = 2.0  # issue 35: omk within twice the floor's CPU


@dataclass
class Row:
    name: str
    cpus: dict[int, list[float]] = field(default_factory=dict)
    walls: dict[int, list[float]] = field(default_factory=dict)
    peaks: dict[int, list[float]] = field(default_factory=dict)


def omk_args(out: Path) -> list[str]:
    return ["eval", "eval-samples.jsonl", "--target", "replay:responses.jsonl", "--no-judge", "--no-cache",
            "--quiet", "--out", str(out)]


def commands(args: argparse.Namespace) -> dict[str, tuple[list[str], dict[str, str] | None]]:
    """The rows' commands (the output folder is appended per run) and environments."""
    rows: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor": ([sys.executable, str(FLOOR)], None),
        "omk": (omk_command(), None),
    }
    if args.before is not None:
        before = args.before.resolve()
        compileall.compile_dir(before / "omk", quiet=1)  # as an install would have it
        env = {**os.environ, "PYTHONPATH": str(before)}
        rows["omk before"] = ([sys.executable, "-m", "omk"], env)
    return rows


def run_once(name: str, cmd: list[str], env: dict[str, str] | None, folder: Path, work: Path) -> Measurement:
    out = work / f"out-{name.replace(' ', '-')}"
    shutil.rmtree(out, ignore_errors=True)
    out.unlink(missing_ok=True)
    full = [*cmd, str(folder), str(out)] if name == "floor" else [*cmd, *omk_args(out)]
    return measure(full, cwd=folder, env=env, ok_codes=(0, 1), tree=False, timeout=3600)


def render(args: argparse.Namespace, rows: dict[str, Row]) -> str:
    floor = rows["floor"]
    lines = [
        f"Measured {date.today().isoformat()}: bench/scale.py's suite (10 deterministic assertions per sample, "
        f"recorded outputs, JSON Lines), whole processes, median of {args.runs} interleaved runs. The ratio is "
        f"omk's median CPU time (user + system) over the floor's (`bench/floor.py`).",
        "",
        f"- Machine: {machine()}",
        f"- omk: {omk_version()}" + (f"; before: the checkout at `{args.before}`" if args.before else ""),
        "",
        "| samples | program | CPU time | wall time | peak memory | CPU ÷ floor's |",
        "|---|---|---|---|---|---|",
    ]
    for n in args.sizes:
        base = median(floor.cpus[n])
        for row in rows.values():
            cpu = median(row.cpus[n])
            ratio = "—" if row is floor else f"**{cpu / base:.2f}×**" + ("" if cpu / base <= TARGET else " (target ≤ 2.0)")
            lines.append(
                f"| {n:,} | {row.name} | {cpu:.2f} s ({min(row.cpus[n]):.2f}–{max(row.cpus[n]):.2f}) "
                f"| {median(row.walls[n]):.2f} s | {median(row.peaks[n]):,.0f} MB | {ratio} |"
            )
    return "\n".join([*lines, "", *same_work(args, rows)])


def floor_counts(out: Path) -> list[int]:
    """Passes per assertion in the floor's result lines."""
    counts = [0] * 10
    with out.open(encoding="utf-8") as f:
        for line in f:
            for i, passed in enumerate(json.loads(line)["passed"]):
                counts[i] += passed
    return counts


def same_work(args: argparse.Namespace, rows: dict[str, Row]) -> list[str]:
    """Did the floor and each omk reach the same verdicts (their last runs at each size)?"""
    said = []
    for n in args.sizes:
        work = args.work / f"scale-{n}"
        floor = floor_counts(work / "out-floor")
        for name in rows:
            if name != "floor":
                counts, total, errored = omk_counts(work / f"out-{name.replace(' ', '-')}" / "report.json")
                same = counts == floor and total == n and not errored
                said.append(f"{n:,}, {name}: " + ("the floor's passes per assertion" if same else
                            f"**different passes per assertion** ({counts} against the floor's {floor})"))
    return ["Same work: " + "; ".join(said) + "."]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="samples per suite, comma-separated")
    parser.add_argument("--before", type=Path, help="another omk checkout, run in the same rounds")
    add_doc_args(parser)
    args = parser.parse_args()
    args.sizes = sorted({int(x.replace("_", "")) for x in args.sizes.split(",") if x.strip()})
    args.work = args.work.resolve()
    suites = {n: write_suite(args.work / f"scale-{n}", n, with_json=False) for n in args.sizes}
    cmds = commands(args)
    rows = {name: Row(name) for name in cmds}
    for r in range(args.runs):
        for n, suite in suites.items():
            for name, (cmd, env) in cmds.items():
                m = run_once(name, cmd, env, suite.folder, suite.work)
                row = rows[name]
                row.cpus.setdefault(n, []).append(m.cpu_s)
                row.walls.setdefault(n, []).append(m.wall_s)
                row.peaks.setdefault(n, []).append(m.peak_mb)
                print(f"round {r + 1}/{args.runs} {n:>7,} {name:12s} {m.cpu_s:6.2f} s CPU {m.wall_s:6.2f} s "
                      f"{m.peak_mb:5.0f} MB  load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    publish(args, "floor", render(args, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
