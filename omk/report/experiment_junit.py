"""`junit.xml` of an experiment: one `<testsuite>` per variant, one `<testcase>` per sample (and
repeat) and variant, and, when the run had `--require`, one more suite holding the verdict.

- `classname` is the variant's name and `name` the sample id (`#<repeat>` appended when samples
  were repeated), so CI reporters show each sample once per variant;
- a result that ran and failed has a `<failure type="omk.failed">` with its reasons (the layers
  below threshold, failed assertions, the judge's reasons), an errored one an `<error>`;
- `--require progress|no-regress` adds the suite `omk <run_id> · verdict` with the test case
  `require <policy>` (classname `experiment`): a `<failure type="omk.verdict">` when the verdict
  does not meet the policy, the same outcome as the exit code. Without `--require` the verdict
  is not a test (an experiment that runs is a success, as its exit code 0 says); it is in every
  suite's properties (`experiment:verdict`, `experiment:headline`, one `experiment:pair:<treatment>`
  per comparison). The pairwise judge's verdicts, when it ran, are properties of the control's
  suite (`pairwise:…`, omk/report/pairwise.py).

Each variant's results come from the block's `runs[name].results` (their reasons included); the
outputs are not there: each variant's own `variants/<name>/junit.xml` has them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from omk.report import _legacy_experiment as ex
from omk.report import _legacy_pairwise as pairwise
from omk.report._legacy_reasons import is_repeated, result_name
from omk.report.junit import clean, seconds


def build(report: dict[str, Any], exp: dict[str, Any]) -> ET.Element:
    per_variant = ex.cases(exp)
    root = ET.Element("testsuites", {"name": "omk"})
    threshold = (report.get("summary") or {}).get("threshold")
    for i, v in enumerate(ex.variants(exp)):
        name = str(v.get("name"))
        _variant_suite(root, report, exp, v, per_variant.get(name) or [], i, threshold)
    require = exp.get("require")
    if isinstance(require, dict):
        _verdict_suite(root, report, exp, require, len(ex.variants(exp)))
    _count(root, root.findall("testsuite"))
    return root


def _suite(root: ET.Element, report: dict[str, Any], title: str, i: int) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        {
            "name": clean(f"omk {report.get('run_id', '')} · {title}"),
            "timestamp": clean(report.get("started_at") or ""),
            "hostname": "localhost",
            "id": str(i),
            "package": "omk",
        },
    )


def _count(node: ET.Element, suites: list[ET.Element]) -> None:
    """`tests`, `failures`, `errors`, `skipped`, `time` of a suite from its cases (or of the root
    from its suites)."""
    cases = [c for s in suites for c in s.findall("testcase")] if suites else node.findall("testcase")
    node.set("tests", str(len(cases)))
    node.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    node.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    node.set("skipped", "0")
    node.set("time", f"{sum(float(c.get('time') or 0) for c in cases):.3f}")


def _properties(suite: ET.Element, items: list[tuple[str, Any]]) -> None:
    props = ET.SubElement(suite, "properties")
    for name, value in items:
        ET.SubElement(props, "property", {"name": clean(name), "value": clean("" if value is None else value)})


def _experiment_properties(report: dict[str, Any], exp: dict[str, Any]) -> list[tuple[str, Any]]:
    verdict = exp["verdict"]
    items: list[tuple[str, Any]] = [
        ("omk_version", report.get("omk_version")),
        ("run_id", report.get("run_id")),
        ("experiment:control", exp.get("control")),
        ("experiment:verdict", verdict.get("level")),
        ("experiment:headline", verdict.get("headline")),
        ("experiment:recommendation", verdict.get("recommendation")),
    ]
    items += [(f"experiment:pair:{p.get('treatment')}", p.get("level")) for p in verdict.get("pairs") or [] if isinstance(p, dict)]
    return items


def _variant_suite(
    root: ET.Element, report: dict[str, Any], exp: dict[str, Any], v: dict[str, Any], results: list[dict[str, Any]], i: int, threshold: Any
) -> None:
    name = str(v.get("name"))
    suite = _suite(root, report, name, i)
    runs = exp.get("runs") if isinstance(exp.get("runs"), dict) else {}
    target = ((runs.get(name) or {}).get("target") or {}) if isinstance(runs.get(name), dict) else {}
    _properties(
        suite,
        [
            ("variant", name),
            ("role", v.get("role")),
            ("target", target.get("spec") or target.get("kind") or ""),
            ("threshold", threshold),
            ("composite", (v.get("scores") or {}).get("composite")),
            ("passed", f"{v.get('passed', 0)}/{v.get('samples', 0)}"),
            *_experiment_properties(report, exp),
            *(pairwise.junit_properties(report) if v.get("role") == "control" else []),  # the pairwise judge's, once
        ],
    )
    repeated = is_repeated(results)
    for r in results:
        _case(suite, r, result_name(r, repeated), name, threshold)
    _count(suite, [])


def _case(suite: ET.Element, r: dict[str, Any], name: str, variant: str, threshold: Any) -> None:
    case = ET.SubElement(suite, "testcase", {"name": clean(name), "classname": clean(variant), "time": seconds(r.get("duration_ms"))})
    messages = [str(m) for m in r.get("messages") or []]
    if r.get("status") == "error":
        first = messages[0] if messages else "error"
        text = first[len("error: ") :] if first.startswith("error: ") else first
        err = ET.SubElement(case, "error", {"message": clean(text), "type": "error"})
        err.text = clean("\n".join(messages) or text)
    elif not r.get("passed"):
        composite = r.get("composite")
        head = f"composite {ex.num(composite)}" + (f" (threshold {threshold:g})" if isinstance(threshold, int | float) else "")
        fail = ET.SubElement(case, "failure", {"message": clean(messages[0] if messages else head), "type": "omk.failed"})
        fail.text = clean("\n".join([head, *messages]))


def _verdict_suite(root: ET.Element, report: dict[str, Any], exp: dict[str, Any], require: dict[str, Any], i: int) -> None:
    suite = _suite(root, report, "verdict", i)
    _properties(suite, _experiment_properties(report, exp))
    policy = str(require.get("policy"))
    case = ET.SubElement(suite, "testcase", {"name": clean(f"require {policy}"), "classname": "experiment", "time": "0.000"})
    lines = [str(x) for x in exp["verdict"].get("lines") or []]
    if not require.get("passed"):
        fail = ET.SubElement(case, "failure", {"message": clean(require.get("reason")), "type": "omk.verdict"})
        fail.text = clean("\n".join([str(require.get("reason")), *lines]))
    ET.SubElement(case, "system-out").text = clean("\n".join(lines))
    _count(suite, [])
