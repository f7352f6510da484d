"""Benchmark 5: loading 10,000 samples as YAML, JSON and JSON Lines, and what loaded samples weigh.

    python bench/load_bench.py [--samples 10000] [--runs 5] [--keep DIR]
    python bench/load_bench.py --suite 10000,40000 [--before CHECKOUT] [--runs 3] [--yaml]

Writes the same set (~5 assertions per sample, 7 with the nested ones) in the three formats
and times `omk.loader.load_samples` on each: parse + validation + building + regex/schema
preparation, median of `--runs` after one warm-up load (registry import, schema compilation).
Then the same files with one mistake in the very last sample, to time how long it takes to
say `FILE:LINE: samples[9999] (id) FIELD: what is wrong` (the line is checked). The memory
column comes from one process per format that only loads the file (see below).

`--suite` measures memory on benchmark 1's suite instead (bench/suite.py: 10 assertions a
sample, one JSON Schema repeated in every sample), as JSON and JSON Lines at each size: for
each file, processes that only load it (`--child`): wall and CPU time, the process's peak RSS
(`VmHWM`, which the process reads itself: the kernel's `ru_maxrss` of a child also counts the
parent it was forked from), and, in one more process under tracemalloc, what stays allocated
once loading returns (after a one-sample warm-up load, so imports are not counted). `--before` runs another
checkout's omk (its folder, put first on PYTHONPATH) in the same rounds, allowed any file size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import add_doc_args, machine, measure, median, omk_version, publish, spread

# omk and yaml are imported where they are used: the process that starts the measured ones stays small.

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
    import yaml

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
    from omk.loader import load_samples

    start = time.perf_counter()
    loaded = load_samples([path])
    elapsed = time.perf_counter() - start
    assert loaded.samples
    return elapsed


def time_error(path: Path, n: int) -> tuple[float, str]:
    from omk.core.errors import InputError
    from omk.loader import load_samples

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
    parser.add_argument("--suite", help="sizes of bench/suite.py's suite to measure memory on, e.g. 10000,40000")
    parser.add_argument("--before", type=Path, help="with --suite: another checkout to measure in the same rounds")
    parser.add_argument("--before-name", help="what to call it in the table (default: its folder and commit)")
    parser.add_argument("--yaml", action="store_true", help="with --suite: the same samples as YAML too")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--warm", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    add_doc_args(parser)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.warm, args.trace)
    if args.suite:
        return suite_memory(args)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = write_all(folder, args.samples)
        broken = write_all(folder, args.samples, broken=True)
        time_load(files["JSON Lines"])  # warm-up: registry import, schema compilation
        rows, message = [], ""
        for fmt, path in files.items():
            loads = [time_load(path) for _ in range(args.runs)]
            errors = []
            for _ in range(args.runs):
                elapsed, message = time_error(broken[fmt], args.samples)
                errors.append(elapsed)
            memory = loaded_memory(path, folder)
            rows.append((fmt, path.stat().st_size / 1e6, loads, errors, memory))
            print(f"{fmt:10s} load {median(loads):.2f} s, error at the end {median(errors):.2f} s", file=sys.stderr)
    yaml_load = max(median(rows[0][2]), median(rows[0][3]))
    lines = [
        f"Measured {date.today().isoformat()}: {args.samples:,} samples (5 assertions each, 7 with the nested ones), "
        f"`omk.loader.load_samples` in one process after a warm-up load; median of {args.runs} runs (min–max).",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}",
        "",
        "| format | size | valid file: load | one mistake in the last sample: time to the FILE:LINE message "
        "| memory: retained after loading / peak of a process that only loads |",
        "|---|---|---|---|---|",
        *(
            f"| {fmt} | {size:.1f} MB | {median(lo):.2f} s ({min(lo):.2f}–{max(lo):.2f}) "
            f"| {median(er):.2f} s ({min(er):.2f}–{max(er):.2f}) | {mem[0]:.0f} MB / {mem[1]:.0f} MB |"
            for fmt, size, lo, er, mem in rows
        ),
        "",
        f"YAML {'meets' if yaml_load < YAML_TARGET_S else '**misses**'} the {YAML_TARGET_S:.0f} s target "
        f"(slower of the two: {yaml_load:.2f} s). The message, checked against the line found by reading the file "
        f"(JSON Lines shown): `{message.splitlines()[0].split('/')[-1]}`",
    ]
    publish(args, "loading", "\n".join(lines))
    return 0


# --- memory: processes that only load ------------------------------------------------------------


def child(path: Path, warm: Path | None, trace: bool) -> int:
    """Load `path` in this process and print what it cost as one JSON line."""
    import gc
    import resource
    import tracemalloc

    from omk.loader import load_samples

    if warm is not None:
        load_samples([warm])  # imports, schema compilation: not the samples' own weight
    if trace:
        tracemalloc.start()
    r0, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    loaded = load_samples([path])
    wall, r1 = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] / 1e6 if trace else None
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    peak = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) * 1024 / 1e6  # KiB
    print(json.dumps({"samples": len(loaded.samples), "wall": wall, "cpu": cpu, "retained_mb": retained, "peak_mb": peak}))
    return 0


def run_child(path: Path, warm: Path, trace: bool, pythonpath: Path | None = None) -> tuple[dict[str, Any], float]:
    """(what the child printed, its own peak RSS in MB)."""
    env = dict(os.environ)
    if pythonpath is not None:  # another checkout's omk; it may refuse files above its size cap
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["OMK_MAX_SAMPLE_FILE_BYTES"] = str(1 << 40)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path), "--warm", str(warm)]
    m = measure(cmd + (["--trace"] if trace else []), env=env, tree=False)
    printed = json.loads(m.stdout.strip().splitlines()[-1])
    return printed, printed["peak_mb"]


def loaded_memory(path: Path, folder: Path) -> tuple[float, float]:
    """(MB retained after loading, peak RSS in MB of a process that only loads `path`)."""
    warm = folder / f"warm{path.suffix}"
    warm.write_text(json.dumps([sample(0)]) if path.suffix != ".jsonl" else json.dumps(sample(0)) + "\n", encoding="utf-8")
    traced, _ = run_child(path, warm, trace=True)
    _, peak = run_child(path, warm, trace=False)
    return traced["retained_mb"], peak



def write_suite_files(folder: Path, n: int, with_yaml: bool = False) -> dict[str, Path]:
    """Benchmark 1's samples (bench/suite.py) as JSON and as JSON Lines, one sample at a time
    (and as YAML with `with_yaml`)."""
    from suite import omk_sample

    paths = {"JSON": folder / f"suite-{n}.json", "JSON Lines": folder / f"suite-{n}.samples.jsonl"}
    with paths["JSON"].open("w", encoding="utf-8") as whole, paths["JSON Lines"].open("w", encoding="utf-8") as lines:
        whole.write('{"samples": [')
        for i in range(n):
            text = json.dumps(omk_sample(i), ensure_ascii=False)
            whole.write((", " if i else "") + text)
            lines.write(text + "\n")
        whole.write("]}")
    if with_yaml:
        import yaml

        paths["YAML"] = folder / f"suite-{n}.yaml"
        with paths["YAML"].open("w", encoding="utf-8") as f:
            f.write("samples:\n")
            for i in range(n):
                f.write(yaml.safe_dump([omk_sample(i)], allow_unicode=True, sort_keys=False, width=100))
    return paths


def suite_memory(args: argparse.Namespace) -> int:
    sizes = [int(n) for n in args.suite.split(",")]
    folder = args.work / "load-memory"
    folder.mkdir(parents=True, exist_ok=True)
    warm = folder / "warm.samples.jsonl"
    files = []
    for n in sizes:
        made = write_suite_files(folder, n, args.yaml)
        for fmt in ("YAML", "JSON"):
            if fmt in made and made[fmt].stat().st_size <= 64 * 2**20:  # omk's cap on a JSON or YAML file
                files.append((f"{n:,} {fmt}", made[fmt]))
        files.append((f"{n:,} JSON Lines", made["JSON Lines"]))
    warm.write_text(files[-1][1].open(encoding="utf-8").readline(), encoding="utf-8")
    checkouts = [("before", args.before.resolve())] if args.before else []
    checkouts.append(("after", None))
    plain: dict[tuple[str, str], list[tuple[dict[str, Any], float]]] = {}
    for r in range(args.runs):
        for label, path in files:
            for name, root in checkouts:
                plain.setdefault((label, name), []).append(run_child(path, warm, False, root))
                print(f"round {r + 1}: {label}, {name}: {plain[label, name][-1]}", file=sys.stderr)
    traced = {(label, name): run_child(path, warm, True, root)[0] for label, path in files for name, root in checkouts}
    publish(args, "loading-memory", memory_table(args, files, checkouts, plain, traced))
    return 0


def memory_table(args: argparse.Namespace, files: list[tuple[str, Path]], checkouts: list[tuple[str, Path | None]],
                 plain: dict[Any, Any], traced: dict[Any, Any]) -> str:  # fmt: skip
    which = {"after": omk_version()}
    if args.before:
        which["before"] = args.before_name or f"{args.before} ({git_at(args.before)})"
    lines = [
        f"Measured {date.today().isoformat()}: benchmark 1's samples (bench/suite.py, 10 assertions each), one process "
        f"per load that only loads the file; median of {args.runs} runs (min–max). Retained: allocated once loading "
        "returns (tracemalloc, one more process, after a one-sample warm-up load).",
        "",
        f"- Machine: {machine()}",
        *(f"- {name}: {desc}" for name, desc in which.items()),
        "",
        "| samples | size | omk | load | CPU | process peak | retained after loading |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, path in files:
        for name, _ in checkouts:
            runs = plain[label, name]
            wall, cpu, peak = [r["wall"] for r, _ in runs], [r["cpu"] for r, _ in runs], [p for _, p in runs]
            lines.append(
                f"| {label} | {path.stat().st_size / 1e6:.0f} MB | {name} | {spread(wall)} | {spread(cpu)} "
                f"| {spread(peak, 'MB', 0)} | {traced[label, name]['retained_mb']:.0f} MB |"
            )
    return "\n".join(lines)


def git_at(root: Path) -> str:
    import subprocess

    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip() or "not a git checkout"


if __name__ == "__main__":
    sys.exit(main())
