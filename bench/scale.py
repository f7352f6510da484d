"""Benchmark 7: scale — the suite of benchmark 1 at 10,000, 40,000 and 100,000 samples, omk and promptfoo.

    python bench/scale.py [--sizes 10000,40000,100000] [--runs 3] [--concurrency 4] [--no-peers]
                          [--time-limit 900] [--max-mb 6000]

Writes the suite of `bench/suite.py` (10 deterministic assertions per sample, recorded outputs) at
each size, one sample at a time so that the bench's own process stays small (bench/common.py says
why): omk's samples as JSON Lines (`eval-samples.jsonl`, one sample per line, the format for large
suites) and, at the smallest size, as JSON too; the recorded outputs (`responses.jsonl`); and
promptfoo's tests. Then runs every size with every tool, round after round (interleaved, so a
change in the machine's load touches all rows alike):
- omk: `omk eval eval-samples.jsonl --target replay:responses.jsonl --no-judge --no-cache --quiet --out DIR`;
- promptfoo 0.123.1: the echo provider answering each test's recorded output, as in benchmark 1.
A run is stopped at `--time-limit` seconds or when its process tree's RSS passes `--max-mb`; a tool
that fails or is stopped at a size is recorded as "did not finish" with the reason, and is not
run again at that size or a larger one. The table gives wall time, CPU time and peak memory per
size, the growth from the smallest size (linear growth is the ratio of the sizes), issue 19's
targets, and each tool's passes per assertion (omk's report.json is read line by line).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    CommandFailed,
    Measurement,
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
from suite import ASSERTION_NAMES, omk_sample, promptfoo_test, recorded_output

SUITE_SOURCE = Path(__file__).resolve().parent / "suite.py"
CAP_MESSAGE = "bytes omk reads"  # omk's refusal of a samples file above its size cap
OMK, OMK_JSON = "omk", "omk, JSON samples"  # the rows' names
PROMPTFOO, PROMPTFOO_JSON = "promptfoo", "promptfoo, JSON report"
ROUGE = ASSERTION_NAMES.index("rouge_n_min")  # a different metric in promptfoo (docs/benchmarks.md, section 1)


# --- the suite, written one sample at a time ------------------------------------------------


@dataclass(slots=True)
class Suite:
    n: int
    folder: Path  # the suite's files; each tool's output goes next to it, under `work`
    work: Path
    with_json: bool  # eval-samples.json too

    @property
    def jsonl(self) -> Path:
        return self.folder / "eval-samples.jsonl"

    @property
    def json(self) -> Path:
        return self.folder / "eval-samples.json"


def write_suite(work: Path, n: int, with_json: bool) -> Suite:
    """Write (or reuse, if the same generator wrote it) the suite of `n` samples under `work`."""
    suite = Suite(n, work / "suite", work, with_json)
    stamp = suite.folder / ".complete"
    key = f"{n} {with_json} {hashlib.sha256(SUITE_SOURCE.read_bytes()).hexdigest()[:16]} writer 1"
    if stamp.exists() and stamp.read_text(encoding="utf-8") == key:
        return suite
    suite.folder.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    folder = suite.folder
    with (
        suite.jsonl.open("w", encoding="utf-8") as lines,
        (folder / "responses.jsonl").open("w", encoding="utf-8") as replay,
        (folder / "promptfoo-tests.json").open("w", encoding="utf-8") as tests,
        (suite.json.open("w", encoding="utf-8") if with_json else open(os.devnull, "w")) as whole,
    ):
        tests.write("[")
        whole.write('{"samples": [')
        for i in range(n):
            sample, output = omk_sample(i), recorded_output(i)
            text = json.dumps(sample, ensure_ascii=False)
            lines.write(text + "\n")
            whole.write((", " if i else "") + text)
            replay.write(json.dumps({"sample_id": sample["sample_id"], "output": output}, ensure_ascii=False) + "\n")
            tests.write((", " if i else "") + json.dumps(promptfoo_test(i, sample, output), ensure_ascii=False))
        tests.write("]")
        whole.write("]}")
    (folder / "promptfooconfig.yaml").write_text(
        "description: omk bench suite 1 at scale\n"
        "prompts:\n  - '{{output}}'\n"
        "providers:\n  - echo\n"
        "tests: file://promptfoo-tests.json\n",
        encoding="utf-8",
    )
    stamp.write_text(key, encoding="utf-8")
    return suite


# --- what each tool did: passes per assertion ------------------------------------------------


def omk_counts(report: Path) -> tuple[list[int], int, int]:
    """Passes per assertion, results and errored results, from report.json read one line at a time.

    report.json writes one result per line inside its "results" array (docs/report-format.md),
    so a 100,000-sample report is never held whole.
    """
    counts, total, errored = [0] * len(ASSERTION_NAMES), 0, 0
    inside = False
    with report.open(encoding="utf-8") as f:
        for line in f:
            text = line.strip()
            if not inside:
                inside = text == '"results": ['
                continue
            if not text.startswith("{"):
                break  # the array's closing bracket
            result = json.loads(text.removesuffix(","))
            total += 1
            errored += result["status"] != "ok"
            for i, a in enumerate(result["assertions"]):
                counts[i] += bool(a["passed"])
    return counts, total, errored


def promptfoo_counts(path: Path) -> tuple[list[int], int, int]:
    """The same from promptfoo's results.json, in a child process: the file is one JSON document, and
    loading it here would grow the bench's own process (the floor of every peak it measures)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--count-promptfoo", str(path)], capture_output=True, text=True, check=True
    )
    counts, total, errored = json.loads(proc.stdout)
    return counts, total, errored


def _promptfoo_tally(results: Iterable[dict[str, Any]]) -> tuple[list[int], int, int]:
    counts, total, errored = [0] * len(ASSERTION_NAMES), 0, 0
    for result in results:
        total += 1
        errored += result.get("failureReason") == 2  # promptfoo's ResultFailureReason.ERROR (1 is a failed assertion)
        # componentResults lists the ten assertions, then the assert-set's children: take the ten
        for i, a in enumerate(result["gradingResult"]["componentResults"][: len(ASSERTION_NAMES)]):
            counts[i] += bool(a["pass"])
    return counts, total, errored


def promptfoo_jsonl_counts(path: Path) -> tuple[list[int], int, int]:
    """The same from promptfoo's JSON Lines report (one result per line), read one line at a time."""
    with path.open(encoding="utf-8") as f:
        return _promptfoo_tally(json.loads(line) for line in f if line.strip())


def _print_promptfoo_counts(path: Path) -> None:
    print(json.dumps(_promptfoo_tally(json.loads(path.read_text(encoding="utf-8"))["results"]["results"])))


# --- tools, rows, runs ------------------------------------------------------------------------


@dataclass
class Row:
    """One tool at one size: its finished runs, or why it did not finish."""

    tool: str
    n: int
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    failed: str = ""  # "did not finish: …" or "not run: …"
    counts: tuple[list[int], int, int] | None = None


@dataclass
class Tool:
    name: str
    version: str
    shown: str  # the command as the doc shows it (run in the suite's folder)
    run: Callable[[Suite], Measurement]  # raises CommandFailed
    counts: Callable[[Suite], tuple[list[int], int, int]]
    at: Callable[[Suite], bool] = lambda suite: True  # which sizes it runs


class OmkTool:
    """omk on one samples format. Today's omk refuses a samples file above its size cap (64 MB by
    default): on that refusal the size is rerun with OMK_MAX_SAMPLE_FILE_BYTES raised, and noted."""

    def __init__(self, args: argparse.Namespace, fmt: str, notes: list[str]):
        self.args, self.fmt, self.notes = args, fmt, notes
        self.env: dict[int, dict[str, str]] = {}
        self.cmd = omk_command()

    def samples(self, suite: Suite) -> Path:
        return suite.jsonl if self.fmt == "jsonl" else suite.json

    def out(self, suite: Suite) -> Path:
        return suite.work / f"omk-{self.fmt}"

    def command(self, suite: Suite) -> list[str]:
        return [*self.cmd, "eval", self.samples(suite).name, "--target", "replay:responses.jsonl", "--no-judge",
                "--no-cache", "--concurrency", str(self.args.concurrency), "--quiet", "--out", str(self.out(suite))]

    def run(self, suite: Suite) -> Measurement:
        shutil.rmtree(self.out(suite), ignore_errors=True)
        env = self.env.get(suite.n)
        try:
            return measure(self.command(suite), cwd=suite.folder, env=env, ok_codes=(0, 1),
                           timeout=self.args.time_limit, max_mb=self.args.max_mb)
        except CommandFailed as exc:
            m = exc.measurement
            if env is not None or m.returncode != 2 or CAP_MESSAGE not in m.stderr:
                raise
        size = self.samples(suite).stat().st_size
        refusal = m.stderr.strip().splitlines()[-1]
        self.notes.append(
            f"omk refused the {suite.n:,}-sample {self.samples(suite).name} ({size / 1e6:,.1f} MB) by default "
            f"(`{refusal}`): its runs set `OMK_MAX_SAMPLE_FILE_BYTES={size}`."
        )
        self.env[suite.n] = {**os.environ, "OMK_MAX_SAMPLE_FILE_BYTES": str(size)}
        return self.run(suite)

    def counts(self, suite: Suite) -> tuple[list[int], int, int]:
        return omk_counts(self.out(suite) / "report.json")


class PromptfooTool:
    """promptfoo with the echo provider, writing its report as JSON Lines (what it asks for on a large
    suite: "Dataset too large for JSON export … Consider using JSONL format") or as JSON (section 1)."""

    FLAGS = ("--no-cache", "--no-write", "--no-table", "--no-progress-bar")

    def __init__(self, args: argparse.Namespace, peers: Peers, fmt: str):
        self.args, self.peers, self.fmt = args, peers, fmt

    def shown(self) -> str:
        return f"promptfoo eval -c promptfooconfig.yaml -o results.{self.fmt} {' '.join(self.FLAGS)} -j {self.args.concurrency}"

    def results(self, suite: Suite) -> Path:
        return suite.work / f"promptfoo-results.{self.fmt}"

    def run(self, suite: Suite) -> Measurement:
        self.results(suite).unlink(missing_ok=True)
        cmd = [str(self.peers.node), str(self.peers.promptfoo), "eval", "-c", "promptfooconfig.yaml",
               "-o", str(self.results(suite)), *self.FLAGS, "-j", str(self.args.concurrency)]
        return measure(cmd, cwd=suite.folder, env=self.peers.env(self.args.work / "scale-home"), ok_codes=(0, 100),
                       timeout=self.args.time_limit, max_mb=self.args.max_mb)

    def counts(self, suite: Suite) -> tuple[list[int], int, int]:
        if self.fmt == "jsonl":
            return promptfoo_jsonl_counts(self.results(suite))
        return promptfoo_counts(self.results(suite))


def tools_for(args: argparse.Namespace, peers: Peers | None, notes: list[str]) -> list[Tool]:
    """omk on JSON Lines at every size and on JSON at the smallest; promptfoo likewise with its report."""
    def smallest(suite: Suite) -> bool:
        return suite.with_json

    omk_jsonl, omk_json = OmkTool(args, "jsonl", notes), OmkTool(args, "json", notes)
    shown = "omk eval {} --target replay:responses.jsonl --no-judge --no-cache --concurrency {} --quiet --out DIR"
    tools = [
        Tool(OMK, omk_version(), shown.format("eval-samples.jsonl", args.concurrency), omk_jsonl.run, omk_jsonl.counts),
        Tool(OMK_JSON, omk_version(), shown.format("eval-samples.json", args.concurrency), omk_json.run,
             omk_json.counts, at=smallest),
    ]
    if peers is None:
        return tools
    version = f"{peers.version('promptfoo')} on node {peers.node_version()}"
    jsonl, whole = PromptfooTool(args, peers, "jsonl"), PromptfooTool(args, peers, "json")
    tools.append(Tool(PROMPTFOO, version, jsonl.shown(), jsonl.run, jsonl.counts))
    tools.append(Tool(PROMPTFOO_JSON, version, whole.shown(), whole.run, whole.counts, at=smallest))
    return tools


FATAL = re.compile(r"^(?:Uncaught )?(?:\w*Error\b|FATAL ERROR\b)|out of memory")  # how node and Python say why


def why_not(m: Measurement) -> str:
    """'did not finish: …' for a run that was stopped or failed, with its time and memory at the end.

    The cause is the limit that stopped it, or the first line of its error output that names an
    error (node prints the error, its stack, then its version), else the last line.
    """
    if m.stopped:
        cause = m.stopped
    else:
        lines = [line.strip() for line in m.stderr.splitlines() if line.strip()]
        fatal = [line for line in lines if FATAL.search(line)]
        said = fatal[0] if fatal else lines[-1] if lines else ""
        cause = f"exit code {m.returncode}" + (f", `{said[:200]}`" if said else "")
    return f"did not finish: {cause} (after {m.wall_s:,.0f} s, at {m.peak_mb:,.0f} MB)"


def run_round(r: int, args: argparse.Namespace, suites: list[Suite], tools: list[Tool], rows: dict) -> None:
    """One run of every tool at every size, smallest size first."""
    for suite in suites:
        for tool in tools:
            row = rows.get((tool.name, suite.n))
            if row is None or row.failed:
                continue
            try:
                m = tool.run(suite)
            except CommandFailed as exc:
                row.failed = why_not(exc.measurement)
                log = suite.work / f"{tool.name.replace(', ', '-')}.stderr.txt"  # the whole story, for a reader
                log.write_text(exc.measurement.stderr, encoding="utf-8")
                for later in suites:  # a larger suite would not finish either: not run
                    other = rows.get((tool.name, later.n))
                    if later.n > suite.n and other is not None and not other.failed:
                        other.failed = f"not run: did not finish {suite.n:,}"
                print(f"round {r + 1}/{args.runs} {suite.n:>7,} {tool.name:22s} {row.failed} ({log})", file=sys.stderr)
                continue
            row.walls.append(m.wall_s)
            row.cpus.append(m.cpu_s)
            row.peaks.append(m.peak_mb)
            print(
                f"round {r + 1}/{args.runs} {suite.n:>7,} {tool.name:22s} {m.wall_s:7.2f} s {m.cpu_s:7.2f} s CPU "
                f"{m.peak_mb:6.0f} MB  load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
            )


# --- the page ---------------------------------------------------------------------------------


def _growth(row: Row, base: Row | None) -> str:
    if base is None or base is row or not (row.walls and base.walls):
        return "—"
    wall = median(row.walls) / median(base.walls)
    cpu = median(row.cpus) / median(base.cpus)
    return f"{wall:.2f}× / {cpu:.2f}× (linear {row.n / base.n:.3g}×)"


def table(rows: dict[tuple[str, int], Row], suites: list[Suite], tools: list[Tool]) -> list[str]:
    smallest = suites[0].n
    lines = [
        f"| samples | tool | wall time | samples/s | CPU time | peak memory | time ÷ {smallest:,}'s (wall / CPU) "
        f"| memory ÷ {smallest:,}'s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for suite in suites:
        for tool in tools:
            row = rows.get((tool.name, suite.n))
            if row is None:
                continue
            if not row.walls:
                lines.append(f"| {row.n:,} | {row.tool} | {row.failed} | — | — | — | — | — |")
                continue
            base = rows.get((tool.name, smallest))
            wall, peak = median(row.walls), median(row.peaks)
            mem = f"{peak / median(base.peaks):.2f}×" if base and base.peaks and base is not row else "—"
            runs = f" ({len(row.walls)} run{'s' if len(row.walls) > 1 else ''}, then {row.failed})" if row.failed else ""
            lines.append(
                f"| {row.n:,} | {row.tool} | {wall:,.2f} s ({min(row.walls):,.2f}–{max(row.walls):,.2f}){runs} "
                f"| {row.n / wall:,.0f} | {median(row.cpus):,.2f} s | {peak:,.0f} MB ({min(row.peaks):,.0f}–"
                f"{max(row.peaks):,.0f}) | {_growth(row, base)} | {mem} |"
            )
    return lines


def _target(name: str, measured: str, met: bool | None) -> str:
    verdict = "—" if met is None else ("yes" if met else "**no**")
    return f"| {name} | {measured} | {verdict} |"


def targets(rows: dict[tuple[str, int], Row]) -> list[str]:
    """Issue 19's targets, from the omk rows (JSON Lines) at 10,000, 40,000 and 100,000 samples.

    Time is judged on CPU time (user + system of the process tree): the other work on a shared
    machine moves it much less than wall time, which is shown beside it.
    """
    lines = ["| target (issue 19) | measured | met? |", "|---|---|---|"]
    base = rows.get((OMK, 10_000))
    for n, limit in ((40_000, 4.6), (100_000, 11.5)):
        name = f"time grows linearly: {n:,} / 10,000 ≤ {limit}× " + (
            "(linear 10×, the same margin as at 40,000)" if n == 100_000 else "(linear 4×)")
        row = rows.get((OMK, n))
        if base is None or row is None or not (base.walls and row.walls):
            failed = row.failed if row is not None else ""
            lines.append(_target(name, failed or "not measured", False if failed else None))
            continue
        wall, cpu = median(row.walls) / median(base.walls), median(row.cpus) / median(base.cpus)
        lines.append(_target(name, f"{cpu:.2f}× CPU ({wall:.2f}× wall)", cpu <= limit))
    for n, limit in ((40_000, 400), (100_000, 1000)):
        name = f"peak memory at {n:,} ≤ {limit:,} MB"
        row = rows.get((OMK, n))
        if row is None or not row.walls:
            failed = row.failed if row is not None else ""
            lines.append(_target(name, failed or "not measured", False if failed else None))
        else:
            lines.append(_target(name, f"{median(row.peaks):,.0f} MB", median(row.peaks) <= limit))
    return [*lines, _against_promptfoo(rows)]


def _against_promptfoo(rows: dict[tuple[str, int], Row]) -> str:
    name = "10,000 × 10 throughput ≥ 10× promptfoo's (aim; met when both pairs are)"
    measured, ratios = [], []
    for mine, theirs, label in ((OMK, PROMPTFOO, "JSON Lines"), (OMK_JSON, PROMPTFOO_JSON, "JSON, as section 1")):
        a, b = rows.get((mine, 10_000)), rows.get((theirs, 10_000))
        if a is None or b is None or not a.walls:
            continue
        if not b.walls:
            measured.append(f"{label}: promptfoo {b.failed}")
            continue
        ratios.append(median(b.cpus) / median(a.cpus))
        measured.append(
            f"{label}: **{ratios[-1]:.1f}×** CPU ({median(b.walls) / median(a.walls):.1f}× wall; CPU omk "
            f"{median(a.cpus):.2f} s, promptfoo {median(b.cpus):.2f} s)"
        )
    if not measured:
        return _target(name, "not measured", None)
    return _target(name, "; ".join(measured), min(ratios) >= 10 if ratios else None)


def counts_table(rows: dict[tuple[str, int], Row]) -> list[str]:
    lines = [
        "| samples | tool | results (errored) | " + " | ".join(ASSERTION_NAMES) + " |",
        "|---|---|---|" + "---|" * len(ASSERTION_NAMES),
    ]
    for row in rows.values():
        if row.counts is not None:
            counts, total, errored = row.counts
            lines.append(f"| {row.n:,} | {row.tool} | {total:,} ({errored}) | " + " | ".join(f"{c:,}" for c in counts) + " |")
    return lines


def same_work(rows: dict[tuple[str, int], Row]) -> list[str]:
    """Did every tool grade every sample, and reach the same verdicts (but where the metrics differ)?"""
    found = []
    for (tool, n), row in rows.items():
        if row.counts is None:
            continue
        counts, total, errored = row.counts
        if total != n or errored:
            found.append(f"{tool} at {n:,}: {total:,} results, {errored} errored (expected {n:,}, none errored)")
        mine = rows.get((OMK, n))
        if tool == OMK or mine is None or mine.counts is None:
            continue
        skip = {ROUGE} if tool.startswith(PROMPTFOO) else set()
        differ = [ASSERTION_NAMES[i] for i, (a, b) in enumerate(zip(counts, mine.counts[0], strict=True))
                  if a != b and i not in skip]
        if differ:
            found.append(f"{tool} and omk at {n:,} differ on {', '.join(differ)}")
    if found:
        return ["**The tools did not do the same work:** " + "; ".join(found) + "."]
    said = ["Every finished tool graded every sample and none errored; omk's verdicts are the same on JSON and on JSON Lines"]
    if any(tool.startswith(PROMPTFOO) and row.counts for (tool, _), row in rows.items()):
        said.append("promptfoo's agree with omk's on every assertion but `rouge_n_min` (a different ROUGE: see section 1)")
    return ["; ".join(said) + "."]


def render(args: argparse.Namespace, suites: list[Suite], tools: list[Tool], rows: dict, loads: list[float],
           notes: list[str]) -> str:
    sizes = ", ".join(f"{s.n:,}" for s in suites)
    lines = [
        f"Measured {date.today().isoformat()}: the suite of section 1 (10 deterministic assertions per sample, "
        f"recorded outputs) at {sizes} samples, concurrency {args.concurrency}, median of {args.runs} runs (min–max "
        f"in brackets), every size and tool interleaved round by round. A run is stopped at {args.time_limit:,.0f} s "
        f"or {args.max_mb:,.0f} MB (its process tree's RSS). Load average (1 min) after each round: "
        + ", ".join(f"{x:.1f}" for x in loads) + " (2 cores, shared). Targets on time are judged on CPU time "
        "(user + system), which the other work on a shared machine moves much less than wall time.",
        "",
        f"- Machine: {machine()}",
        *(f"- {t.name}: {t.version}" for t in tools if t.name in (OMK, PROMPTFOO)),
        "",
        *table(rows, suites, tools),
        "",
        *targets(rows),
        "",
        "Passes per assertion, from each tool's report (the JSON Lines ones and omk's report.json read one line at a time):",
        "",
        *counts_table(rows),
        "",
        *same_work(rows),
        "",
        f"Suite files at {suites[-1].n:,} samples: " + ", ".join(
            f"`{p.name}` {p.stat().st_size / 1e6:,.1f} MB"
            for p in (suites[-1].jsonl, suites[-1].folder / "responses.jsonl", suites[-1].folder / "promptfoo-tests.json")
        ) + ".",
        *(line for note in notes for line in ("", note)),
        "",
        "Commands (in each size's suite folder, which `bench/scale.py` writes):",
        "",
        *(f"- {t.name}: `{t.shown}`" for t in tools),
    ]
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,40000,100000", help="samples per suite, comma-separated")
    parser.add_argument("--concurrency", type=int, default=4, help="the same for every tool (default 4)")
    parser.add_argument("--no-peers", action="store_true", help="omk only: no npm, no node")
    parser.add_argument("--time-limit", type=float, default=900, help="seconds before a run is stopped (900)")
    parser.add_argument("--max-mb", type=float, default=6000, help="RSS of a run's process tree that stops it (6000)")
    parser.add_argument("--count-promptfoo", type=Path, help=argparse.SUPPRESS)  # the child of promptfoo_counts
    add_doc_args(parser)
    parser.set_defaults(runs=3)
    args = parser.parse_args()
    try:
        args.sizes = sorted({int(x.replace("_", "")) for x in args.sizes.split(",") if x.strip()})
    except ValueError:
        parser.error(f"--sizes: expected numbers separated by commas, got {args.sizes!r}")
    if not args.sizes or min(args.sizes) < 1:
        parser.error("--sizes: at least one size, each 1 or more")
    args.work = args.work.resolve()
    return args


def main() -> int:
    args = parse_args()
    if args.count_promptfoo is not None:
        _print_promptfoo_counts(args.count_promptfoo)
        return 0
    suites = []
    for n in args.sizes:
        start = time.perf_counter()
        suites.append(write_suite(args.work / f"scale-{n}", n, with_json=n == args.sizes[0]))
        print(f"suite of {n:,} samples ready in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    peers = None if args.no_peers else ensure_peers(args.work / "npm")
    notes: list[str] = []
    tools = tools_for(args, peers, notes)
    rows = {(t.name, s.n): Row(t.name, s.n) for s in suites for t in tools if t.at(s)}
    loads = []
    for r in range(args.runs):
        run_round(r, args, suites, tools, rows)
        loads.append(os.getloadavg()[0])
    for suite in suites:  # the last run of each tool that finished: what did it grade?
        for tool in tools:
            row = rows.get((tool.name, suite.n))
            if row is not None and row.walls and not row.failed:
                row.counts = tool.counts(suite)
    publish(args, "scale", render(args, suites, tools, rows, loads, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
