"""Reports built from the real model objects (Sample → SampleResult → build_report), for report tests."""

from __future__ import annotations

from typing import Any

import msgspec

from omk.records import AssertionResult, JudgeBlock, MockStats, SampleResult, Scores, ToolCall, Trace
from omk.records.document import Summary
from omk.report.json_report import FORMAT
from omk.samples.model import Layer, Sample, SourceRef, Status
from omk.scoring.layers import passes, score_sample
from omk.scoring.summary import summarize
from omk.version import __version__

XSS = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
THRESHOLD = 3.5


def build_report(
    *,
    run_id: str,
    started_at: str,
    finished_at: str,
    samples_files: list[str],
    target: dict[str, Any],
    judge: dict[str, Any] | None,
    summary: Summary,
    results: list[SampleResult],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "run_id": run_id,
        "omk_version": __version__,
        "started_at": started_at,
        "finished_at": finished_at,
        "samples_files": samples_files,
        "target": target,
        "judge": judge,
        "summary": summary.to_json(),
        "results": [r.to_json() for r in results],
    }


def leaf(type_: str, passed: bool, *, layer: Layer = Layer.FACT, message: str | None = None, **kw: Any) -> AssertionResult:
    return AssertionResult(
        type=type_,
        layer=layer,
        status=Status.PASSED if passed else Status.FAILED,
        weight=kw.pop("weight", 1.0),
        negate=kw.pop("negate", False),
        message=message,
        **kw,
    )


SAMPLES: dict[str, Sample] = {}  # the samples behind the results made here, by id


def sample_of(result: SampleResult) -> Sample:
    """The sample a result of `sample_results()` was made from."""
    return SAMPLES[result.sample_id]


def _result(sample: Sample, output: str | None, assertions: list[AssertionResult], *, judge=None, trace=None, error=None) -> SampleResult:
    judge_score = judge["score"] if judge else None
    scores = score_sample(assertions, judge_score) if error is None else Scores()
    SAMPLES[sample.sample_id] = sample
    prompt = sample.prompt + (f"\n\n```\n{sample.context}\n```" if sample.context else "")
    return msgspec.structs.replace(
        SampleResult.start(sample, prompt),
        status="error" if error else "ok",
        error=error,
        output=output,
        trace=trace or Trace(),
        assertions=tuple(assertions),
        judge=JudgeBlock.read(judge),
        scores=scores,
        passed=error is None and passes(scores, THRESHOLD),
        duration_ms=123.4,
    )


def sample_results() -> list[SampleResult]:
    src = "samples/eval-samples.yaml"
    zh = Sample(
        sample_id="cr-sql-注入-zh",
        prompt="审查这段代码的安全性",
        context="db.query('SELECT * FROM users WHERE name=' + u)",
        capability=["security-review"],
        difficulty="easy",
        source=SourceRef(src, 9, "samples[0]"),
    )
    passed_zh = _result(
        zh,
        "存在 SQL 注入风险，应使用参数化查询。",
        [leaf("contains", True, value="SQL 注入"), leaf("contains", True, value="参数化")],
        judge={
            "score": 4.5,
            "rubric": {"score": 5, "reason": "识别了注入并给出修复"},
            "dimensions": {"security": {"score": 4, "reason": "抓住了要点"}},
        },
        trace=Trace(turns=1, cost_usd=0.0012, latency_ms=850.0, tokens={"input": 120, "output": 40}),
    )
    tool = Sample(
        sample_id="cr-read-before-review",
        prompt="Review src/auth.py. " + XSS,
        capability=["tool-use"],
        difficulty="medium",
        mocks=[{"tool": "Read", "return": "import hashlib"}],
        tripwire=True,
        source=SourceRef(src, 33, "samples[1]"),
    )
    failed_tool = _result(
        tool,
        "Looks fine to me " + XSS + "\x00\x1b[31m",
        [
            leaf("tools_called", True, layer=Layer.BEHAVIOR, value=["Read"]),
            leaf("contains", False, value="MD5", message='output does not contain "MD5"'),
            AssertionResult(
                type="assert-set",
                layer=Layer.FACT,
                status=Status.FAILED,
                weight=1.0,
                negate=False,
                children=[
                    leaf("contains", False, value="bcrypt", message='output does not contain "bcrypt"'),
                    leaf("regex", False, value="argon2|scrypt", message="no match for /argon2|scrypt/"),
                ],
            ),
            leaf("regex", False, negate=True, value="fine", message="matched 'fine'"),
            AssertionResult(
                type="answer_relevancy",
                layer=Layer.FACT,
                status=Status.SKIPPED,
                weight=1.0,
                negate=False,
                message="skipped: no judge configured",
            ),
        ],
        judge={"score": 2.0, "rubric": {"score": 2, "reason": "missed the MD5 weakness " + XSS}, "dimensions": None},
        trace=Trace(
            turns=2,
            tool_calls=(ToolCall("Read", {"file_path": "src/auth.py"}, "import hashlib " + XSS, True, "Read:1"),),
            cost_usd=0.02,
            latency_ms=9000.0,
            tokens={"input": 500, "output": 80},
            mock_stats=MockStats(hits=1, misses=0, per_mock={"Read:1": 1}),
        ),
    )
    failed_tool = msgspec.structs.replace(failed_tool, urls=({"url": "https://example.com/doc", "status": 200, "content": "doc text " + XSS},))
    errored = _result(
        Sample(sample_id="cs-refund-en", prompt="Refund order 42", source=SourceRef(src, 120, "samples[2]")),
        None,
        [],
        error="target failed after 3 attempts: HTTP 503 <html>",
    )
    return [passed_zh, failed_tool, errored]


def make_report(results: list[SampleResult] | None = None, repeats: int = 0) -> dict[str, Any]:
    results = results if results is not None else sample_results()
    report = build_report(
        run_id="20250101-000000-abcdef",
        started_at="2025-01-01T00:00:00+00:00",
        finished_at="2025-01-01T00:00:09+00:00",
        samples_files=["samples/eval-samples.yaml"],
        target={"kind": "replay", "spec": "replay:samples/responses.jsonl"},
        judge=None,
        summary=summarize(results, THRESHOLD, 9000.0),
        results=results,
    )
    if repeats:
        base = report["results"]
        report["results"] = [dict(r, repeat=k) for r in base for k in range(repeats)]
        report["summary"]["repeat"] = repeats
    return report
