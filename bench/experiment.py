"""Benchmark: an experiment of 1,000 samples × 2 variants against the physical limit of its calls.

    python bench/experiment.py [--samples 1000] [--concurrency 16] [--delay 0.05] [--runs 5]

Starts `bench/openai_server.py --vary` (each completion answered after `--delay` seconds; the reply
depends on the request, so the two variants score differently sample by sample) and, each round,
runs in a fresh folder

    omk eval samples.json --target openai:bench-model --no-judge --no-cache --concurrency 16 \\
        --control baseline --treatment "reviewer=system:..." --seed 1 --quiet

which makes samples × 2 calls, interleaved under one concurrency limit, then compares the two
variants (paired bootstrap, 10,000 resamples by default) and writes every report. The physical
limit of those calls is ⌈2 × samples / concurrency⌉ × delay (⌈2000/16⌉ × 50 ms = 6.25 s).

Reported, each against that limit: the whole `omk` process, start to exit; the run phase (the
variants' `summary.duration_ms`: from opening the run to the last result). The statistics are
timed apart, in a child process: `omk.stats.analyze` on the results read back from the
variants' report.json files, with the run's seed and settings, i.e. the same computation `omk eval`
made. The rest of the process (start-up, loading, writing the reports) is what remains.

For a peer in the same rounds: a plain `omk eval` (no experiment) of the same number of calls
(2 × samples distinct samples, `--no-cache`) against the same server at the same concurrency.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, add_doc_args, machine, measure, median, omk_command, omk_version, publish
from concurrency import FakeServer, write_samples

SYSTEM = "You are a careful security reviewer. Name the vulnerability and the fix."


STATS_SCRIPT = """
import json, sys, time
from pathlib import Path
from omk.engine.variant_records import records_of_report
from omk.records.document import read_document
from omk.stats import AnalysisSettings, VariantRun, analyze

run = Path(sys.argv[1])
manifest = json.loads((run / "experiment.json").read_text(encoding="utf-8"))
runs = [VariantRun(v["name"], records_of_report(read_document(run / "variants" / v["name"])), v["role"])
        for v in manifest["variants"]]
threshold = json.loads((run / "report.json").read_text(encoding="utf-8"))["summary"]["threshold"]
settings = AnalysisSettings(trivial=manifest["trivial"], threshold=threshold, seed=manifest["seed"])
walls = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    verdict = analyze(runs, settings).verdict
    walls.append(time.perf_counter() - start)
print(json.dumps({"seconds": min(walls), "headline": verdict.headline}))
"""


def statistics_seconds(run: Path, repeats: int = 3) -> tuple[float, str]:
    """The best of `repeats` analyses of the run's two variants (the seed and trivial threshold
    recorded in experiment.json), and the verdict's headline. In a child process: this one stays
    small, so it sets no floor under the peaks it measures (bench/common.py)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", STATS_SCRIPT, str(run), str(repeats)], env=env, capture_output=True,
                         text=True, check=True, timeout=600).stdout
    data = json.loads(out)
    return data["seconds"], data["headline"]


def run_experiment(work: Path, samples: Path, args: argparse.Namespace, server: FakeServer, env: dict) -> dict:
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)
    before = server.calls()
    cmd = [*omk_command(), "eval", str(samples), "--target", "openai:bench-model", "--no-judge", "--no-cache",
           "--concurrency", str(args.concurrency), "--control", "baseline", "--treatment", f"reviewer=system:{SYSTEM}",
           "--seed", "1", "--out", str(out), "--quiet"]
    m = measure(cmd, cwd=work, env=env, ok_codes=(0, 1), tree=False)  # one process: nothing polls while it runs
    calls = server.calls() - before
    phases = []
    for name in ("baseline", "reviewer"):
        summary = json.loads((out / "variants" / name / "report.json").read_text(encoding="utf-8"))["summary"]
        if summary["errored"]:
            raise RuntimeError(f"{name}: {summary['errored']} samples errored: {m.stderr[-2000:]}")
        phases.append(summary["duration_ms"] / 1000)
    if calls != 2 * args.samples or not phases[0]:
        raise RuntimeError(f"expected {2 * args.samples} calls and a run phase, got {calls} calls, {phases}")
    stats, headline = statistics_seconds(out)
    return {"wall": m.wall_s, "phase": max(phases), "stats": stats, "peak": m.peak_mb, "cpu": m.cpu_s, "calls": calls,
            "verdict": headline}


def run_plain(work: Path, samples: Path, args: argparse.Namespace, env: dict) -> dict:
    out = work / "plain"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*omk_command(), "eval", str(samples), "--target", "openai:bench-model", "--no-judge", "--no-cache",
           "--concurrency", str(args.concurrency), "--out", str(out), "--quiet"]
    m = measure(cmd, cwd=work, env=env, ok_codes=(0, 1), tree=False)
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))["summary"]
    return {"wall": m.wall_s, "phase": summary["duration_ms"] / 1000, "peak": m.peak_mb, "cpu": m.cpu_s}


def cell(rows: list[dict], key: str, limit: float | None = None, digits: int = 2) -> str:
    values = [r[key] for r in rows]
    text = f"{median(values):.{digits}f} s ({min(values):.{digits}f}–{max(values):.{digits}f})"
    return text + (f" = **{median(values) / limit:.2f}×**" if limit else "")


def render(args: argparse.Namespace, exp: list[dict], plain: list[dict], loads: list[str]) -> str:
    calls = 2 * args.samples
    limit = math.ceil(calls / args.concurrency) * args.delay
    rest = [{"rest": e["wall"] - e["phase"] - e["stats"]} for e in exp]
    verdict = "within" if median([e["wall"] for e in exp]) <= 1.3 * limit else "**not within**"
    return "\n".join([
        f"Measured {date.today().isoformat()}: {args.samples:,} samples × 2 variants (baseline, and a system prompt) = "
        f"{calls:,} calls, `--concurrency {args.concurrency}`, a local OpenAI-compatible server "
        f"(`bench/openai_server.py --vary`) answering each call in {args.delay * 1000:.0f} ms; median of {args.runs} "
        f"rounds (min–max in brackets). Physical limit ⌈{calls}/{args.concurrency}⌉ × {args.delay * 1000:.0f} ms = "
        f"**{limit:.2f} s**; 1.3× is {1.3 * limit:.2f} s. Load average (1 min) at the end of each round: "
        f"{', '.join(loads)}.",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}",
        "",
        "| measure | time | against the limit |",
        "|---|---|---|",
        f"| experiment, `omk` process start to exit | {cell(exp, 'wall')} | "
        f"**{median([e['wall'] for e in exp]) / limit:.2f}×** |",
        f"| experiment, run phase (the {calls:,} calls, interleaved) | {cell(exp, 'phase')} | "
        f"{median([e['phase'] for e in exp]) / limit:.2f}× |",
        f"| experiment, statistics (`analyze()` on the same results, a child process, best of 3) | "
        f"{cell(exp, 'stats')} | {median([e['stats'] for e in exp]) / limit:.2f}× |",
        f"| experiment, the rest (start-up, loading, reports; per round, process − run phase − statistics) | "
        f"{cell(rest, 'rest')} | |",
        f"| experiment, CPU time of the process | {cell(exp, 'cpu')} | |",
        f"| plain `omk eval` of {calls:,} samples, same server and concurrency: process / run phase | "
        f"{median([p['wall'] for p in plain]):.2f} s / {median([p['phase'] for p in plain]):.2f} s | "
        f"{median([p['wall'] for p in plain]) / limit:.2f}× / {median([p['phase'] for p in plain]) / limit:.2f}× |",
        f"| plain `omk eval`, CPU time of the process | {cell(plain, 'cpu')} | |",
        "",
        f"The whole experiment is {verdict} 1.3× the physical limit. Peak memory: experiment "
        f"{median([e['peak'] for e in exp]):.0f} MB, plain run {median([p['peak'] for p in plain]):.0f} MB. "
        f"Calls made per experiment: {exp[0]['calls']:,}. Verdict printed: `{exp[0]['verdict']}`.",
        "",
        f"Command: `omk eval samples.json --target openai:bench-model --no-judge --no-cache --concurrency "
        f"{args.concurrency} --control baseline --treatment \"reviewer=system:…\" --seed 1 --quiet`, "
        "`OPENAI_BASE_URL` pointing at the bench server.",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.05, help="server answer time in seconds (default 0.05)")
    add_doc_args(parser)
    args = parser.parse_args()
    work = (args.work / f"experiment-{args.samples}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    samples, doubled = work / "samples.json", work / "samples-plain.json"
    write_samples(samples, args.samples)
    write_samples(doubled, 2 * args.samples)
    server = FakeServer(args.delay, "--vary")
    env = {**os.environ, "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "bench-key"}
    exp, plain, loads = [], [], []
    try:
        for r in range(args.runs):
            exp.append(run_experiment(work, samples, args, server, env))
            plain.append(run_plain(work, doubled, args, env))
            loads.append(f"{os.getloadavg()[0]:.1f}")
            e = exp[-1]
            print(
                f"round {r + 1}/{args.runs}: experiment {e['wall']:.2f} s (run {e['phase']:.2f} s, statistics "
                f"{e['stats']:.2f} s) · plain {plain[-1]['wall']:.2f} s (run {plain[-1]['phase']:.2f} s) · load {loads[-1]}",
                file=sys.stderr,
            )
    finally:
        server.stop()
    publish(args, "experiment", render(args, exp, plain, loads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
