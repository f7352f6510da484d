"""Information sits where a reader looks for it: in report.html a failed sample's reasons are open
from the start (a passed sample's details may wait for a click), checked in a real headless
Chromium; what the agent left in its workspace is a fact beside the failures, not one of them, in
Markdown as in the terminal; `omk view`'s trend chart has labelled axes."""

from __future__ import annotations

from pathlib import Path

from report_factory import THRESHOLD, _result, build_report, leaf, make_report

from omk.records import Trace
from omk.records.result import WorkspaceChanges
from omk.report.html_report import write_html
from omk.report.markdown import render_markdown
from omk.samples.model import Sample
from omk.scoring.summary import summarize


def test_a_failed_samples_reasons_are_open_when_the_page_opens(tmp_path: Path, browser) -> None:
    from cdp_pipe import Page

    path = write_html(tmp_path, make_report())
    page = Page(browser)
    page.goto(path.as_uri())
    shown = "Array.from(document.querySelectorAll('.detail')).filter(d => d.offsetHeight > 0).map(d => d.querySelector('h2 code').textContent)"
    assert page.js(shown) == ["cr-read-before-review", "cs-refund-en"]  # the failed and the errored; the passed one waits
    failed = "Array.from(document.querySelectorAll('.detail')).find(d => d.querySelector('h2 code').textContent === 'cr-read-before-review')"
    assert "✗" in page.js(f"{failed}.querySelector('.judged-assertions').innerText")  # its failed checks, in view
    page.js("Array.from(document.querySelectorAll('#results tbody tr')).find(r => r.cells[0].textContent === 'cr-sql-注入-zh').click()")
    assert page.js(shown) == ["cr-read-before-review", "cs-refund-en", "cr-sql-注入-zh"]  # opening a passed one closes no failure
    assert page.errors() == []


def _workspace_report() -> dict:
    sample = Sample(sample_id="edit-notes", prompt="add a line to notes.md")
    r = _result(sample, "done", [leaf("file_contains", False, message="notes.md: no line matches")], trace=Trace(workspace=WorkspaceChanges()))
    return build_report(
        run_id="r", started_at="2026-01-01T00:00:00+00:00", finished_at="2026-01-01T00:00:01+00:00", samples_files=["s.yaml"],
        target={"kind": "replay", "spec": "replay:x"}, judge=None, summary=summarize([r], THRESHOLD, 1.0), results=[r],
    )  # fmt: skip


def test_the_workspace_is_a_fact_beside_the_failures_in_markdown() -> None:
    for lang, lead, fact in (("en", "| workspace |", "no file created, changed or deleted"), ("zh", "| 工作区 |", "没有文件被创建、修改或删除")):
        text = render_markdown(_workspace_report(), lang)
        failures = text[text.index("### " + ("Failures" if lang == "en" else "失败详情")) :].split("\n\n")[1].splitlines()
        assert failures[0].endswith(lead), failures  # a column of its own
        row = failures[2].split(" | ")
        assert fact in row[-1] and fact not in row[-2] and "notes.md: no line matches" in row[-2], row


def test_the_trend_chart_has_labelled_axes(tmp_path: Path, browser) -> None:
    from cdp_pipe import Page
    from view_support import runs as _runs

    from omk.view.site import Site, serve

    site = Site([_runs(tmp_path)])
    urls: list[str] = []
    server = serve(site, 0, urls.append)
    page = Page(browser)
    try:
        page.goto(urls[0])
        svg = "document.querySelector('figure.trend svg')"
        assert page.js(f"{svg}.querySelectorAll('line.axis-score, line.axis-run, line.axis-composite').length") == 3
        assert page.js(f"Array.from({svg}.querySelectorAll('text.tick-score')).map(t => t.textContent)") == ["0%", "50%", "100%"]
        assert page.js(f"Array.from({svg}.querySelectorAll('text.tick-run')).map(t => t.textContent)") == ["1", "2"]
        names = page.js(f"Array.from({svg}.querySelectorAll('text.axis-name')).map(t => t.textContent)")
        assert names == ["run (oldest first)", "pass rate", "composite"]
        # every label is drawn inside the chart, none on another
        inside = (
            f"(() => {{ const box = {svg}.getBoundingClientRect(); return Array.from({svg}.querySelectorAll('text')).every(t => {{"
            " const r = t.getBoundingClientRect(); return r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom; }); })()"
        )
        assert page.js(inside)
        assert page.errors() == []
    finally:
        server.shutdown()
