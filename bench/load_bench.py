"""Benchmark 5: loading 10,000 samples as YAML, JSON and JSON Lines.

    python bench/load_bench.py [--samples 10000] [--runs 5] [--keep DIR]

Writes the same set (~5 assertions per sample, 7 with the nested ones) in the three formats
and times `omk.loader.load_samples` on each: parse + validation + building + regex/schema
preparation, median of `--runs` after one warm-up load (registry import, schema compilation).
Then the same files with one mistake in the very last sample, to time how long it takes to
say `FILE:LINE: samples[9999] (id) FIELD: what is wrong` (the line is checked).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import add_doc_args, machine, median, omk_version, publish

from omk.errors import InputError
from omk.loader import load_samples

YAML_TARGET_S = 5.0


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


def write_all(folder: Path, n: int, broken: bool = False) -> dict[str, Path]:
    """The set in three formats; with `broken`, the last sample's max_length is a word."""
    samples = [sample(i) for i in range(n)]
    if broken:
        samples[-1]["assertions"][2]["value"] = "lots"
    tag = "-broken" if broken else ""
    files = {
        "YAML": folder / f"eval-samples{tag}.yaml",
        "JSON": folder / f"eval-samples{tag}.json",
        "JSON Lines": folder / f"eval-samples{tag}.jsonl",
    }
    files["YAML"].write_text(
        yaml.safe_dump({"samples": samples}, allow_unicode=True, sort_keys=False, width=100), encoding="utf-8"
    )
    files["JSON"].write_text(json.dumps({"samples": samples}, ensure_ascii=False, indent=2), encoding="utf-8")
    files["JSON Lines"].write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    return files


def expected_line(path: Path, n: int) -> int:
    """The line the broken field is on, found by reading the text (independently of omk)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    last = max(k for k, line in enumerate(lines) if f"s{n - 1:05d}" in line)
    if path.suffix == ".jsonl":
        return last + 1
    return next(k for k in range(last, len(lines)) if "lots" in lines[k]) + 1


def time_load(path: Path) -> float:
    start = time.perf_counter()
    loaded = load_samples([path])
    elapsed = time.perf_counter() - start
    assert loaded.samples
    return elapsed


def time_error(path: Path, n: int) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        load_samples([path])
    except InputError as exc:
        elapsed, message = time.perf_counter() - start, str(exc)
    else:
        raise AssertionError(f"{path}: the broken sample loaded")
    want = f"{path}:{expected_line(path, n)}: samples[{n - 1}] (s{n - 1:05d})"
    if not message.startswith(want):
        raise AssertionError(f"expected {want!r}, got {message!r}")
    return elapsed, message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="write the files here instead of a temporary folder")
    add_doc_args(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = write_all(folder, args.samples)
        broken = write_all(folder, args.samples, broken=True)
        load_samples([files["JSON Lines"]])  # warm-up: registry import, schema compilation
        rows, message = [], ""
        for fmt, path in files.items():
            loads = [time_load(path) for _ in range(args.runs)]
            errors = []
            for _ in range(args.runs):
                elapsed, message = time_error(broken[fmt], args.samples)
                errors.append(elapsed)
            rows.append((fmt, path.stat().st_size / 1e6, loads, errors))
            print(f"{fmt:10s} load {median(loads):.2f} s, error at the end {median(errors):.2f} s", file=sys.stderr)
    yaml_load = max(median(rows[0][2]), median(rows[0][3]))
    lines = [
        f"Measured {date.today().isoformat()}: {args.samples:,} samples (5 assertions each, 7 with the nested ones), "
        f"`omk.loader.load_samples` in one process after a warm-up load; median of {args.runs} runs (min–max).",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}",
        "",
        "| format | size | valid file: load | one mistake in the last sample: time to the FILE:LINE message |",
        "|---|---|---|---|",
        *(
            f"| {fmt} | {size:.1f} MB | {median(lo):.2f} s ({min(lo):.2f}–{max(lo):.2f}) "
            f"| {median(er):.2f} s ({min(er):.2f}–{max(er):.2f}) |"
            for fmt, size, lo, er in rows
        ),
        "",
        f"YAML {'meets' if yaml_load < YAML_TARGET_S else '**misses**'} the {YAML_TARGET_S:.0f} s target "
        f"(slower of the two: {yaml_load:.2f} s). The message, checked against the line found by reading the file "
        f"(JSON Lines shown): `{message.splitlines()[0].split('/')[-1]}`",
    ]
    publish(args, "loading", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
