"""Per-capability figures: `summary.capabilities` (counts, the mean composite and the pass rate
with their 95% intervals) from the digests, and in report.json, the terminal, Markdown, JUnit and
the HTML page in a headless Chromium, from a real run under `--repeat`."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_support import run_omk
from report_factory import THRESHOLD, _result, build_report, leaf

from omk.records.document import ReportDocument, Summary, read_document
from omk.report.html_report import render_html
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown
from omk.samples.model import Sample
from omk.scoring.capabilities import capability_breakdown
from omk.scoring.digest import Digest
from omk.scoring.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
INTERVAL = r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"


def _sample(sid: str, *capability: str) -> Sample:
    return Sample(sample_id=sid, prompt="p", capability=capability)


def results():
    return [
        _result(_sample("a", "Tool-Use", "writing"), "ok", [leaf("contains", True)]),
        _result(_sample("b", "tool use", "tool_use"), "no", [leaf("contains", False)]),  # named twice: counted once
        _result(_sample("c", "tool-use"), "half", [leaf("contains", True), leaf("equals", False)]),
        _result(_sample("d", "tool-use"), None, [], error="target failed"),
        _result(_sample("e"), "ok", [leaf("contains", True)]),  # no capability: in none
    ]


def test_breakdown_groups_as_the_doctor_does_and_counts_a_sample_in_each_of_its_capabilities():
    rows = capability_breakdown(results())
    assert [r.capability for r in rows] == ["Tool-Use", "writing"]  # first spelling, first seen
    tool, writing = rows
    assert (tool.samples, tool.total, tool.passed, tool.failed, tool.errored) == (4, 4, 1, 3, 1)
    assert tool.pass_rate == 0.25
    assert tool.composite == 3.0  # 5, 1, 3: the errored one is not graded
    assert tool.composite_ci is not None
    assert tool.composite_ci.low <= 3.0 <= tool.composite_ci.high
    assert tool.pass_rate_ci is not None
    assert tool.pass_rate_ci.method == "wilson"
    # one sample: the figures, and no interval
    assert (writing.samples, writing.passed, writing.composite) == (1, 1, 5.0)
    assert writing.composite_ci is None
    assert writing.pass_rate_ci is None


def test_the_pass_rate_interval_is_wilsons_as_statsmodels_computes_it():
    from statsmodels.stats.proportion import proportion_confint

    tool = capability_breakdown(results())[0]
    low, high = proportion_confint(1, 4, alpha=0.05, method="wilson")
    assert tool.pass_rate_ci is not None
    assert (tool.pass_rate_ci.low, tool.pass_rate_ci.high) == (round(low, 4), round(high, 4))


def test_digests_alone_give_the_same_figures():
    """The run keeps digests, not results: the breakdown reads nothing else."""
    rs = results()
    assert capability_breakdown([Digest.of(r) for r in rs]) == capability_breakdown(rs)


def _report(rs):
    return build_report(
        run_id="r1",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        samples_files=["s.yaml"],
        target={"kind": "replay", "spec": "replay:x"},
        judge=None,
        summary=summarize(rs, THRESHOLD, 1000.0),
        results=rs,
    )


def test_no_capability_writes_no_field_and_no_section():
    rs = [_result(_sample("a"), "ok", [leaf("contains", True)])]
    data = _report(rs)
    assert "capabilities" not in data["summary"]
    assert "By capability" not in render_markdown(data)
    assert 'class="capabilities"' not in render_html(data)
    assert "capability:" not in render_junit(data)


def test_the_field_reads_back_and_an_old_report_without_it_still_reads():
    data = _report(results())
    summary = Summary.read(data["summary"], "report.json")
    assert summary.capabilities == capability_breakdown(results())
    assert summary.to_json()["capabilities"] == data["summary"]["capabilities"]
    del data["summary"]["capabilities"]
    assert ReportDocument.of(data).summary.capabilities == ()
    assert "By capability" not in render_markdown(data)


def test_a_capability_is_untrusted_text_in_every_format():
    rs = [_result(_sample("x", "<script>window.__pwned=1</script>|[b]"), "ok", [leaf("contains", True)])]
    data = _report(rs)
    assert "<script>window.__pwned" not in render_html(data)
    assert "<script>" not in render_markdown(data)
    assert "\\|[b]" in render_markdown(data)


def test_chinese_labels():
    md = render_markdown(_report(results()), "zh")
    assert "### 按能力" in md
    assert "| 能力 |" in md
    assert "（仅 1 条用例，无区间）" in md


# A real run: six samples over two capabilities (one sample in both), each run twice.
def _omk(*args: str) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=ROOT, columns=200)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp = tmp_path_factory.mktemp("capabilities")
    lines, outputs = [], []
    for i in range(6):
        caps = ["search", "writing"] if i == 0 else ["search"] if i % 2 else ["writing"]
        lines.append(f"- sample_id: s{i}\n  prompt: hi {i}\n  capability: {json.dumps(caps)}\n"
                     f"  assertions: [{{type: contains, value: hi}}, {{type: contains, value: there}}]")  # fmt: skip
        outputs.append(json.dumps({"sample_id": f"s{i}", "output": ["hi there", "hi", "hello"][i % 3]}))
    (tmp / "out.jsonl").write_text("\n".join(outputs) + "\n", encoding="utf-8")
    (tmp / "samples.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp / "run"
    proc = _omk("eval", str(tmp / "samples.yaml"), "--target", f"replay:{tmp / 'out.jsonl'}", "--repeat", "2", "--out", str(out))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    rendered = _omk("report", str(out), "--format", "md,html,junit")
    assert rendered.returncode == 0, rendered.stderr
    return proc, out


def test_report_json_has_each_capability_with_its_intervals(run):
    _, out = run
    rows = json.loads((out / "report.json").read_text(encoding="utf-8"))["summary"]["capabilities"]
    assert [(c["capability"], c["samples"], c["total"]) for c in rows] == [("search", 4, 8), ("writing", 3, 6)]
    for c in rows:
        assert c["composite_ci"]["low"] <= c["composite"] <= c["composite_ci"]["high"]
        assert c["composite_ci"]["level"] == 0.95
        assert c["pass_rate_ci"]["low"] <= c["pass_rate"] <= c["pass_rate_ci"]["high"]
        assert c["pass_rate_ci"]["method"] == "wilson"
    assert read_document(out).summary.capabilities[0].samples == 4


def test_terminal_markdown_and_junit_show_them(run):
    proc, out = run
    assert "By capability" in proc.stdout
    assert re.search(rf"│ search +│ +\d/8 │ +{INTERVAL} │ +\d+% \[\d+%, \d+%\] │", proc.stdout), proc.stdout  # the terminal leaves out the samples count and errored when none did
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| capability | samples | passed | errored | composite | pass rate |" in md
    assert re.search(rf"\| writing \| 3 \| \d/6 \| 0 \| {INTERVAL} \| \d+% \[\d+%, \d+%\] \|", md), md
    props = {p.get("name"): p.get("value") for p in ET.parse(out / "junit.xml").iter("property")}
    assert props["capability:search"].endswith("/8")
    low, high = (float(x) for x in props["capability_ci:search"].split(","))
    assert low <= high


def test_the_html_page_shows_them_in_a_browser(run, browser):
    from cdp_pipe import Page

    _, out = run
    page = Page(browser)
    page.goto((out / "report.html").as_uri())
    heads = page.js("Array.from(document.querySelectorAll('table.capabilities thead th')).map(c => c.innerText)")
    assert heads == ["capability", "samples", "passed", "errored", "composite", "pass rate"]
    rows = page.js("Array.from(document.querySelectorAll('table.capabilities tbody tr')).map(r => Array.from(r.cells).map(c => c.innerText))")
    assert [r[0] for r in rows] == ["search", "writing"]
    assert all(re.fullmatch(INTERVAL, r[4]) and re.fullmatch(r"\d+% \[\d+%, \d+%\]", r[5]) for r in rows), rows
    assert [r[2] for r in rows] == [f"{c.passed}/{c.total}" for c in read_document(out).summary.capabilities]
    assert page.js("document.querySelector('table.capabilities').getBoundingClientRect().height") > 0
    assert page.errors() == []
