"""Time `omk.loader.load_samples` on 10,000 generated samples (~5 assertions each).

    python bench/load_bench.py [--samples N] [--keep DIR]

Writes the same set as YAML, JSON and JSON Lines into a temporary folder and loads each one
(parse + validation + building + regex/schema preparation), best of three runs. Speed is not
asserted in the tests; this script is where the figures in docs/samples.md come from.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from omk.loader import load_samples


def sample(i: int) -> dict[str, Any]:
    return {
        "sample_id": f"s{i:05d}",
        "prompt": f"Review snippet {i} for security problems and explain each finding.",
        "context": "function auth(u, p) { db.query('SELECT * FROM users WHERE name=' + u); }",
        "rubric": "Identifies the SQL injection and suggests parameterised queries.",
        "capability": ["security-review", "sql"],
        "difficulty": ["easy", "medium", "hard"][i % 3],
        "assertions": [
            {"type": "contains", "value": "SQL 注入", "weight": 1},
            {"type": "regex", "pattern": f"param(eter)?i[sz]ed|bind{i % 7}"},
            {"type": "max_length", "value": 2000},
            {"type": "not_contains", "value": "no problem", "weight": 0.5},
            {
                "type": "assert-set",
                "mode": "any",
                "children": [{"type": "contains", "value": "prepared"}, {"type": "contains", "value": "bind"}],
            },
        ],
        "dimensions": {"security": "finds the injection", "actionability": "gives fixed code"},
    }


def write_all(folder: Path, n: int) -> dict[str, Path]:
    samples = [sample(i) for i in range(n)]
    files = {
        "yaml": folder / "eval-samples.yaml",
        "json": folder / "eval-samples.json",
        "jsonl": folder / "eval.samples.jsonl",
    }
    files["yaml"].write_text(
        yaml.safe_dump({"samples": samples}, allow_unicode=True, sort_keys=False, width=100), encoding="utf-8"
    )
    files["json"].write_text(json.dumps({"samples": samples}, ensure_ascii=False, indent=2), encoding="utf-8")
    files["jsonl"].write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    return files


def best_of(path: Path, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        loaded = load_samples([path])
        times.append(time.perf_counter() - start)
        assert loaded.samples
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="write the files here instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = write_all(folder, args.samples)
        load_samples([files["json"]])  # warm-up: registry import, schema compilation
        print(f"{args.samples} samples, ~5 assertions each (Python {sys.version.split()[0]})")
        for fmt, path in files.items():
            size = path.stat().st_size / 1e6
            print(f"  {fmt:5s} {size:6.2f} MB  {best_of(path):6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
