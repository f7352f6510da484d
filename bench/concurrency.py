"""Benchmarks 2 and 3: concurrency against the physical limit, then the cached rerun.

    python bench/concurrency.py [--samples 500] [--concurrency 16] [--delay 0.05] [--runs 5]

Starts `bench/openai_server.py` (answers each completion after `--delay` seconds) and, in a
fresh folder each round, runs `omk eval samples.json --target openai:bench-model
--concurrency 16` twice: the first run calls the server for every sample (the cache starts
empty); the second is the unchanged rerun, served from `.omk/cache.sqlite`. The server counts
the calls each run made. The physical limit of the first run is samples / concurrency × delay
(500 / 16 × 50 ms ≈ 1.56 s; in whole waves, ⌈500/16⌉ × 50 ms = 1.60 s).

For scale, each round also times two bare clients against the same server at the same
concurrency, in this script's own process: a minimal asyncio HTTP/1.1 client (keep-alive, one
connection per slot), and one `httpx.AsyncClient`. They show what the machine and the HTTP
client cost before omk does anything.

Two times are reported for each run: the omk process from start to exit (Python start-up,
imports, loading and the report included), and the run phase omk records in the report
(`summary.duration_ms`: from the start of the run, URL inlining included, to the last result).

`--high 64` adds a first run at concurrency 64 with the samples scaled to keep the same limit
(2,000), where the HTTP client's CPU rather than the server sets the pace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH, add_doc_args, machine, measure, median, omk_command, omk_version, publish


def write_samples(path: Path, n: int) -> None:
    samples = [
        {
            "sample_id": f"c{i:04d}",
            "prompt": f"[c{i:04d}] Review query builder #{i} for injection risks.",
            "assertions": [
                {"type": "contains", "value": "injection"},
                {"type": "regex", "pattern": r"parameteri[sz]ed quer(y|ies)"},
                {"type": "max_length", "value": 500},
            ],
        }
        for i in range(n)
    ]
    path.write_text(json.dumps({"samples": samples}, ensure_ascii=False, indent=1), encoding="utf-8")


class FakeServer:
    def __init__(self, delay: float, *extra: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(BENCH / "openai_server.py"), "--delay", str(delay), "--max-seconds", "1800", *extra],
            stdout=subprocess.PIPE,
            text=True,
        )
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        if not first.startswith("PORT "):
            self.proc.kill()
            raise RuntimeError(f"the bench server did not start: {first!r}")
        self.url = f"http://127.0.0.1:{int(first.split()[1])}"

    def calls(self) -> int:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=5) as reply:
            return int(json.loads(reply.read())["calls"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


async def _raw_client(port: int, n: int, concurrency: int) -> float:
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body

    async def slot(count: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(count):
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
            await reader.readexactly(length)
        writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(slot(n // concurrency + (i < n % concurrency)) for i in range(concurrency)))
    return time.perf_counter() - start


async def _httpx_client(url: str, n: int, concurrency: int) -> float:
    import httpx

    gate = asyncio.Semaphore(concurrency)
    payload = {"model": "bench", "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient() as client:

        async def one() -> None:
            async with gate:
                (await client.post(f"{url}/v1/chat/completions", json=payload)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - start


def run_once(
    work: Path, samples: Path, concurrency: int, server: FakeServer, env: dict[str, str], *extra: str
) -> dict:
    before = server.calls()
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*omk_command(), "eval", str(samples), "--target", "openai:bench-model", "--no-judge",
           "--concurrency", str(concurrency), "--out", str(out), "--quiet", *extra]
    m = measure(cmd, cwd=work, env=env, ok_codes=(0, 1), tree=False)  # one process: nothing polls while it runs
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))["summary"]
    if summary["errored"]:
        raise RuntimeError(f"{summary['errored']} samples errored: {m.stderr[-2000:]}")
    return {
        "wall": m.wall_s,
        "phase": summary["duration_ms"] / 1000,
        "calls": server.calls() - before,
        "cached": summary.get("cached", 0),
        "peak": m.peak_mb,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.05, help="server answer time in seconds (default 0.05)")
    parser.add_argument(
        "--high", type=int, default=64,
        help="also run at this concurrency, with samples scaled to keep the same limit (0: skip; default 64)",
    )
    add_doc_args(parser)
    args = parser.parse_args()
    work = (args.work / f"concurrency-{args.samples}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    samples = work / "samples.json"
    write_samples(samples, args.samples)
    high_n = args.samples * args.high // args.concurrency if args.high else 0
    high_samples = work / "samples-high.json"
    if high_n:
        write_samples(high_samples, high_n)
    server = FakeServer(args.delay)
    env = {**os.environ, "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "bench-key"}
    firsts, reruns, raw, bare, highs, high_bare = [], [], [], [], [], []
    port = int(server.url.rsplit(":", 1)[1])
    try:
        for r in range(args.runs):
            shutil.rmtree(work / ".omk", ignore_errors=True)  # an empty cache: every sample is called
            first = run_once(work, samples, args.concurrency, server, env)
            again = run_once(work, samples, args.concurrency, server, env)
            firsts.append(first)
            reruns.append(again)
            raw.append(asyncio.run(_raw_client(port, args.samples, args.concurrency)))
            bare.append(asyncio.run(_httpx_client(server.url, args.samples, args.concurrency)))
            if high_n:
                highs.append(run_once(work, high_samples, args.high, server, env, "--no-cache"))
                high_bare.append(asyncio.run(_httpx_client(server.url, high_n, args.high)))
            print(
                f"round {r + 1}/{args.runs}: first {first['wall']:.2f} s (run {first['phase']:.2f} s, "
                f"{first['calls']} calls) · rerun {again['wall']:.2f} s ({again['calls']} calls)",
                file=sys.stderr,
            )
    finally:
        server.stop()
    limit = args.samples / args.concurrency * args.delay
    waves = -(-args.samples // args.concurrency) * args.delay

    def col(rows: list[dict], key: str) -> list[float]:
        return [row[key] for row in rows]

    fw, fp, rw = median(col(firsts, "wall")), median(col(firsts, "phase")), median(col(reruns, "wall"))
    from datetime import date

    lines = [
        f"Measured {date.today().isoformat()}: {args.samples} samples, `--concurrency {args.concurrency}`, a local "
        f"OpenAI-compatible server (`bench/openai_server.py`) answering each call in {args.delay * 1000:.0f} ms; "
        f"median of {args.runs} rounds (min–max in brackets). Physical limit {args.samples} / {args.concurrency} × "
        f"{args.delay * 1000:.0f} ms = **{limit:.2f} s** ({waves:.2f} s in whole waves of {args.concurrency}).",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}",
        "",
        "| run | omk process, start to exit | run phase (`summary.duration_ms`) | calls made | cached results | peak memory |",
        "|---|---|---|---|---|---|",
        f"| first (empty cache) | {fw:.2f} s ({min(col(firsts, 'wall')):.2f}–{max(col(firsts, 'wall')):.2f}) = "
        f"**{fw / limit:.2f}× the limit** | {fp:.2f} s ({min(col(firsts, 'phase')):.2f}–{max(col(firsts, 'phase')):.2f}) "
        f"= **{fp / limit:.2f}× the limit** | {median(col(firsts, 'calls')):.0f} | {median(col(firsts, 'cached')):.0f} "
        f"| {median(col(firsts, 'peak')):.0f} MB |",
        f"| rerun (unchanged) | {rw:.2f} s ({min(col(reruns, 'wall')):.2f}–{max(col(reruns, 'wall')):.2f}) = "
        f"**{rw / fw:.0%} of the first run** | {median(col(reruns, 'phase')):.2f} s | "
        f"**{max(col(reruns, 'calls')):.0f}** (most in any round) | {median(col(reruns, 'cached')):.0f} "
        f"| {median(col(reruns, 'peak')):.0f} MB |",
        "",
        f"Bare clients, same server, same {args.samples} calls at concurrency {args.concurrency} (no omk): minimal asyncio "
        f"client {median(raw):.2f} s ({median(raw) / limit:.2f}× the limit), `httpx.AsyncClient` {median(bare):.2f} s "
        f"({median(bare) / limit:.2f}× the limit).",
        *(_high_lines(args, high_n, highs, high_bare) if high_n else []),
        "",
        f"Command (twice per round, in the same folder): `omk eval samples.json --target openai:bench-model "
        f"--no-judge --concurrency {args.concurrency} --quiet` with `OPENAI_BASE_URL` pointing at the bench server.",
    ]
    publish(args, "concurrency", "\n".join(lines))
    return 0


def _high_lines(args: argparse.Namespace, n: int, highs: list[dict], bare: list[float]) -> list[str]:
    """The same limit at a higher concurrency: where the HTTP client's CPU, not the network, sets the pace."""
    limit = n / args.high * args.delay
    wall, phase = median([h["wall"] for h in highs]), median([h["phase"] for h in highs])
    return [
        "",
        f"Higher concurrency, same limit: {n} samples at `--concurrency {args.high}` (`--no-cache`), limit {n} / "
        f"{args.high} × {args.delay * 1000:.0f} ms = {limit:.2f} s: omk process {wall:.2f} s ({wall / limit:.2f}× the "
        f"limit), run phase {phase:.2f} s ({phase / limit:.2f}×), {median([h['calls'] for h in highs]):.0f} calls; "
        f"one bare `httpx.AsyncClient` for the same calls {median(bare):.2f} s ({median(bare) / limit:.2f}×).",
    ]


if __name__ == "__main__":
    sys.exit(main())
