"""Shards: N `omk eval --shard I/N` processes side by side against one run, then `omk merge`.

    python bench/shards.py [--samples 200] [--shards 4] [--concurrency 4] [--delay 0.2] [--runs 3]

Starts `bench/openai_server.py` (each completion answered after `--delay` seconds) and, each
round, times one `omk eval` of every sample at `--concurrency`, then N shard processes started
together (each at the same `--concurrency`, as N CI jobs each with their own rate limit would be),
then the merge of their folders. A run bounded by the server's latency should take about 1/N of
the time in N shards; what is left above that is each process's start-up and the merge.
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

from common import add_doc_args, machine, median, omk_command, omk_version, publish
from concurrency import FakeServer, write_samples


def _eval(samples: Path, out: Path, concurrency: int, *extra: str) -> list[str]:
    return [*omk_command(), "eval", str(samples), "--target", "openai:bench-model", "--no-judge", "--no-cache",
            "--concurrency", str(concurrency), "--out", str(out), "--quiet", *extra]


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
    a, b = (json.loads((work / "runs" / d / "report.json").read_text())["summary"] for d in ("whole", "merged"))
    if (a["total"], a["passed"]) != (b["total"], b["passed"]):
        raise RuntimeError(f"the merge differs from the run: {a['passed']}/{a['total']} vs {b['passed']}/{b['total']}")
    return {"whole": whole, "sharded": sharded, "merge": merged}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--delay", type=float, default=0.2, help="server answer time in seconds (default 0.2)")
    add_doc_args(parser)
    args = parser.parse_args()
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
    whole, sharded, merge = (median([r[k] for r in rounds]) for k in ("whole", "sharded", "merge"))
    limit = args.samples / args.concurrency * args.delay
    publish(args, "shards", "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')}: {args.samples} samples, `--concurrency {args.concurrency}` per process, a local "
        f"OpenAI-compatible server answering each call in {args.delay * 1000:.0f} ms; median of {args.runs} rounds. "
        f"One run's limit {args.samples} / {args.concurrency} × {args.delay * 1000:.0f} ms = **{limit:.1f} s**.",
        "",
        f"- Machine: {machine()}",
        f"- omk {omk_version()}",
        "",
        "| | wall time | share of one run |",
        "|---|---|---|",
        f"| one run | {whole:.2f} s | 100% |",
        f"| {args.shards} shards, {args.shards} processes at once | {sharded:.2f} s | **{sharded / whole:.0%}** (1/{args.shards} = {1 / args.shards:.0%}) |",
        f"| `omk merge` of the {args.shards} folders | {merge:.2f} s | {merge / whole:.0%} |",
        f"| shards + merge | {sharded + merge:.2f} s | {(sharded + merge) / whole:.0%} |",
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
