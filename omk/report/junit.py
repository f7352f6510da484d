"""`junit.xml`: the JUnit XML shape CI systems read (Jenkins, GitLab, GitHub test reporters).

One `<testcase>` per result (sample × repeat). A result that ran and did not pass carries a
`<failure>` listing the failed assertions and the judge's reasons; a result whose target or
judge failed carries an `<error>`. The output goes to `<system-out>` (a conversation's turns,
each with its prompt and output).

An experiment (a report with an `experiment` block) has a suite per variant instead, one case per
sample and variant (omk/report/experiment_junit.py).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from omk.report import _legacy_categories as categories
from omk.report import _legacy_experiment as experiment
from omk.report import _legacy_pairwise as pairwise
from omk.report._legacy_reasons import failure_lines, is_repeated, result_name
from omk.report.document import ReportDocument

# XML 1.0 forbids most control characters even when escaped; model output may contain them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: Any) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", "" if text is None else str(text))


def seconds(ms: Any) -> str:
    return f"{(ms or 0) / 1000:.3f}"


def _classname(result: dict[str, Any], fallback: str) -> str:
    source = result.get("source") or {}
    if source.get("file"):
        return Path(source["file"]).stem
    return fallback


def build_junit(report: dict[str, Any]) -> ET.Element:
    if (exp := experiment.block(report)) is not None:  # a suite per variant (and the verdict)
        from omk.report import experiment_junit

        return experiment_junit.build(report, exp)
    summary = report.get("summary") or {}
    results = report.get("results") or []
    suite_name = f"omk {report.get('run_id', '')}".strip()
    failures = sum(1 for r in results if r.get("status") != "error" and not r.get("passed"))
    errors = sum(1 for r in results if r.get("status") == "error")
    total_time = seconds(summary.get("duration_ms"))
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": str(errors), "skipped": "0"}

    root = ET.Element("testsuites", {"name": "omk", **counts, "time": total_time})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": clean(suite_name),
            **counts,
            "time": total_time,
            "timestamp": clean(report.get("started_at") or ""),
            "hostname": "localhost",
            "id": "0",
            "package": "omk",
        },
    )
    props = ET.SubElement(suite, "properties")
    for name, value in _properties(report):
        ET.SubElement(props, "property", {"name": clean(name), "value": clean("" if value is None else value)})
    repeated = is_repeated(results)
    fallback = Path(report["samples_files"][0]).stem if report.get("samples_files") else "omk"
    for r in results:
        _add_case(suite, r, result_name(r, repeated), _classname(r, fallback), summary.get("threshold"))
    return root


def _properties(report: dict[str, Any]) -> list[tuple[str, Any]]:
    summary = report.get("summary") or {}
    target = report.get("target") or {}
    judge = report.get("judge") or {}
    return [
        ("omk_version", report.get("omk_version")),
        ("run_id", report.get("run_id")),
        ("target", target.get("spec") or target.get("kind") or ""),
        ("judge", ",".join(map(str, judge.get("models") or [])) if judge else "none"),
        ("threshold", summary.get("threshold")),
        ("composite", (summary.get("scores") or {}).get("composite")),
        *categories.junit_properties(report),
        *pairwise.junit_properties(report),
    ]


def _add_case(suite: ET.Element, r: dict[str, Any], name: str, classname: str, threshold: float | None) -> None:
    """One result as a testcase: an error, a failure with its reasons, or a pass; the output."""
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "name": clean(name),
            "classname": clean(classname + (f".{r['category']}" if r.get("category") else "")),
            "time": seconds(r.get("duration_ms")),
        },
    )
    if r.get("status") == "error":
        err = ET.SubElement(case, "error", {"message": clean(r.get("error") or "error"), "type": "error"})
        err.text = clean(r.get("error") or "")
    elif not r.get("passed"):
        lines = failure_lines(r, threshold)
        composite = (r.get("scores") or {}).get("composite")
        head = f"composite {composite}" + (f" (threshold {threshold:g})" if threshold is not None else "")
        fail = ET.SubElement(case, "failure", {"message": clean(lines[0] if lines else head), "type": "omk.failed"})
        fail.text = clean("\n".join([head, *lines]))
    if r.get("turns"):
        ET.SubElement(case, "system-out").text = clean(_transcript(r["turns"]))
    elif r.get("output"):
        ET.SubElement(case, "system-out").text = clean(r["output"])


def _transcript(turns: list[dict[str, Any]]) -> str:
    """A conversation as CI shows it: each turn's prompt and output (or why there is none)."""
    parts = []
    for turn in turns:
        n, status = (turn.get("index") or 0) + 1, turn.get("status")
        mark = {True: "passed", False: "failed"}.get(turn.get("passed"), "not graded")
        head = f"--- turn {n} ({status if status != 'ok' else mark})"
        lines = [head, f"> {turn.get('prompt') or ''}"]
        if turn.get("output") is not None:
            lines.append(turn["output"])
        if status == "error":
            lines.append(f"error: {turn.get('error')}")
        elif status == "skipped":
            lines.append("(not sent: an earlier turn failed)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def render_junit(report: dict[str, Any]) -> str:
    root = build_junit(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
    """`junit.xml` in `out_dir`; its messages are in English whatever `lang`."""
    from omk.fileio import write_atomic

    path = out_dir / "junit.xml"
    write_atomic(path, render_junit(dict(report.data)))
    return path
