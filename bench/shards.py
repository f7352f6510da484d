"""Benchmark 9: shards — N `omk eval --shard I/N` processes side by side against one run, then `omk merge`;
and the merge of shards totalling 100,000 results, its time and peak memory.

    python bench/shards.py [--samples 400] [--shards 4] [--concurrency 4] [--delay 0.5] [--runs 5]
                           [--merge-results 100000] [--merge-shards 4] [--merge-runs 3] [--no-latency] [--no-merge]

Part one starts `bench/openai_server.py` (each completion answered after `--delay` seconds) and,
each round, times one `omk eval` of every sample at `--concurrency`, then N shard processes started
together (each at the same `--concurrency`, as N CI jobs each with their own rate limit would be),
then the merge of their folders. A run bounded by the server's latency should take about 1/N of
the time in N shards; what is left above that is each process's start-up and the merge. The
ratio is taken against the one run of the same round, so a change in the machine's load between
rounds touches both.

Part two writes the suite of `bench/scale.py` at `--merge-results` samples (10 assertions each,
recorded outputs), runs it once in `--merge-shards` shards with the replay target (real shard
folders, each written by `omk eval --shard I/N`), then, round after round, one unsharded run of
the same suite and `omk merge` of the shards, each with its time, CPU time and peak memory
(bench/common.py's `measure`). The merged report must grade every sample as the unsharded one does.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    Measurement,
    add_doc_args,
    machine,
    measure,
    median,
    omk_command,
    omk_version,
    publish,
    spread,
)
from concurrency import FakeServer, write_samples


def _eval(samples: Path, out: Path, concurrency: int, *extra: str) -> list[str]:
    return [*omk_command(), "eval", str(samples), "--target", "openai:bench-model", "--no-judge", "--no-cache",
            "--concurrency", str(concurrency), "--out", str(out), "--quiet", *extra]


def _summary(folder: Path) -> tuple[int, int]:
    """(total, passed) of a run folder's report.json, whose summary comes before the results: read up to them."""
    head = []
    with (folder / "report.json").open(encoding="utf-8") as f:
        for line in f:
            if line.strip() == '"results": [':
                break
            head.append(line)
    summary = json.loads("".join(head) + '"results": []}')["summary"]
    return int(summary["total"]), int(summary["passed"])


def one_round(work: Path, samples: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, float]:
    shutil.rmtree(work / "runs", ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(_eval(samples, work / "runs" / "whole", args.concurrency), cwd=work, env=env, check=True, capture_output=True)
    whole = time.perf_counter() - start
    start = time.perf_counter()
    jobs = [
        subprocess.Popen(_eval(samples, work / "runs" / f"s{i}", args.concurrency, "--shard", f"{i}/{args.shards}"),
                         cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for i in range(1, args.shards + 1)
    ]
    for job in jobs:
        if job.wait() != 0:
            raise RuntimeError(f"a shard failed: {job.stderr.read().decode()[-2000:] if job.stderr else ''}")
    sharded = time.perf_counter() - start
    start = time.perf_counter()
    folders = [str(work / "runs" / f"s{i}") for i in range(1, args.shards + 1)]
    subprocess.run([*omk_command(), "merge", *folders, "--out", str(work / "runs" / "merged"), "--quiet"],
                   cwd=work, env=env, check=True, capture_output=True)
    merged = time.perf_counter() - start
    a, b = (_summary(work / "runs" / d) for d in ("whole", "merged"))
    if a != b:
        raise RuntimeError(f"the merge differs from the run: {a[1]}/{a[0]} vs {b[1]}/{b[0]} passed")
    sizes = [_summary(work / "runs" / f"s{i}")[0] for i in range(1, args.shards + 1)]
    print(f"whole {whole:.2f} s, {args.shards} shards {sharded:.2f} s ({sharded / whole:.0%}), merge {merged:.2f} s, "
          f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return {"whole": whole, "sharded": sharded, "merge": merged, "largest": max(sizes)}


def latency_part(args: argparse.Namespace) -> str:
    work = args.work / "shards"
    work.mkdir(parents=True, exist_ok=True)
    samples = work / "samples.json"
    write_samples(samples, args.samples)
    server = FakeServer(args.delay)
    env = {**os.environ, "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "bench-key"}
    try:
        rounds = [one_round(work, samples, args, env) for _ in range(args.runs)]
    finally:
        server.stop()
    whole, sharded, merge = ([r[k] for r in rounds] for k in ("whole", "sharded", "merge"))
    share = [r["sharded"] / r["whole"] for r in rounds]
    both = [(r["sharded"] + r["merge"]) / r["whole"] for r in rounds]
    n, ms = args.shards, args.delay * 1000
    limit = -(-args.samples // args.concurrency) * args.delay
    largest = int(rounds[0]["largest"])
    shard_limit = -(-largest // args.concurrency) * args.delay
    return "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')}: {args.samples} samples, `--concurrency {args.concurrency}` per process, a local "
        f"OpenAI-compatible server answering each call in {ms:.0f} ms; median of {args.runs} rounds (min–max in brackets), "
        f"each round's shares taken against that round's one run. One run's limit ⌈{args.samples} / {args.concurrency}⌉ × "
        f"{ms:.0f} ms = **{limit:.1f} s**; the largest of the {n} shards holds {largest} samples, whose limit is "
        f"⌈{largest} / {args.concurrency}⌉ × {ms:.0f} ms = {shard_limit:.1f} s ({shard_limit / limit:.0%} of one run's: "
        f"a hash split is not exactly even).",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}",
        "",
        "| | wall time | share of one run |",
        "|---|---|---|",
        f"| one run | {spread(whole)} | 100% |",
        f"| {n} shards, {n} processes at once | {spread(sharded)} | **{median(share):.0%}** ({min(share):.0%}–{max(share):.0%}); "
        f"ideal 1/{n} = {1 / n:.0%} |",
        f"| `omk merge` of the {n} folders | {spread(merge)} | {median(merge) / median(whole):.0%} |",
        f"| shards + merge | {spread([a + b for a, b in zip(sharded, merge, strict=True)])} | {median(both):.0%} "
        f"({min(both):.0%}–{max(both):.0%}) |",
    ])


# --- the merge of 100,000 results ---------------------------------------------------------------


def _replay(samples: Path, out: Path, concurrency: int, *extra: str) -> list[str]:
    return [*omk_command(), "eval", samples.name, "--target", "replay:responses.jsonl", "--no-judge", "--no-cache",
            "--concurrency", str(concurrency), "--quiet", "--out", str(out), *extra]


def _figures(ms: list[Measurement]) -> str:
    walls, cpus, peaks = [m.wall_s for m in ms], [m.cpu_s for m in ms], [m.peak_mb for m in ms]
    return f"| {spread(walls)} | {median(cpus):,.2f} s | {spread(peaks, 'MB', 0)} |"


def merge_part(args: argparse.Namespace) -> str:
    from scale import omk_counts, write_suite

    n, count = args.merge_results, args.merge_shards
    suite = write_suite(args.work / f"merge-{n}", n, with_json=False)
    folder, runs = suite.folder, args.work / f"merge-{n}" / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    shards = []
    for i in range(1, count + 1):
        shards.append(measure(_replay(suite.jsonl, runs / f"s{i}", args.concurrency, "--shard", f"{i}/{count}"),
                              cwd=folder, ok_codes=(0, 1)))
        print(f"shard {i}/{count}: {shards[-1].wall_s:.1f} s, {shards[-1].peak_mb:.0f} MB", file=sys.stderr)
    whole, merged = [], []
    folders = [str(runs / f"s{i}") for i in range(1, count + 1)]
    for r in range(args.merge_runs):
        shutil.rmtree(runs / "whole", ignore_errors=True)
        shutil.rmtree(runs / "merged", ignore_errors=True)
        whole.append(measure(_replay(suite.jsonl, runs / "whole", args.concurrency), cwd=folder, ok_codes=(0, 1)))
        merged.append(measure([*omk_command(), "merge", *folders, "--out", str(runs / "merged"), "--quiet"],
                              cwd=folder, ok_codes=(0, 1)))
        print(f"round {r + 1}/{args.merge_runs}: run {whole[-1].wall_s:.1f} s {whole[-1].peak_mb:.0f} MB, merge "
              f"{merged[-1].wall_s:.1f} s {merged[-1].peak_mb:.0f} MB, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    a, b = omk_counts(runs / "whole" / "report.json"), omk_counts(runs / "merged" / "report.json")
    if a != b or a[1] != n:
        raise RuntimeError(f"the merge graded differently from the run: {b} vs {a}")
    peak = median([m.peak_mb for m in merged])
    size = sum((runs / f"s{i}" / "report.json").stat().st_size for i in range(1, count + 1))
    return "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')}: the suite of section 7 at {n:,} samples (10 assertions each, recorded "
        f"outputs), run once in {count} shards (`--shard I/{count}`, the replay target, concurrency {args.concurrency}); "
        f"then, round after round, one unsharded run of the same suite and `omk merge` of the {count} shard folders "
        f"({size / 1e6:,.0f} MB of report.json); median of {args.merge_runs} rounds (min–max in brackets).",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}",
        "",
        "| | wall time | CPU time | peak memory |",
        "|---|---|---|---|",
        f"| one shard's run (of {count}; built once) {_figures(shards)}",
        f"| one unsharded run of {n:,} {_figures(whole)}",
        f"| `omk merge` of the {count} shards ({n:,} results) {_figures(merged)}",
        "",
        f"Target: merging {n:,} results within the scale goal of 1 GB: **{peak:,.0f} MB** "
        f"({'met' if peak <= 1000 else 'not met'}; the unsharded run's peak: {median([m.peak_mb for m in whole]):,.0f} MB). "
        f"The merged report grades every sample as the unsharded run does ({a[1]:,} results, {a[2]} errored, "
        "the same passes per assertion).",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--delay", type=float, default=0.5, help="server answer time in seconds (default 0.5)")
    parser.add_argument("--merge-results", type=int, default=100_000, help="results the merge bench merges (100,000)")
    parser.add_argument("--merge-shards", type=int, default=4, help="shards of the merge bench (4)")
    parser.add_argument("--merge-runs", type=int, default=3, help="rounds of the merge bench (3)")
    parser.add_argument("--no-latency", action="store_true", help="only the merge of --merge-results")
    parser.add_argument("--no-merge", action="store_true", help="only the shards against the server")
    add_doc_args(parser)
    args = parser.parse_args()
    args.work = args.work.resolve()
    if not args.no_latency:
        publish(args, "shards", latency_part(args))
    if not args.no_merge:
        publish(args, "shards-merge", merge_part(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
