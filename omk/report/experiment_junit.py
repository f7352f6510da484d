"""`junit.xml` of an experiment: one `<testsuite>` per variant, one `<testcase>` per sample (and
repeat) and variant, and, when the run had `--require`, one more suite holding the verdict.

- `classname` is the variant's name and `name` the sample id (`#<repeat>` appended when samples
  were repeated), so CI reporters show each sample once per variant;
- a result that ran and failed has a `<failure type="omk.failed">` with its reasons (the layers
  below threshold, failed assertions, the judge's reasons), an errored one an `<error>`;
- `--ablate SKILL_DIR` adds the suite `omk <run_id> · ablation`: one test case per part of the skill,
  largest contribution first (omk/report/ablation.py `junit_cases`), each passing, its classname
  `ablation.<skill>.candidate-to-cut` or `ablation.<skill>.kept` and its `<system-out>` the part's
  row (contribution and interval, tokens, verdict);
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

from omk.records.document import ReportDocument
from omk.records.experiment_block import Ablation, Case, ExperimentBlock, Require, VariantRow
from omk.report import ablation, gold, intervals, pairwise, triggering
from omk.report import experiment_tables as ex
from omk.report.junit_text import clean, seconds
from omk.report.reasons import is_repeated, result_name


def build(report: ReportDocument, exp: ExperimentBlock) -> ET.Element:
    per_variant = ex.cases(exp)
    root = ET.Element("testsuites", {"name": "omk"})
    threshold = report.summary.threshold
    for i, v in enumerate(exp.variants):
        _variant_suite(root, report, exp, v, per_variant.get(v.name) or [], i, threshold)
    if exp.ablation is not None:
        _ablation_suite(root, report, exp, exp.ablation, len(root.findall("testsuite")))
    if exp.require is not None:
        _verdict_suite(root, report, exp, exp.require, len(root.findall("testsuite")))
    _count(root, root.findall("testsuite"))
    return root


def _suite(root: ET.Element, report: ReportDocument, title: str, i: int) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        {
            "name": clean(f"omk {report.run_id or ''} · {title}"),
            "timestamp": clean(report.started_at or ""),
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


def _experiment_properties(report: ReportDocument, exp: ExperimentBlock) -> list[tuple[str, Any]]:
    verdict = exp.verdict
    items: list[tuple[str, Any]] = [
        ("omk_version", report.omk_version),
        ("run_id", report.run_id),
        ("experiment:control", exp.control),
        ("experiment:verdict", verdict.level),
        ("experiment:headline", verdict.headline),
        ("experiment:recommendation", verdict.recommendation),
    ]
    if report.shard is not None:
        items.append(("shard", report.shard.label()))
    if cached := sum(1 for run in ex.cases(exp).values() for c in run if c.cached):
        items.append(("cached", cached))
    items += [(f"experiment:pair:{p.treatment}", p.level) for p in verdict.pairs]
    items += [(f"experiment:resources:{c.treatment}", ex.resources_text(c)) for c in exp.comparisons]
    return items


def _variant_suite(root: ET.Element, report: ReportDocument, exp: ExperimentBlock, v: VariantRow, results: list[Case], i: int, threshold: Any) -> None:
    suite = _suite(root, report, v.name, i)
    run = exp.runs.get(v.name)
    _properties(
        suite,
        [
            ("variant", v.name),
            ("role", v.role),
            ("target", (run.target.name if run is not None else None) or ""),
            ("threshold", threshold),
            ("composite", v.scores.composite),
            ("passed", f"{v.passed}/{v.samples}"),
            *_variant_intervals(v),
            *_experiment_properties(report, exp),
            *(pairwise.junit_properties(report) if v.role == "control" else []),  # the pairwise judge's, once
            *(triggering.junit_properties(report) if v.role == "control" else []),  # the control's triggering and the changes
            *(gold.junit_properties(report) if v.role == "control" else []),  # the judge against people
        ],
    )
    repeated = is_repeated(results)
    for r in results:
        _case(suite, r, result_name(r, repeated), v.name, threshold)
    _count(suite, [])


def _variant_intervals(v: VariantRow) -> list[tuple[str, Any]]:
    """The variant's `composite_ci` and `pass_rate_ci` (`low,high`, `n<2`); none in a report from before intervals."""
    if v.scores_ci is None:
        return []
    composite = [("composite_ci", intervals.pair(v.scores_ci.composite))] if v.scores.composite is not None else []
    return [*composite, ("pass_rate_ci", intervals.pair(v.pass_rate_ci))]


def _case(suite: ET.Element, r: Case, name: str, variant: str, threshold: Any) -> None:
    case = ET.SubElement(suite, "testcase", {"name": clean(name), "classname": clean(variant), "time": seconds(r.duration_ms)})
    if r.cached:  # the answer came from the response cache
        ET.SubElement(ET.SubElement(case, "properties"), "property", {"name": "cached", "value": "true"})
    messages = list(r.messages)
    if r.status == "error":
        first = messages[0] if messages else "error"
        text = first[len("error: ") :] if first.startswith("error: ") else first
        err = ET.SubElement(case, "error", {"message": clean(text), "type": "error"})
        err.text = clean("\n".join(messages) or text)
    elif not r.passed:
        composite = r.composite
        head = f"composite {ex.num(composite)}" + (f" (threshold {threshold:g})" if isinstance(threshold, int | float) else "")
        fail = ET.SubElement(case, "failure", {"message": clean(messages[0] if messages else head), "type": "omk.failed"})
        fail.text = clean("\n".join([head, *messages]))


def _verdict_suite(root: ET.Element, report: ReportDocument, exp: ExperimentBlock, require: Require, i: int) -> None:
    suite = _suite(root, report, "verdict", i)
    _properties(suite, _experiment_properties(report, exp))
    policy = str(require.policy)
    case = ET.SubElement(suite, "testcase", {"name": clean(f"require {policy}"), "classname": "experiment", "time": "0.000"})
    lines = list(exp.verdict.lines)
    if not require.passed:
        fail = ET.SubElement(case, "failure", {"message": clean(require.reason), "type": "omk.verdict"})
        fail.text = clean("\n".join([str(require.reason), *lines]))
    ET.SubElement(case, "system-out").text = clean("\n".join(lines))
    _count(suite, [])


def _ablation_suite(root: ET.Element, report: ReportDocument, exp: ExperimentBlock, ranking: Ablation, i: int) -> None:
    suite = _suite(root, report, "ablation", i)
    _properties(suite, [*_experiment_properties(report, exp), *ablation.junit_properties(ranking)])
    for classname, name, text in ablation.junit_cases(ranking):
        case = ET.SubElement(suite, "testcase", {"name": clean(name), "classname": clean(classname), "time": "0.000"})
        ET.SubElement(case, "system-out").text = clean(text)
    _count(suite, [])
