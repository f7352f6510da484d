"""Results stream to disk: a run with a folder keeps no result in memory, its report is the same
as a run kept in memory, a killed large run resumes with nothing lost or repeated, and the report
writers read results one at a time."""

from __future__ import annotations

import gc
import json
import os
import re
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import msgspec
import pytest
from cli_support import run_omk

from omk.engine import EvalOptions, Evaluation
from omk.engine.results import Results
from omk.records import SampleResult
from omk.records.document import read_document
from omk.report import write_format

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from suite import write_suite  # noqa: E402  (the benchmark's suite: 10 assertions, passes and failures)

TIMINGS = ("duration_ms", "latency_ms", "api_latency_ms", "started_at", "finished_at", "run_id")


def untimed(value):
    """`value` without the fields that measure time (they differ between any two runs)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    return write_suite(folder, 400)


def run(suite, out: Path | None, **more):
    options = EvalOptions(
        samples=[str(suite["samples"])],
        target=f"replay:{suite['replay']}",
        no_judge=True,
        no_cache=True,
        out=str(out) if out else None,
        **{"format": "json,junit,md,html", **more},
    )
    return Evaluation.prepare(options, cwd=suite["samples"].parent, write=out is not None)


def test_a_streamed_run_writes_the_report_a_run_kept_in_memory_writes(suite, tmp_path):
    import asyncio

    streamed = run(suite, tmp_path / "streamed")
    asyncio.run(streamed.execute())
    assert streamed.log.kept == {}, "a run with a folder keeps no result object"
    on_disk = streamed.finish()
    assert isinstance(on_disk.results, Results)
    assert len(on_disk.results) == 400

    kept = run(suite, None)
    asyncio.run(kept.execute())
    assert len(kept.log.kept) == 400
    in_memory = kept.finish()
    in_memory.write(["json", "junit", "md", "html"], out_dir=tmp_path / "memory")

    a = json.loads((tmp_path / "streamed" / "report.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "memory" / "report.json").read_text(encoding="utf-8"))
    assert untimed(a) == untimed(b)
    assert a["summary"]["passed"] == on_disk.summary.passed
    assert any(c["status"] == "failed" for r in a["results"] for c in r["assertions"]), "the suite has failing checks"
    # byte for byte, once the timings are taken out of the result lines
    lines_a = [json.dumps(untimed(json.loads(t)), ensure_ascii=False) for t in on_disk.results.texts()]
    lines_b = [json.dumps(untimed(r.to_json()), ensure_ascii=False) for r in in_memory.results]
    assert lines_a == lines_b
    # the objects read back are the results: same checks, same messages
    for x, y in zip(on_disk.results, in_memory.results, strict=True):
        assert (x.sample_id, x.passed, x.scores, x.output) == (y.sample_id, y.passed, y.scores, y.output)
        assert [(c.type, c.status, c.message) for c in x.assertions] == [(c.type, c.status, c.message) for c in y.assertions]
    assert on_disk.result("s00007").output == in_memory.result("s00007").output
    assert on_disk.to_dict()["results"] == [json.loads(t) for t in on_disk.results.texts()]


def test_the_other_formats_render_the_same_from_either_run(suite, tmp_path):
    import asyncio

    for out in (tmp_path / "s", None):
        ev = run(suite, out)
        asyncio.run(ev.execute())
        report = ev.finish()
        if out is None:
            report.write(["json", "junit", "md"], out_dir=tmp_path / "m")
    for fmt in ("junit.xml", "summary.md"):
        a = (tmp_path / "s" / fmt).read_text(encoding="utf-8")
        b = (tmp_path / "m" / fmt).read_text(encoding="utf-8")
        strip = re.compile(r'(time|timestamp)="[^"]*"|\d+\.\d s \||\d{8}-\d{6}-[0-9a-f]{6}|\d{4}-\d\d-\d\dT[\d:+]+')
        assert strip.sub("", a) == strip.sub("", b), fmt


def test_a_killed_large_run_resumes_with_nothing_lost_or_repeated(tmp_path):
    paths = write_suite(tmp_path, 6000)
    out = tmp_path / "run"
    # not run_omk: the run is killed while it writes, so Popen
    argv = [sys.executable, "-m", "omk", "eval", str(paths["samples"]), "--target", f"replay:{paths['replay']}",
            "--no-judge", "--no-cache", "--concurrency", "1", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.stat().st_size > 2_000_000:  # some hundreds of results
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the run ended before it could be killed: " + proc.stderr.read().decode()[-500:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = [json.loads(line) for line in results.read_bytes().split(b"\n") if line.strip().startswith(b"{") and line.endswith(b"}")]
    assert 100 < len(before) < 6000
    # the kill may have torn the last line; the resume cuts it off and runs that sample again
    done = run_omk("eval", "--resume", str(out), "--quiet", cwd=tmp_path, drop=(), columns=None, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    lines = results.read_text(encoding="utf-8").splitlines()
    keys = [(d["sample_id"], d["repeat"]) for d in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) == 6000, "every sample exactly once: none lost, none run twice"
    assert [json.loads(line) for line in lines[: len(before)]] == before, "what had finished is kept as it was"
    report = read_document(out)
    assert [r.sample_id for r in report.results] == [f"s{i:05d}" for i in range(6000)]
    assert report.summary.total == 6000
    assert report.summary.passed == sum(1 for r in report.results if r.passed)


class Tracked(SampleResult, gc=True, weakref=True):
    """A report result that says when it is collected."""


class CountingRows:
    """Results made one at a time, counting how many are alive at once."""

    def __init__(self, template: SampleResult, n: int):
        self.template, self.n = template, n
        self.alive = self.most = 0

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        values = msgspec.structs.asdict(self.template)
        for i in range(self.n):
            passed = i % 3 != 0
            r = Tracked(**{**values, "sample_id": f"s{i:05d}", "passed": passed, "status": "ok" if i % 7 else "error"})
            self.alive += 1
            self.most = max(self.most, self.alive)
            weakref.finalize(r, self._gone)
            yield r

    def _gone(self) -> None:
        self.alive -= 1


def counted_report(suite, tmp_path):
    """A real run's report whose results are 5,000 made one at a time and counted."""
    import asyncio

    ev = run(suite, tmp_path / "run", format="json")
    asyncio.run(ev.execute())
    ev.finish()
    doc = read_document(tmp_path / "run")
    rows = CountingRows(next(iter(doc.results)), 5000)
    msgspec.structs.force_setattr(doc, "results", rows)
    return doc, rows


@pytest.mark.parametrize("fmt", ["junit", "md"])
def test_a_writer_holds_a_bounded_number_of_results(fmt, suite, tmp_path):

    doc, rows = counted_report(suite, tmp_path)
    gc.collect()
    write_format(tmp_path / "out", doc, fmt)
    assert rows.most <= 2, f"{fmt} held {rows.most} of 5000 results at once"


def test_the_terminal_shows_a_bounded_table_of_a_large_run(suite, tmp_path):

    from rich.console import Console

    from omk.report.terminal import print_summary

    doc, rows = counted_report(suite, tmp_path)
    console = Console(record=True, width=120, file=open(os.devnull, "w"))  # noqa: SIM115
    print_summary(doc, console)
    text = console.export_text()
    assert "200 of 5000 results shown" in text
    assert "more that did not pass" in text
    assert rows.most <= 250


def test_sample_results_read_back_are_full_objects(suite, tmp_path):
    import asyncio

    ev = run(suite, tmp_path / "run", format="json")
    asyncio.run(ev.execute())
    report = ev.finish()
    first = report.results[0]
    assert isinstance(first, SampleResult)
    assert first.sample_id == ev.samples[0].sample_id
    assert first.source_file == ev.samples[0].source.file
    assert first.source_line == ev.samples[0].source.line
    assert report.results[-1].sample_id == "s00399"
    assert len(report.results[10:20]) == 10
    assert len(report.failures()) == 400 - report.summary.passed


def test_a_results_line_is_the_text_json_writes_and_a_nan_is_still_named(tmp_path):
    """results.jsonl's lines come from msgspec with `json.dumps`'s layout (numbers aside: 1e-05 is
    written 0.00001 and reads back equal); a NaN anywhere is written as null and its place said."""
    from omk.engine.results import ResultLog
    from omk.io.jsontext import dumps
    from omk.records import AssertionResult, ToolCall, Trace
    from omk.samples.model import Layer, Sample, Status

    samples = [Sample(sample_id=s, prompt="p") for s in ("plain", "nan", "inf")]
    check = AssertionResult(type="latency", layer=Layer.FACT, status=Status.PASSED, weight=1.0, negate=False, metric=1e-05, value={"é": [1.5]})
    plain = SampleResult.start(samples[0], "héllo\u2028", output="ok", assertions=(check,), duration_ms=3.25)
    nan = SampleResult.start(samples[1], "p", trace=Trace(tool_calls=(ToolCall(tool="calc", input={"x": [float("nan")]}),)))
    log = ResultLog(samples, tmp_path / "results.jsonl")
    log.open(fresh=True)
    log.add(plain)
    log.add(nan)
    inner = AssertionResult(type="python", layer=Layer.FACT, status=Status.FAILED, weight=1.0, negate=False, score=float("inf"))
    outer = AssertionResult(type="assert-set", layer=Layer.FACT, status=Status.FAILED, weight=1.0, negate=False, children=(inner,))
    log.add(SampleResult.start(samples[2], "p", assertions=(outer,)))
    log.close()
    lines = (tmp_path / "results.jsonl").read_text(encoding="utf-8").split("\n")  # U+2028 is no line end here
    assert lines[0] == dumps(plain.to_json()).replace("1e-05", "0.00001")
    assert '"metric": 0.00001' in lines[0]
    assert log.result(("plain", 0)).to_json() == plain.to_json()  # the value as written (duration_ms rounded)
    assert '"input": {"x": [null]}' in lines[1]
    assert '"score": null' in lines[2]
    assert log.nonfinite == ["nan.trace.tool_calls[0].input.x[0]", "inf.assertions[0].children[0].score"]


def test_a_line_made_piece_by_piece_is_the_line_of_the_whole_object(tmp_path):
    """`wire_line` writes each value alone (and a check's JSON once for a repeated record): its
    text is the one msgspec writes for `to_wire`'s whole object, whatever the result holds."""
    from omk.engine.results import ResultLog, wire_line
    from omk.records import AssertionResult, Scores, ToolCall, Trace
    from omk.samples.model import Layer, Sample, SourceRef, Status

    def whole(r):
        return msgspec.json.format(msgspec.json.encode(r.to_wire()), indent=0) + b"\n"

    check = AssertionResult(type="contains", layer=Layer.FACT, status=Status.PASSED, weight=1.0, negate=False, value="x", message='say "x", 1: 2')
    child = AssertionResult(type="regex", layer=Layer.BEHAVIOR, status=Status.FAILED, weight=2.5, negate=True, metric=0.25, value={"a": [1, 2]})
    both = AssertionResult(type="assert-set", layer=Layer.FACT, status=Status.SKIPPED, weight=1.0, negate=False, children=(check, child))
    bare = Sample(sample_id="bare", prompt="p")
    full = Sample(sample_id="full", prompt="p", capability=("a", "b"), difficulty="hard", tripwire=True, category="c")
    full.source = SourceRef("s.jsonl", 3, "samples[2]")
    full.inlined_urls = ({"url": "https://x", "content": "c, d: e"},)
    trace = Trace(turns=2, tool_calls=(ToolCall(tool="t", input={"k": [1, "v: w"]}, output="o"),), cost_usd=0.5, notes=("n",))
    results = [
        SampleResult.start(bare, "p"),
        SampleResult.start(bare, "p", status="error", error="boom, here: now", attempts=3, duration_ms=12.345),
        SampleResult.start(full, "héllo\u2028 {}, []", output='{"a": 1, "b": [2, 3]}', trace=trace, assertions=(check, both, check),
                           scores=Scores(5.0, 1.0, None, 3.0), passed=True, repeat=2, cached=True, judge_skipped="no judge"),
    ]
    log = ResultLog([bare, full])
    for r in results:
        assert wire_line(r, [msgspec.json.format(msgspec.json.encode(a), indent=0) for a in r.assertions]) == whole(r)
        assert log._quick_line(r) == whole(r)  # its checks' JSON kept and taken again for `check`
    assert len(log._checks) == 2  # the two records at the top, each kept once


def test_a_result_started_from_a_sample_has_each_value_in_the_field_of_its_name():
    """`SampleResult.start` gives the fields by position (it runs for every sample): each value
    lands in the field it is given for, as given by name (the flags set one at a time, so no two
    fields hold the same value unnoticed)."""
    from omk.records import AssertionResult, Scores, Trace
    from omk.records.judging import JudgeBlock
    from omk.samples.model import Sample, SourceRef, Status

    for passed, cached, tripwire in ((True, False, False), (False, True, False), (False, False, True)):
        sample = Sample(sample_id="s7", prompt="p", capability=("a", "b"), difficulty="hard", tripwire=tripwire, category="c")
        sample.source = SourceRef("s.jsonl", 3, "samples[2]")
        sample.inlined_urls = ({"url": "https://x"},)
        sample.gold = ({"label": 1},)
        given = {
            "status": "error", "error": "boom", "output": "o", "trace": Trace(turns=2),
            "assertions": (AssertionResult(type="contains", status=Status.PASSED),), "judge": JudgeBlock.read({"score": 4.0}),
            "judge_skipped": "why", "scores": Scores(5.0, 1.0, None, 3.0), "passed": passed, "duration_ms": 1.5,
            "attempts": 3, "cached": cached,
        }
        started = SampleResult.start(sample, "composed", 2, **given)
        by_name = SampleResult(
            sample_id="s7", prompt="composed", repeat=2, turns=(), source_file="s.jsonl", source_line=3, capability=("a", "b"),
            difficulty="hard", tripwire=tripwire, category="c", urls=({"url": "https://x"},), gold=({"label": 1},), **given,
        )
        assert msgspec.structs.asdict(started) == msgspec.structs.asdict(by_name)


def test_report_lines_come_in_pieces_of_lines_that_follow_each_other(tmp_path, monkeypatch):
    """report.json copies the lines this run wrote in pieces: lines that follow each other in the
    file (and in the order asked) are one piece, up to the read buffer; any other order starts a
    new piece. Joined, the pieces are the lines in the order asked, each once."""
    from omk.engine import results as module
    from omk.engine.results import ResultLog
    from omk.samples.model import Sample

    samples = [Sample(sample_id=f"s{i}", prompt="p" * 40) for i in range(6)]
    log = ResultLog(samples, tmp_path / "results.jsonl")
    log.open(fresh=True)
    for s in samples:
        log.add(SampleResult.start(s, s.prompt, output="out"))
    log.close()
    written = (tmp_path / "results.jsonl").read_bytes().splitlines(keepends=True)
    keys = [("s4", 0), ("s0", 0), ("s1", 0), ("s2", 0), ("s5", 0), ("s3", 0)]
    pieces = list(log.lines(keys))
    assert [count for _, count in pieces] == [1, 3, 1, 1]
    assert [p.count(b"\n") for p, _ in pieces] == [1, 3, 1, 1]
    assert b"".join(p for p, _ in pieces) == b"".join(written[int(k[1:])] for k, _ in keys)
    monkeypatch.setattr(module, "READ_BUFFER", len(written[0]))  # a piece is cut once it passes this
    pieces = list(log.lines([("s0", 0), ("s1", 0), ("s2", 0), ("s3", 0)]))
    assert [count for _, count in pieces] == [2, 2]
    assert b"".join(p for p, _ in pieces) == b"".join(written[:4])
