"""`junit.xml`: the JUnit XML shape CI systems read (Jenkins, GitLab, GitHub test reporters).

One `<testcase>` per result (sample × repeat). A result that ran and did not pass carries a
`<failure>` listing the failed assertions and the judge's reasons; a result whose target or
judge failed carries an `<error>`. The output goes to `<system-out>` (a conversation's turns,
each with its prompt and output).

An experiment (a report with an `experiment` block) has a suite per variant instead, one case per
sample and variant (omk/report/experiment_junit.py).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omk.records.document import ReportDocument
from omk.records.result import SampleResult, TurnResult
from omk.report import budget, capabilities, categories, gold, intervals, pairwise, reliability, triggering
from omk.report.junit_text import clean, seconds
from omk.report.reasons import failure_lines, result_name


def _classname(result: SampleResult, fallback: str) -> str:
    return Path(result.source_file).stem if result.source_file else fallback


def build_junit(report: ReportDocument | Mapping[str, Any]) -> ET.Element:
    report = ReportDocument.of(report)
    if report.experiment is not None:  # a suite per variant (and the verdict)
        from omk.report import experiment_junit

        return experiment_junit.build(report, report.experiment)
    results = report.results
    total_time = seconds(report.summary.duration_ms)
    root = ET.Element("testsuites", {"name": "omk"})
    suite = ET.SubElement(root, "testsuite", {"name": clean(f"omk {report.run_id or ''}".strip())})
    props = ET.SubElement(suite, "properties")
    for name, value in _properties(report):
        ET.SubElement(props, "property", {"name": clean(name), "value": clean("" if value is None else value)})
    repeated = report.repeated
    fallback = Path(report.samples_files[0]).stem if report.samples_files else "omk"
    failures = errors = 0
    for r in results:  # one pass: the counts are known when the cases are written
        errors += r.status == "error"
        failures += r.status != "error" and not r.passed
        _add_case(suite, r, result_name(r, repeated), _classname(r, fallback), report.summary.threshold)
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": str(errors), "skipped": "0"}
    root.attrib.update({**counts, "time": total_time})
    suite.attrib.update(
        {
            **counts,
            "time": total_time,
            "timestamp": clean(report.started_at or ""),
            "hostname": "localhost",
            "id": "0",
            "package": "omk",
        }
    )
    return root


def _properties(report: ReportDocument) -> list[tuple[str, Any]]:
    return [
        ("omk_version", report.omk_version),
        ("run_id", report.run_id),
        ("target", report.target.name or ""),
        ("judge", ",".join(report.judge_models) if report.judge_models is not None else "none"),
        ("threshold", report.summary.threshold),
        ("composite", report.summary.scores.composite),
        *([("shard", report.shard.label())] if report.shard is not None else []),
        *([("cached", report.summary.cached)] if report.summary.cached else []),
        *intervals.junit_properties(report.summary),
        *categories.junit_properties(report),
        *capabilities.junit_properties(report),
        *triggering.junit_properties(report),
        *budget.junit_properties(report),
        *gold.junit_properties(report),
        *pairwise.junit_properties(report),
        *reliability.junit_properties(report),
    ]


def _add_case(suite: ET.Element, r: SampleResult, name: str, classname: str, threshold: float | None) -> None:
    """One result as a testcase: an error, a failure with its reasons, or a pass; the output."""
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "name": clean(name),
            "classname": clean(classname + (f".{r.category}" if r.category else "")),
            "time": seconds(r.duration_ms),
        },
    )
    if r.cached:  # the answer came from the response cache: no call was made for it
        ET.SubElement(ET.SubElement(case, "properties"), "property", {"name": "cached", "value": "true"})
    if r.status == "error":
        err = ET.SubElement(case, "error", {"message": clean(r.error or "error"), "type": "error"})
        err.text = clean(r.error or "")
    elif not r.passed:
        lines = failure_lines(r, threshold)
        head = f"composite {r.scores.composite}" + (f" (threshold {threshold:g})" if threshold is not None else "")
        fail = ET.SubElement(case, "failure", {"message": clean(lines[0] if lines else head), "type": "omk.failed"})
        fail.text = clean("\n".join([head, *lines]))
    if r.turns:
        ET.SubElement(case, "system-out").text = clean(_transcript(r.turns))
    elif r.output:
        ET.SubElement(case, "system-out").text = clean(r.output)


def _transcript(turns: Sequence[TurnResult]) -> str:
    """A conversation as CI shows it: each turn's prompt and output (or why there is none)."""
    parts = []
    for turn in turns:
        n, status = turn.index + 1, turn.status
        mark = "not graded" if turn.passed is None else "passed" if turn.passed else "failed"
        head = f"--- turn {n} ({status if status != 'ok' else mark})"
        lines = [head, f"> {turn.prompt or ''}"]
        if turn.output is not None:
            lines.append(turn.output)
        if status == "error":
            lines.append(f"error: {turn.error}")
        elif status == "skipped":
            lines.append("(not sent: an earlier turn failed)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def render_junit(report: ReportDocument | Mapping[str, Any]) -> str:
    root = build_junit(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
    """`junit.xml` in `out_dir`; its messages are in English whatever `lang`."""
    from omk.io.fileio import write_atomic

    path = out_dir / "junit.xml"
    write_atomic(path, render_junit(report))
    return path
