"""An experiment's report.html in a real headless Chromium: the section renders, the per-sample
changes sort on a click (and from the keyboard), the chart has its CI band, no script errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cdp_pipe import CHROMIUM_SKIP, Page, find_chromium
from experiment_reports import synthetic_report

from omk.report.html_report import write_html

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = find_chromium()

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason=CHROMIUM_SKIP
)


def column(page: Page, table: str, index: int) -> list[str]:
    return page.js(f"Array.from(document.querySelectorAll('{table} tbody tr')).map(r => r.cells[{index}].textContent)")


def header(table: str, text: str) -> str:
    return f"Array.from(document.querySelectorAll('{table} th')).find(th => th.textContent === '{text}')"


def test_a_regression_renders_sorts_and_charts(browser, regress_run):
    _, out = regress_run
    block = json.loads((out / "report.json").read_text(encoding="utf-8"))["experiment"]
    comp = block["comparisons"][0]
    page = Page(browser)
    page.goto((out / "report.html").as_uri())

    assert page.js("document.querySelector('#experiment .verdict').dataset.level") == "REGRESS"
    assert "DO NOT SHIP" in page.js("document.querySelector('#experiment .verdict .rec').textContent")
    heads = page.js("Array.from(document.querySelectorAll('table.variants thead th[data-variant]')).map(th => th.dataset.variant)")
    assert heads == ["tone", "baseline"]  # the variants in columns, control first
    passed = page.js("Array.from(document.querySelector('table.variants tbody tr').cells).map(c => c.textContent)")
    assert passed == ["passed", "23/24 (96% [80%, 99%])", "5/24 (21% [9%, 40%])"]  # with the Wilson intervals

    table = "#deltas-1"
    original = column(page, table, 0)
    assert original == [s["sample_id"] for s in comp["per_sample"]]
    page.js(f"{header(table, 'Δ')}.click()")  # ascending: the worst first
    deltas = [float(x) for x in column(page, table, 3)]
    assert deltas == sorted(deltas)
    assert deltas[0] == -2.0
    assert deltas[-1] == 0.0
    assert page.js(f"{header(table, 'Δ')}.getAttribute('aria-sort')") == "ascending"
    regressed = {r["sample_id"] for r in comp["regressions"]}
    assert set(column(page, table, 0)[: len(regressed)]) == regressed
    page.js(f"{header(table, 'Δ')}.click()")  # descending: the unchanged first, in their original order
    deltas = [float(x) for x in column(page, table, 3)]
    assert deltas == sorted(deltas, reverse=True)
    unchanged = [s["sample_id"] for s in comp["per_sample"] if s["delta"] == 0]
    assert column(page, table, 0)[: len(unchanged)] == unchanged
    page.js(f"{header(table, 'sample')}.click()")  # text, ascending
    assert column(page, table, 0) == sorted(original, key=lambda s: s.lower())
    page.js(f"{header(table, 'sample')}.dispatchEvent(new KeyboardEvent('keydown', {{key: 'Enter'}}))")  # the keyboard too
    assert column(page, table, 0) == sorted(original, key=lambda s: s.lower(), reverse=True)

    chart = "#delta-chart-1"
    band = page.js(f"(() => {{const b = document.querySelector('{chart} rect.ci-band'); return [+b.dataset.low, +b.dataset.high, b.getBBox().x, b.getBBox().width];}})()")
    assert band[:2] == [comp["composite"]["ci"]["low"], comp["composite"]["ci"]["high"]]
    zero = page.js(f"document.querySelector('{chart} line.zero').x1.baseVal.value")
    mean = page.js(f"document.querySelector('{chart} line.mean').x1.baseVal.value")
    assert band[2] < mean < band[2] + band[3] < zero  # the band holds the mean and lies left of 0
    assert page.js(f"document.querySelectorAll('{chart} line.trivial').length") == 2
    dots = page.js(f"Array.from(document.querySelectorAll('{chart} circle.dot')).map(c => [c.dataset.sample, c.classList[1], c.cx.baseVal.value])")
    assert len(dots) == 24
    assert {d[1] for d in dots} == {"loss", "tie"}
    assert all(x < zero for _, kind, x in dots if kind == "loss")
    assert "worse with baseline" in page.js(f"document.querySelector('{chart}').textContent")
    assert "95% confidence interval" in page.js("document.querySelector('figure.delta-chart figcaption').textContent")

    assert page.errors() == []
    page.screenshot(ARTIFACTS / "report-experiment.png")
    assert (ARTIFACTS / "report-experiment.png").stat().st_size > 20_000


def test_samples_without_a_change_sort_last_both_ways(browser, crash_run):
    _, out = crash_run
    page = Page(browser)
    page.goto((out / "report.html").as_uri())
    table = "#deltas-1"
    for _ in range(2):
        page.js(f"{header(table, 'Δ')}.click()")
        assert column(page, table, 0)[-1] == "fragile"
        assert column(page, table, 3)[-1] == "—"
    assert column(page, table, 4)[-1] == "pass → error"
    assert page.js("document.querySelectorAll('#delta-chart-1 circle.dot').length") == 2
    assert "1 sample(s) without a score on both sides" in page.js("document.querySelector('figure.delta-chart figcaption').textContent")
    assert page.errors() == []


def test_untrusted_names_stay_text_and_the_progress_page_renders(browser, progress_run, tmp_path):
    evil = "<img src=x onerror=\"window.__pwned=1\">"
    path = write_html(tmp_path, synthetic_report({"c": [3.0, 4.0, 3.5], evil: [4.0, 4.0, 4.5]}, ids=["a", evil, "b"]))
    page = Page(browser)
    page.goto(path.as_uri())
    assert page.js("typeof window.__pwned") == "undefined"
    assert evil in page.js("document.getElementById('experiment').textContent")
    assert page.errors() == []

    _, out = progress_run
    page = Page(browser)
    page.goto((out / "report.html").as_uri())
    assert page.js("document.querySelector('#experiment .verdict').dataset.level") == "PROGRESS"
    assert page.js("document.querySelector('#delta-chart-1 rect.ci-band').getBBox().x") > page.js(
        "document.querySelector('#delta-chart-1 line.zero').x1.baseVal.value"
    )
    assert page.js("document.getElementById('count').textContent") == "24 / 24"  # the page's own script still runs
    assert page.errors() == []
    page.screenshot(ARTIFACTS / "report-experiment-progress.png")
