"""Category breakdowns: the summary's `categories` and its rendering in every report format."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from report_factory import THRESHOLD, XSS, _result, build_report, leaf
from rich.console import Console

from omk.report.html_report import render_html
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown
from omk.report.terminal import print_summary
from omk.samples.model import Sample
from omk.scoring.categories import category_breakdown
from omk.scoring.summary import summarize


def _sample(sid: str, category: str | None) -> Sample:
    return Sample(sample_id=sid, prompt="p", category=category, source_format="m365")


def results():
    return [
        _result(_sample("KB-1", "knowledge-base"), "ok", [leaf("exact_match", True)]),
        _result(_sample("TOOL-1", "tool-usage"), "no", [leaf("exact_match", False)]),
        _result(_sample("KB-2", "knowledge-base"), "half", [leaf("exact_match", True), leaf("partial_match", False)]),
        _result(_sample("X-1", None), "ok", [leaf("citations", True)]),
        _result(_sample("KB-3", "knowledge-base"), None, [], error="target failed"),
        _result(_sample("XSS-1", XSS), "ok", [leaf("citations", True)]),
    ]


def report(rs=None):
    rs = rs if rs is not None else results()
    return build_report(
        run_id="r1",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        samples_files=["evals.json"],
        target={"kind": "replay", "spec": "replay:x"},
        judge=None,
        summary=summarize(rs, THRESHOLD, 1000.0),
        results=rs,
    )


def test_breakdown_counts_in_order_of_appearance_uncategorised_last():
    rows = category_breakdown(results())
    assert [r.category for r in rows] == ["knowledge-base", "tool-usage", XSS, None]
    kb = rows[0]
    assert (kb.total, kb.passed, kb.failed, kb.errored) == (3, 1, 2, 1)
    assert kb.pass_rate == 0.3333
    assert kb.composite == 4.0  # mean of 5.00 and 3.00: the errored result is not graded
    assert rows[1].composite == 1.0
    assert rows[1].passed == 0


def test_no_category_anywhere_gives_an_empty_list():
    rs = [_result(_sample("a", None), "ok", [leaf("contains", True)])]
    assert summarize(rs, THRESHOLD, 1.0).categories == ()
    assert "By category" not in render_markdown(report(rs))
    assert "By category" not in render_html(report(rs))


def test_every_result_names_its_category():
    data = report()
    assert [r["category"] for r in data["results"]][:2] == ["knowledge-base", "tool-usage"]
    assert data["summary"]["categories"][0]["category"] == "knowledge-base"


def test_terminal_markdown_html_and_junit_show_the_breakdown():
    data = report()
    out = io.StringIO()
    print_summary(data, Console(file=out, width=160, color_system=None), "en")
    text = out.getvalue()
    assert "By category" in text
    assert "knowledge-base" in text
    assert "│ (none) " in text
    assert "no category" not in text  # one spelling: JUnit's `category:(none)`

    md = render_markdown(data)
    assert "### By category" in md
    assert "| (none) | 1 | 1 |" in md
    assert "| knowledge-base | 3 | 1 | 2 | 1 | 4.00 [" in md  # with its interval and pass rate
    assert "<script>" not in md  # a category is untrusted text too

    page = render_html(data)
    assert "<td>(none)</td>" in page
    assert '<table class="categories">' in page
    assert "<td>tool-usage</td><td>1</td><td>0</td><td>1</td>" in page
    assert "<script>window.__pwned" not in page

    root = ET.fromstring(render_junit(data))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["category:knowledge-base"] == "1/3"
    assert props["category:(none)"] == "1/1"
    classes = [c.get("classname") for c in root.iter("testcase")]
    assert classes[:4] == ["evals.knowledge-base", "evals.tool-usage", "evals.knowledge-base", "evals"]


def test_chinese_labels():
    md = render_markdown(report(), "zh")
    assert "### 按类别" in md
    assert "| （无） |" in md


def test_old_reports_without_categories_still_render():
    data = report()
    del data["summary"]["categories"]
    assert "By category" not in render_markdown(data)
    assert "By category" not in render_html(data)
    ET.fromstring(render_junit(data))


def test_omk_samples_carry_a_category_too(tmp_path):
    import pytest

    from omk.core.errors import InputError
    from omk.loader import load_samples

    path = tmp_path / "eval-samples.yaml"
    path.write_text("- sample_id: a\n  prompt: p\n  category: 知识库\n- sample_id: b\n  prompt: q\n", encoding="utf-8")
    assert [s.category for s in load_samples([path]).samples] == ["知识库", None]
    path.write_text("- sample_id: a\n  prompt: p\n  category: ''\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_samples([path])
    assert info.value.lines() == [f"{path}:3: samples[0] (a) category: must not be empty"]
