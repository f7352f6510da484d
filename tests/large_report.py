"""Large reports for the paged report.html: results in report.json's shape (docs/report-format.md),
made one at a time and parsed as a writer receives them, in a collection that can be read only by
iterating it and that counts how many of its results are alive at once.

SampleResult `i` is deterministic: some fail, some error, some carry a judge block, tool calls, an
inlined URL or a conversation; durations and costs vary so the slowest and the costliest are
well defined; every 97th output carries markup that must never run.
"""

from __future__ import annotations

import random
import weakref
from collections.abc import Iterator
from typing import Any

import msgspec
from report_factory import XSS

from omk.records.document import ReportDocument
from omk.records.result import SampleResult

THRESHOLD = 3.5
CAPABILITIES = ("security-review", "refunds", "tool-use", "summaries")


def _assertion(type_: str, passed: bool, value: Any, message: str, layer: str = "fact", children: list | None = None) -> dict[str, Any]:
    return {
        "type": type_, "layer": layer, "status": "passed" if passed else "failed", "passed": passed, "weight": 1.0,
        "not": False, "value": value, "metric": None, "score": None, "message": message, "error": False,
        "children": children or [],
    }  # fmt: skip


def _scores(i: int, rnd: random.Random, failing: bool) -> dict[str, Any]:
    fact = round(rnd.uniform(1.0, 3.4) if failing else rnd.uniform(3.5, 5.0), 2)
    behavior = round(rnd.uniform(3.5, 5.0), 2)
    composite = round((fact + behavior) / 2, 2)
    if i == 11:  # exact halves: the browser must round them as Python does (to even)
        fact, behavior, composite = 4.125, 4.375, 4.25
    return {"fact": fact, "behavior": behavior, "judge": None, "composite": composite}


def result_dict(i: int) -> dict[str, Any]:
    """Result `i` as report.json holds it."""
    rnd = random.Random(i)
    errored = i % 41 == 7
    failing = not errored and i % 7 in (1, 4)
    output = None if errored else f"Finding {i}: the query concatenates user input; use bound parameters."
    if i % 97 == 3 and output:
        output += " " + XSS
    ok = not failing
    assertions = [] if errored else [
        _assertion("contains", ok, "bound parameters", "output contains \"bound parameters\"" if ok else "no match"),
        _assertion("word_count_max", True, 90, "word count 12 <= max 90", layer="behavior"),
        _assertion("assert-set", ok, None, "1/2 children passed", children=[
            _assertion("contains", ok, "prepared", "output contains \"prepared\"" if ok else "missing \"prepared\""),
            _assertion("regex", True, "bind|param", "matched 'param'"),
        ]),
    ]  # fmt: skip
    tool_calls = [] if i % 10 else [
        {"tool": "Read", "input": {"file_path": f"src/q{i}.py"}, "output": "SELECT * FROM t", "mocked": True,
         "mock_key": "Read:1", "is_error": False},
    ]  # fmt: skip
    result: dict[str, Any] = {
        "sample_id": f"case-{i:05d}",
        "status": "error" if errored else "ok",
        "error": f"target failed after 3 attempts: HTTP 503 (case {i})" if errored else None,
        "source": {"file": "samples/large.yaml", "line": 3 + 4 * i},
        "capability": [CAPABILITIES[i % len(CAPABILITIES)]],
        "difficulty": ("easy", "medium", "hard")[i % 3],
        "tripwire": i % 50 == 0,
        "category": None,
        "prompt": f"Review snippet {i} for SQL injection: db.query('SELECT * FROM t WHERE id=' + u{i})",
        "output": output,
        "trace": {
            "turns": 1, "tool_calls": tool_calls,
            "cost_usd": None if i % 3 == 0 else round(rnd.uniform(0.0001, 0.05), 6),
            "latency_ms": round(rnd.uniform(80, 4000), 1),
            "tokens": {"input": 100 + i % 50, "output": 40 + i % 30},
        },  # fmt: skip
        "assertions": assertions,
        "judge": {"score": 4.0, "rubric": {"score": 4, "reason": f"names the fix ({i})"}} if i % 5 == 0 and not errored else None,
        "judge_skipped": None,
        "urls": [{"url": f"https://example.com/doc/{i}", "status": 200, "content": "doc text"}] if i % 250 == 9 else [],
        "scores": {"fact": None, "behavior": None, "judge": None, "composite": 0.0} if errored else _scores(i, rnd, failing),
        "passed": not errored and not failing,
        "duration_ms": round(rnd.uniform(5, 5000), 1),
        "repeat": 0,
        "attempts": 1,
        "cached": False,
    }
    if i % 500 == 13 and not errored:  # a conversation
        result["turns"] = [
            {"index": 0, "status": "ok", "error": None, "prompt": f"turn one of {i}", "output": "first answer",
             "trace": {"turns": 1, "tool_calls": []}, "assertions": [_assertion("contains", True, "first", "ok")],
             "judge": None, "judge_skipped": None, "scores": {"fact": 5.0, "behavior": None, "judge": None, "composite": 5.0},
             "passed": True, "attempts": 1},
            {"index": 1, "status": "skipped", "error": None, "prompt": f"turn two of {i}", "output": None,
             "trace": {}, "assertions": [], "judge": None, "judge_skipped": None, "scores": {}, "passed": None, "attempts": 0},
        ]  # fmt: skip
    return result


class TrackedResult(SampleResult, gc=True, weakref=True):
    """A SampleResult that can be watched with a weak reference (SampleResult itself has none; a
    struct with one must be tracked by the garbage collector, which SampleResult is not)."""


class LiveResults:
    """A sized, re-iterable collection of `n` results, each made fresh when it is reached; it
    cannot be indexed, and it records how many passes were made and the most results alive at once."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.passes = 0
        self.read = 0  # results made, over every pass
        self.alive = 0
        self.most_alive = 0

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[SampleResult]:
        self.passes += 1
        for i in range(self.n):
            r = TrackedResult.read(result_dict(i))
            self.read += 1
            self.alive += 1
            self.most_alive = max(self.most_alive, self.alive)
            weakref.finalize(r, self._gone)
            yield r
            del r

    def _gone(self) -> None:
        self.alive -= 1


def summary(n: int) -> dict[str, Any]:
    errored = sum(1 for i in range(n) if i % 41 == 7)
    failed = sum(1 for i in range(n) if i % 41 != 7 and i % 7 in (1, 4))
    return {
        "total": n, "ok": n - errored, "errored": errored, "passed": n - errored - failed, "failed": failed,
        "cost_usd": 1.5, "duration_ms": 60000.0, "threshold": THRESHOLD, "gate_passed": False,
        "scores": {"fact": 3.9, "behavior": 4.2, "judge": 4.0, "composite": 4.05},
    }  # fmt: skip


def large_report(n: int) -> tuple[ReportDocument, LiveResults]:
    """A report of `n` results read lazily, and the collection (to look at what the writer did)."""
    head = {
        "format": "omk-report/1", "run_id": "20250101-000000-large", "omk_version": "0.1.0",
        "started_at": "2025-01-01T00:00:00+00:00", "finished_at": "2025-01-01T00:01:00+00:00",
        "samples_files": ["samples/large.yaml"], "target": {"kind": "replay", "spec": "replay:large.jsonl"},
        "judge": None, "summary": summary(n), "results": [],
    }  # fmt: skip
    results = LiveResults(n)
    return msgspec.structs.replace(ReportDocument.from_dict(head), results=results), results  # type: ignore[arg-type]
