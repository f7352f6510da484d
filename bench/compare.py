"""Before/after of the benchmarks: two omk checkouts run turn by turn, round by round.

    python bench/compare.py --before PATH [--before-python PY] [--after PATH] [--after-python PY]
                            [--rounds 7] [--samples 500] [--concurrency 16] [--high 64] [--delay 0.05]
                            [--help-runs 5] [--suite 10000 [--peers]] [--load 10000]

Each round runs, for the "before" checkout and then the "after" one: a first run with an empty
cache, the unchanged rerun, and a first run at `--high` concurrency with the samples scaled to
the same limit (`--no-cache`), the same commands as `bench/concurrency.py`, against one bench
server; then `omk --help` (`--help-runs` times). Optionally, in the same rounds: suite 1 of
`bench/throughput.py` (`--suite N` samples × 10 assertions, replayed; `--peers` adds promptfoo
on the same suite, once per round, so both commits get a ratio against it measured alongside),
and loading `--load N` samples as YAML, JSON and JSON Lines (`bench/load_bench.py`'s files, the
best of three loads in a child process of each checkout after a warm-up load). Peak memory is the kernel's peak RSS
of the omk process. Interleaving the two commits is what makes the comparison fair on a shared
machine, whose speed drifts over an hour.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, WORK, Peers, ensure_peers, measure, median
from concurrency import FakeServer, write_samples

LOAD_SCRIPT = """
import json, sys, time
from omk.loader import load_samples
paths = sys.argv[1:]
load_samples([paths[-1]])  # warm-up: registry import, schema compilation
times = {}
for p in paths:  # the best of three loads: the work is the same each time, the machine's load is not
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        load_samples([p])
        best = min(best, time.perf_counter() - start)
    times[p] = best
print(json.dumps(times))
"""
SUMMARY_SCRIPT = "import json, sys; print(json.dumps(json.load(open(sys.argv[1], encoding='utf-8'))['summary']))"


class Side:
    def __init__(self, name: str, checkout: Path, python: str, work: Path):
        self.name, self.checkout, self.python = name, checkout.resolve(), python
        self.folder = work / name
        self.folder.mkdir(parents=True, exist_ok=True)
        compileall.compile_dir(self.checkout / "omk", quiet=1)  # as pip install would
        self.rows: dict[str, list[float]] = {}
        self.cpu = 0.0  # CPU seconds of the last omk process

    def add(self, key: str, value: float) -> None:
        self.rows.setdefault(key, []).append(value)

    def env(self, server: FakeServer | None = None) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": str(self.checkout)}
        if server is not None:
            env |= {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "bench-key"}
        return env

    def commit(self) -> str:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=self.checkout, capture_output=True, text=True)
        return out.stdout.strip() or str(self.checkout)

    def eval(self, env: dict[str, str], samples: Path, target: str, concurrency: int, *extra: str) -> tuple[float, float, dict]:
        """(wall, peak MB, summary) of one `omk eval` process (its CPU time goes to `self.cpu`);
        raises if it wrote no report or a sample errored."""
        out = self.folder / "run"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [self.python, "-m", "omk", "eval", str(samples), "--target", target, "--no-judge",
               "--concurrency", str(concurrency), "--out", str(out), "--quiet", *extra]
        m = measure(cmd, cwd=self.folder, env=env, ok_codes=(0, 1), tree=False)  # one process: nothing polls
        self.cpu = m.cpu_s
        report = out / "report.json"
        if not report.exists():
            raise RuntimeError(f"{self.name}: no report ({m.returncode}): {m.stderr[-2000:]}")
        # read in a child: parsing a 10,000-result report here would raise this process's RSS, the
        # floor of every peak measured after it (bench/common.py)
        read = subprocess.run([sys.executable, "-c", SUMMARY_SCRIPT, str(report)], capture_output=True, text=True, check=True)
        summary = json.loads(read.stdout)
        if summary["errored"]:
            raise RuntimeError(f"{self.name}: {summary['errored']} samples errored: {m.stderr[-2000:]}")
        return m.wall_s, m.peak_mb, summary

    def run(self, server: FakeServer, samples: Path, concurrency: int, *extra: str) -> tuple[float, float, float]:
        wall, peak, summary = self.eval(self.env(server), samples, "openai:bench-model", concurrency, *extra)
        return wall, summary["duration_ms"] / 1000, peak

    def round(self, server: FakeServer, samples: Path, high_samples: Path | None, args: argparse.Namespace) -> None:
        shutil.rmtree(self.folder / ".omk", ignore_errors=True)  # an empty cache: every sample is called
        for key, value in zip(("first", "phase", "first_peak"), self.run(server, samples, args.concurrency), strict=True):
            self.add(key, value)
        self.add("first_cpu", self.cpu)
        wall, _, peak = self.run(server, samples, args.concurrency)
        self.add("rerun", wall)
        self.add("rerun_cpu", self.cpu)
        self.add("rerun_peak", peak)
        if high_samples is not None:
            for key, value in zip(("high", "high_phase", "high_peak"), self.run(server, high_samples, args.high, "--no-cache"), strict=True):
                self.add(key, value)
            self.add("high_cpu", self.cpu)

    def help(self) -> None:
        m = measure([self.python, "-m", "omk", "--help"], env=self.env(), tree=False)
        self.add("help", m.wall_s)
        self.add("help_cpu", m.cpu_s)

    def suite(self, paths: dict[str, Path], args: argparse.Namespace) -> None:
        wall, peak, _ = self.eval(self.env(), paths["samples"], f"replay:{paths['replay']}", 4, "--no-cache")
        self.add("suite", wall)
        self.add("suite_cpu", self.cpu)
        self.add("suite_peak", peak)

    def load(self, files: dict[str, Path]) -> None:
        env = self.env()
        proc = subprocess.run([self.python, "-c", LOAD_SCRIPT, *map(str, files.values())], env=env, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode:
            raise RuntimeError(f"{self.name}: loading failed: {proc.stderr[-2000:]}")
        times = json.loads(proc.stdout)
        for fmt, path in files.items():
            self.add(f"load {fmt}", times[str(path)])


def table(before: Side, after: Side, args: argparse.Namespace, high_n: int) -> str:
    def cell(side: Side, process: str, phase: str) -> str:
        return f"{median(side.rows[process]):.2f} s / {median(side.rows[phase]):.2f} s"

    def rerun(side: Side) -> str:
        r, f = median(side.rows["rerun"]), median(side.rows["first"])
        return f"{r:.2f} s ({r / f:.0%})"

    def change(key: str) -> str:
        b, a = median(before.rows[key]), median(after.rows[key])
        return f"{a / b - 1:+.0%}"

    lines = [
        f"| measure | before ({before.commit()}) | after ({after.commit()}) | after / before |",
        "|---|---|---|---|",
        f"| {args.samples} calls at concurrency {args.concurrency}: process / run phase | "
        f"{cell(before, 'first', 'phase')} | {cell(after, 'first', 'phase')} | {change('first')} / {change('phase')} |",
        f"| cached rerun, process (share of the first run) | {rerun(before)} | {rerun(after)} | {change('rerun')} |",
    ]
    if high_n:
        lines.append(
            f"| {high_n} calls at concurrency {args.high}: process / run phase | "
            f"{cell(before, 'high', 'high_phase')} | {cell(after, 'high', 'high_phase')} | "
            f"{change('high')} / {change('high_phase')} |"
        )
    lines += [
        f"| {label} | {fmt(before, key)} | {fmt(after, key)} | {change(key)} |"
        for label, key, fmt in _extra_rows(before, args)
    ]
    limit = args.samples / args.concurrency * args.delay
    lines.append("")
    lines.append(
        f"Medians of {args.rounds} interleaved rounds (min–max in brackets for the extra rows); the physical limit "
        f"is {limit:.2f} s at both concurrencies. Peak memory: the omk process's peak RSS."
    )
    return "\n".join(lines)


def _seconds(digits: int = 2):
    def fmt(side: Side, key: str) -> str:
        v = side.rows[key]
        return f"{median(v):.{digits}f} s ({min(v):.{digits}f}–{max(v):.{digits}f})"
    return fmt


def _megabytes(side: Side, key: str) -> str:
    return f"{median(side.rows[key]):.0f} MB"


def _extra_rows(side: Side, args: argparse.Namespace) -> list[tuple[str, str, object]]:
    rows: list[tuple[str, str, object]] = [
        (f"CPU time, {args.samples} calls at concurrency {args.concurrency}", "first_cpu", _seconds()),
        ("CPU time, cached rerun", "rerun_cpu", _seconds()),
        (f"peak memory, {args.samples} calls at concurrency {args.concurrency}", "first_peak", _megabytes),
        ("peak memory, cached rerun", "rerun_peak", _megabytes),
    ]
    if "high_peak" in side.rows:
        rows.append((f"CPU time, calls at concurrency {args.high}", "high_cpu", _seconds()))
        rows.append((f"peak memory, calls at concurrency {args.high}", "high_peak", _megabytes))
    if "help" in side.rows:
        rows.append(("`omk --help`: wall", "help", _seconds(3)))
        rows.append(("`omk --help`: CPU time", "help_cpu", _seconds(3)))
    if "suite" in side.rows:
        rows += [
            (f"suite 1 ({args.suite:,} × 10 assertions, replay, concurrency 4): wall", "suite", _seconds()),
            ("suite 1: CPU time", "suite_cpu", _seconds()),
            ("suite 1: peak memory", "suite_peak", _megabytes),
        ]
    rows += [(f"loading {args.load:,} samples, {k.removeprefix('load ')}", k, _seconds()) for k in side.rows if k.startswith("load ")]
    return rows


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
    parser.add_argument("--help-runs", type=int, default=5, help="`omk --help` runs per side per round (0: skip)")
    parser.add_argument("--suite", type=int, default=0, help="also suite 1 with this many samples (0: skip)")
    parser.add_argument("--peers", action="store_true", help="with --suite: promptfoo on the suite too, each round")
    parser.add_argument("--load", type=int, default=0, help="also load this many samples in three formats (0: skip)")
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args()
    work = (args.work / "compare").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    samples = work / "samples.json"
    write_samples(samples, args.samples)  # small: 2,000 samples are a few MB
    high_n = args.samples * args.high // args.concurrency if args.high else 0
    high_samples = work / "samples-high.json" if high_n else None
    if high_samples is not None:
        write_samples(high_samples, high_n)
    sides = [Side("before", args.before, args.before_python, work), Side("after", args.after, args.after_python, work)]
    suite = _suite(work, args.suite) if args.suite else None
    peers = ensure_peers(args.work / "npm") if args.suite and args.peers else None
    load_files = _load_files(work, args.load) if args.load else None
    promptfoo: list[tuple[float, float]] = []
    server = FakeServer(args.delay)
    try:
        for r in range(args.rounds):
            for _ in range(args.help_runs):  # alternating run by run: a start-up is short, the load is not
                for side in sides:
                    side.help()
            for side in sides:
                side.round(server, samples, high_samples, args)
                if suite is not None:
                    side.suite(suite, args)
                if load_files is not None:
                    side.load(load_files)
            if suite is not None and peers is not None:
                promptfoo.append(_promptfoo(peers, suite, work))
            print(f"round {r + 1}/{args.rounds} done ({_uptime()})", file=sys.stderr)
    finally:
        server.stop()
    print(table(*sides, args, high_n))
    if promptfoo:
        walls, peaks = [w for w, _ in promptfoo], [p for _, p in promptfoo]
        print(f"\npromptfoo on the same suite, same rounds: {median(walls):.2f} s ({min(walls):.2f}–{max(walls):.2f}), "
              f"peak {median(peaks):.0f} MB; omk faster by {median(walls) / median(sides[0].rows['suite']):.1f}× (before), "
              f"{median(walls) / median(sides[1].rows['suite']):.1f}× (after)")
    return 0


def _uptime() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _generated(call: str) -> dict[str, Path]:
    """Files written by a bench module's function in a child process (which returns their paths):
    this process stays small, so it sets no floor under the peaks it measures (bench/common.py)."""
    code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); {call}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {k: Path(v) for k, v in json.loads(out).items()}


def _suite(work: Path, n: int) -> dict[str, Path]:
    folder = str(work / "suite")
    return _generated(f"from pathlib import Path; from suite import write_suite; "
                      f"print(json.dumps({{k: str(v) for k, v in write_suite(Path({folder!r}), {n}).items()}}))")


def _load_files(work: Path, n: int) -> dict[str, Path]:
    folder = work / "load"
    folder.mkdir(parents=True, exist_ok=True)
    return _generated(f"from pathlib import Path; from load_bench import write_all; "
                      f"print(json.dumps({{k: str(v) for k, v in write_all(Path({str(folder)!r}), {n}).items()}}))")


def _promptfoo(peers: Peers, paths: dict[str, Path], work: Path) -> tuple[float, float]:
    cmd = [str(peers.node), str(peers.promptfoo), "eval", "-c", str(paths["promptfoo_config"]), "-o",
           str(work / "promptfoo-results.json"), "--no-cache", "--no-write", "--no-table", "--no-progress-bar", "-j", "4"]
    m = measure(cmd, cwd=paths["samples"].parent, env=peers.env(work / "home"), ok_codes=(0, 100))
    return m.wall_s, m.peak_mb


if __name__ == "__main__":
    sys.exit(main())
