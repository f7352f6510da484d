"""Each bench script runs end to end on a tiny size (omk only: no npm, no node) and prints its table.

No timing is asserted here: the figures live in docs/benchmarks.md. What is checked is that the
scripts still work against the current omk, and that what they report is the work they claim.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def bench(script: str, *args: str, tmp: Path) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), "--no-doc", "--runs", "1", "--work", str(tmp), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_throughput_runs_the_suite_through_omk(tmp_path):
    out = bench("throughput.py", "--samples", "20", "--no-peers", tmp=tmp_path)
    assert "20 samples × 10 assertions" in out
    # the suite's flaws (bench/suite.py) fail one assertion in most samples: 18 of 20 pass contains
    assert "| omk | 18 | 18 | 18 | 18 | 18 |" in out
    assert (tmp_path / "throughput-20" / "omk-run" / "report.json").exists()


def test_concurrency_calls_once_then_serves_the_rerun_from_the_cache(tmp_path):
    out = bench("concurrency.py", "--samples", "12", "--concurrency", "4", "--high", "8", "--delay", "0.01", tmp=tmp_path)
    first = next(line for line in out.splitlines() if line.startswith("| first"))
    rerun = next(line for line in out.splitlines() if line.startswith("| rerun"))
    assert "| 12 | 0 |" in first  # 12 calls, nothing cached
    assert "**0** (most in any round) | 12 |" in rerun  # no call, all 12 from the cache
    high = next(line for line in out.splitlines() if line.startswith("Higher concurrency"))
    assert "24 samples at `--concurrency 8`" in high
    assert ", 24 calls;" in high  # same limit, every call made


def test_startup_times_help_and_doctor(tmp_path):
    out = bench("startup.py", tmp=tmp_path)
    assert "| `omk --help` |" in out
    assert "| `omk doctor samples/` |" in out


def test_loading_reports_the_line_of_a_mistake_in_every_format(tmp_path):
    out = bench("load_bench.py", "--samples", "30", tmp=tmp_path)
    for fmt in ("YAML", "JSON", "JSON Lines"):
        assert f"| {fmt} |" in out
    assert "eval-samples-broken.jsonl:30: samples[29] (s00029) assertions[2].value" in out


def test_loading_memory_measures_processes_that_only_load_the_suite(tmp_path):
    out = bench("load_bench.py", "--suite", "20", "--before", str(ROOT), "--before-name", "this checkout", tmp=tmp_path)
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| 20 ")]
    assert [(r[0], r[2]) for r in rows] == [("| 20 JSON", "before"), ("| 20 JSON", "after"), ("| 20 JSON Lines", "before"), ("| 20 JSON Lines", "after")]
    assert "- before: this checkout" in out
    assert all(r[-1].endswith(" MB |") for r in rows)


def test_compare_interleaves_two_checkouts_and_tables_both(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(BENCH / "compare.py"), "--before", str(ROOT), "--rounds", "1", "--samples", "8",
         "--concurrency", "4", "--high", "8", "--delay", "0.01", "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| measure | before (")
    assert "| after (" in rows[0]
    assert rows[1].startswith("| 8 calls at concurrency 4: process / run phase |")
    assert rows[2].startswith("| cached rerun, process (share of the first run) |")
    assert rows[3].startswith("| 16 calls at concurrency 8: process / run phase |")
    assert (tmp_path / "compare" / "after" / ".omk" / "cache.sqlite").exists()  # the rerun had a cache to use


def test_experiment_stats_times_the_bootstrap_and_a_whole_analysis(tmp_path):
    out = bench("experiment_stats.py", "--sizes", "5,12", "--resamples", "200", tmp=tmp_path)
    assert "B = 200 resamples" in out
    assert "| 5 | " in out
    assert "| 12 | " in out


def test_experiment_runs_both_variants_and_times_the_statistics_apart(tmp_path):
    out = bench("experiment.py", "--samples", "12", "--concurrency", "4", "--delay", "0.01", tmp=tmp_path)
    assert "12 samples × 2 variants (baseline, and a system prompt) = 24 calls" in out
    assert "Physical limit ⌈24/4⌉ × 10 ms = **0.06 s**" in out
    assert "Calls made per experiment: 24." in out  # the server counted every variant's call
    stats = next(line for line in out.splitlines() if line.startswith("| experiment, statistics"))
    assert " s (" in stats
    phase = next(line for line in out.splitlines() if line.startswith("| experiment, run phase"))
    assert "| 0.00 s" not in phase  # the variants' summaries record the run phase
    assert (tmp_path / "experiment-12" / "run" / "variants" / "reviewer" / "report.json").exists()


def test_scale_runs_each_size_and_counts_what_omk_graded(tmp_path):
    out = bench("scale.py", "--sizes", "40,20", "--no-peers", tmp=tmp_path)
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| samples | tool | wall time |")
    assert "time ÷ 20's (wall / CPU)" in rows[0]
    assert [r.split(" | ")[:2] for r in rows[1:4]] == [["| 20", "omk"], ["| 20", "omk, JSON samples"], ["| 40", "omk"]]
    assert "(linear 2×)" in rows[3]  # 40 samples against the smallest size, 20
    # passes per assertion, read from each run's report.json: the suite's flaws fail 2 of 20 contains
    assert "| 20 | omk | 20 (0) | 18 | 18 | 18 | 18 | 18 |" in out
    assert "| 20 | omk, JSON samples | 20 (0) | 18 | 18 | 18 | 18 | 18 |" in out
    assert "| 40 | omk | 40 (0) | 36 | 36 | 36 | 36 | 36 |" in out
    assert "none errored; omk's verdicts are the same on JSON and on JSON Lines" in out
    assert "| peak memory at 40,000 ≤ 400 MB | not measured | — |" in out  # tiny sizes: no target is judged
    lines = (tmp_path / "scale-40" / "suite" / "eval-samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40
    assert lines[39].startswith('{"sample_id": "s00039"')  # one sample per line
    assert not (tmp_path / "scale-40" / "suite" / "eval-samples.json").exists()  # JSON at the smallest size only


def test_scale_records_a_run_that_did_not_finish_and_a_refused_file(tmp_path):
    env = {**os.environ, "OMK_MAX_SAMPLE_FILE_BYTES": "2000"}  # a cap below the suite's files: omk refuses them
    cmd = [sys.executable, str(BENCH / "scale.py"), "--no-doc", "--runs", "2", "--work", str(tmp_path), "--no-peers"]
    proc = subprocess.run([*cmd, "--sizes", "10"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "omk refused the 10-sample eval-samples.json " in proc.stdout  # JSON Lines has no file cap, JSON has
    assert "its runs set `OMK_MAX_SAMPLE_FILE_BYTES=" in proc.stdout
    assert "| 10 | omk | 10 (0) | 9 | 9 | 9 |" in proc.stdout  # and then it ran

    proc = subprocess.run([*cmd, "--sizes", "10,20", "--max-mb", "1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| 10 | omk | did not finish: memory limit of 1 MB reached (after " in proc.stdout
    assert "| 20 | omk | not run: did not finish 10 |" in proc.stdout


def test_floor_ratio_times_omk_and_the_floor_on_the_same_work(tmp_path):
    out = bench("floor_ratio.py", "--sizes", "30", "--before", str(ROOT), tmp=tmp_path)
    rows = [line for line in out.splitlines() if line.startswith("| 30 |")]
    assert [row.split(" | ")[1] for row in rows] == ["floor", "omk", "omk before"]
    assert all("×" in row for row in rows[1:])
    # the floor and omk gave every assertion the same verdict, sample by sample summed per assertion
    assert "Same work: 30, omk: the floor's passes per assertion; 30, omk before: the floor's passes" in out
    assert len((tmp_path / "scale-30" / "out-floor").read_text(encoding="utf-8").splitlines()) == 30
