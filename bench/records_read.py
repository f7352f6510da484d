"""Reading a run's results back: CPU time to read N results from results.jsonl (as `--resume` and
`omk merge` read it) and from report.json (as `omk view`, `omk report` and `omk diff` walk it), for
this checkout and, with `--before DIR`, another checkout's `omk/` (a `git archive` of an older
commit is enough), the two turn by turn in each round.

    python bench/records_read.py --before /tmp/omk-before --rounds 5

The results are tests/large_report.py's (checks, an assert-set, tool calls, judge blocks, inlined
URLs, conversations). Each reading runs in a fresh process; the figure is that process's CPU time
for the reading alone (not start-up), the median over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MAKE = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from large_report import result_dict, summary
from omk.report.json_report import dump_report
n, out = {n}, Path({work!r})
results = [result_dict(i) for i in range(n)]
(out / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\\n" for r in results), encoding="utf-8")
with (out / "report.json").open("w", encoding="utf-8") as f:
    dump_report({{"format": "omk-report/1", "run_id": "bench", "results": results, "summary": summary(n)}}, f)
"""

READ = """
import time
from pathlib import Path
from omk.records.document import read_document
from omk.runner.resume import scan_finished
class Tally:
    dropped = 0
    skipped: list = []
work = Path({work!r})
t = time.process_time()
if {which!r} == "jsonl":
    n = sum(1 for _ in scan_finished(work / "results.jsonl", {{f"case-{{i:05d}}": None for i in range({n})}}, 1, Tally()))
else:
    n = sum(1 for _ in read_document(work / "report.json").results)
assert n == {n}, n
print(time.process_time() - t)
"""


def _run(code: str, tree: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([sys.executable, "-c", code], env=env, cwd="/", check=True, capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout (a folder holding its omk/)")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / ".work" / "records-read")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    _run(MAKE.format(tests=str(ROOT / "tests"), n=args.results, work=str(args.work)), ROOT)
    trees = {"this checkout": ROOT} | ({"before": args.before} if args.before else {})
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for which in ("jsonl", "report"):
                out = _run(READ.format(work=str(args.work), which=which, n=args.results), tree)
                times.setdefault((name, which), []).append(float(out))
    print(f"| {args.results:,} results, CPU s (median of {args.rounds}) | results.jsonl | report.json |")
    print("|---|---|---|")
    for name in trees:
        row = [statistics.median(times[(name, w)]) for w in ("jsonl", "report")]
        print(f"| {name} | {row[0]:.3f} | {row[1]:.3f} |")
    print(json.dumps({f"{n} {w}": t for (n, w), t in times.items()}))


if __name__ == "__main__":
    main()
