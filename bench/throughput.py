"""Benchmark 1: deterministic assertion throughput, omk against promptfoo and omk 0.54.

    python bench/throughput.py [--samples 10000] [--runs 5] [--concurrency 4] [--no-peers]

Generates the suite of `bench/suite.py` (N samples × 10 assertions, recorded outputs) and runs
it, interleaved run by run, through:
- omk: `omk eval eval-samples.json --target replay:responses.jsonl --no-judge`;
- promptfoo 0.123.1: the echo provider with the prompt `{{output}}`, so its "model" answers
  each test's recorded output verbatim (`--no-cache --no-write -o results.json`);
- omk 0.54.0: a custom executor (`--executor "sh exec.sh"`), a shell script that prints the
  recorded reply of the sample named in the prompt: the cheapest executor 0.54 can have.
Each tool writes its full report. Reports wall time and peak memory (median of `--runs`), the
ratios against omk, and the per-assertion pass counts of each tool (to show the same work).
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    Peers,
    add_doc_args,
    ensure_peers,
    machine,
    measure,
    median,
    omk_command,
    omk_version,
    publish,
)
from suite import ASSERTION_NAMES, write_suite

EXEC_SH = """#!/bin/sh
# omk 0.54 custom executor: print the recorded reply of the sample named in the prompt "[sNNNNN] ...".
IFS= read -r line || true
id=${{line#*\\"prompt\\":\\"[}}
id=${{id%%]*}}
exec cat "{outputs}/$id.json"
"""


def omk_counts(report_path: Path) -> list[int]:
    report = json.loads(report_path.read_text(encoding="utf-8"))
    counts = [0] * len(ASSERTION_NAMES)
    for result in report["results"]:
        for i, a in enumerate(result["assertions"]):
            counts[i] += bool(a["passed"])
    return counts


def promptfoo_counts(path: Path) -> list[int]:
    data = json.loads(path.read_text(encoding="utf-8"))
    counts = [0] * len(ASSERTION_NAMES)
    for result in data["results"]["results"]:
        # componentResults lists the ten assertions, then the assert-set's children: take the ten
        for i, a in enumerate(result["gradingResult"]["componentResults"][: len(ASSERTION_NAMES)]):
            counts[i] += bool(a["pass"])
    return counts


def legacy_counts(out_dir: Path) -> list[int]:
    report = json.loads(Path(glob.glob(str(out_dir / "*.report.json"))[0]).read_text(encoding="utf-8"))
    counts = [0] * len(ASSERTION_NAMES)
    for result in report["results"]:
        for i, a in enumerate(result["variants"]["baseline"]["assertions"]["details"]):
            counts[i] += bool(a["passed"])
    return counts


class Tool:
    def __init__(self, name: str, version: str, run: Callable[[int], tuple[float, float]], counts: Callable[[], list[int]], shown: str):
        self.name, self.version, self.run, self.counts, self.shown = name, version, run, counts, shown
        self.walls: list[float] = []
        self.peaks: list[float] = []


def tools_for(args: argparse.Namespace, paths: dict[str, Path], work: Path, peers: Peers | None) -> list[Tool]:
    c = str(args.concurrency)
    omk = omk_command()

    def run_omk(r: int) -> tuple[float, float]:
        out = work / "omk-run"
        cmd = [*omk, "eval", str(paths["samples"]), "--target", f"replay:{paths['replay']}", "--no-judge",
               "--no-cache", "--concurrency", c, "--out", str(out), "--quiet"]
        m = measure(cmd, cwd=work, ok_codes=(0, 1))
        return m.wall_s, m.peak_mb

    tools = [
        Tool(
            "omk",
            omk_version(),
            run_omk,
            lambda: omk_counts(work / "omk-run" / "report.json"),
            f"omk eval eval-samples.json --target replay:responses.jsonl --no-judge --no-cache --concurrency {c} --quiet",
        )
    ]
    if peers is None:
        return tools
    env = peers.env(work / "home")
    suite_dir = paths["samples"].parent

    def run_promptfoo(r: int) -> tuple[float, float]:
        cmd = [str(peers.node), str(peers.promptfoo), "eval", "-c", str(paths["promptfoo_config"]), "-o",
               str(work / "promptfoo-results.json"), "--no-cache", "--no-write", "--no-table", "--no-progress-bar",
               "-j", c]
        m = measure(cmd, cwd=suite_dir, env=env, ok_codes=(0, 100))
        return m.wall_s, m.peak_mb

    exec_sh = work / "exec.sh"
    exec_sh.write_text(EXEC_SH.format(outputs=paths["legacy_outputs"]))

    def run_legacy(r: int) -> tuple[float, float]:
        out = work / "legacy-run"
        for old in glob.glob(str(out / "*.report.json")):
            Path(old).unlink()
        cmd = [str(peers.node), str(peers.legacy_omk), "eval", "--control", "baseline", "--executor",
               f"sh {exec_sh}", "--samples", str(paths["samples"]), "--no-judge", "--skip-doctor",
               "--skip-connectivity", "--no-serve", "--no-cache", "--no-diagnostic", "--no-evidence",
               "--concurrency", c, "--output-dir", str(out), "--lang", "en"]
        m = measure(cmd, cwd=work, env=env, ok_codes=(0, 1), capture=False)
        return m.wall_s, m.peak_mb

    tools.append(
        Tool(
            "promptfoo",
            f"{peers.version('promptfoo')} on node {peers.node_version()}",
            run_promptfoo,
            lambda: promptfoo_counts(work / "promptfoo-results.json"),
            f"promptfoo eval -c promptfooconfig.yaml -o results.json --no-cache --no-write --no-table "
            f"--no-progress-bar -j {c}",
        )
    )
    if not args.no_legacy:
        tools.append(
            Tool(
                "omk 0.54",
                f"{peers.version('oh-my-knowledge')} on node {peers.node_version()}",
                run_legacy,
                lambda: legacy_counts(work / "legacy-run"),
                f'omk eval --control baseline --executor "sh exec.sh" --samples eval-samples.json --no-judge '
                f"--skip-doctor --skip-connectivity --no-serve --no-cache --no-diagnostic --no-evidence "
                f"--concurrency {c}",
            )
        )
    return tools


def render(args: argparse.Namespace, tools: list[Tool]) -> str:
    n = args.samples
    base = tools[0]
    lines = [
        f"Measured {args.stamp}: {n:,} samples × 10 assertions = {n * 10:,} checks, concurrency {args.concurrency}, "
        f"median of {args.runs} runs (min–max in brackets), tools interleaved run by run.",
        "",
        f"- Machine: {machine()}",
        *(f"- {t.name}: {t.version}" for t in tools),
        "",
        "| tool | wall time | checks/s | peak memory | omk is faster by | omk uses less memory by |",
        "|---|---|---|---|---|---|",
    ]
    for t in tools:
        wall, peak = median(t.walls), median(t.peaks)
        ratio = "—" if t is base else f"**{wall / median(base.walls):.1f}×**"
        mem = "—" if t is base else f"{peak / median(base.peaks):.1f}×"
        lines.append(
            f"| {t.name} | {wall:.2f} s ({min(t.walls):.2f}–{max(t.walls):.2f}) | {n * 10 / wall:,.0f} "
            f"| {peak:.0f} MB ({min(t.peaks):.0f}–{max(t.peaks):.0f}) | {ratio} | {mem} |"
        )
    lines += ["", "Passes per assertion (the same verdicts show the same work was done):", ""]
    lines.append("| tool | " + " | ".join(ASSERTION_NAMES) + " |")
    lines.append("|---|" + "---|" * len(ASSERTION_NAMES))
    for t in tools:
        lines.append(f"| {t.name} | " + " | ".join(str(x) for x in t.counts()) + " |")
    lines += ["", "Commands (in the suite folder, which `bench/suite.py` writes):", ""]
    lines += [f"- {t.name}: `{t.shown}`" for t in tools]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=4, help="the same for every tool (default 4, omk's and promptfoo's default)")
    parser.add_argument("--no-peers", action="store_true", help="omk only: no npm, no node")
    parser.add_argument("--no-legacy", action="store_true", help="leave omk 0.54 out")
    add_doc_args(parser)
    args = parser.parse_args()
    from datetime import date

    args.stamp = date.today().isoformat()
    work = (args.work / f"throughput-{args.samples}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    paths = write_suite(work / "suite", args.samples)
    peers = None if args.no_peers else ensure_peers(args.work / "npm")
    tools = tools_for(args, paths, work, peers)
    for r in range(args.runs):
        for t in tools:
            wall, peak = t.run(r)
            t.walls.append(wall)
            t.peaks.append(peak)
            print(f"run {r + 1}/{args.runs} {t.name:10s} {wall:7.2f} s {peak:7.0f} MB", file=sys.stderr)
    publish(args, "throughput", render(args, tools))
    return 0


if __name__ == "__main__":
    sys.exit(main())
