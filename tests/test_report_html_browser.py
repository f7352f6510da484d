"""The HTML report in a real headless Chromium: no console errors, the filter, sorting, a detail view."""

from __future__ import annotations

from pathlib import Path

import pytest
from cdp_pipe import CHROMIUM_SKIP, Page, find_chromium
from cli_support import run_omk
from report_factory import make_report

from omk.report.html_report import render_html, write_html

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = find_chromium()

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason=CHROMIUM_SKIP
)


def visible_rows(page: Page) -> list[str]:
    return page.js(
        "Array.from(document.querySelectorAll('#results tbody tr')).filter(r => !r.hidden)"
        ".map(r => r.cells[0].textContent)"
    )


def test_report_opens_filters_sorts_and_shows_details(browser, tmp_path):
    path = write_html(tmp_path, make_report())
    page = Page(browser)
    page.goto(path.as_uri())

    assert page.js("document.title").startswith("omk report")
    assert page.js("document.characterSet") == "UTF-8"
    # failed and errored first, then passed, each group in run order (the run order is sql, read, refund)
    assert visible_rows(page) == ["cr-read-before-review", "cs-refund-en", "cr-sql-注入-zh"]
    assert "failed and errored samples first" in page.js("document.querySelector('#results caption').textContent").lower()
    assert page.js("document.getElementById('count').textContent") == "3 / 3"  # the script ran
    assert page.js("document.querySelectorAll('#score-chart rect.bin').length") == 9

    # the text filter
    page.js("const q = document.getElementById('filter'); q.value = '注入'; q.dispatchEvent(new Event('input'))")
    assert visible_rows(page) == ["cr-sql-注入-zh"]
    page.js("q.value = 'TOOL-USE'; q.dispatchEvent(new Event('input'))")  # capability, case-insensitive
    assert visible_rows(page) == ["cr-read-before-review"]
    page.js("q.value = ''; q.dispatchEvent(new Event('input'))")
    # the status filter
    page.js("const st = document.getElementById('status-filter'); st.value = 'errored'; st.dispatchEvent(new Event('change'))")
    assert visible_rows(page) == ["cs-refund-en"]
    page.js("st.value = ''; st.dispatchEvent(new Event('change'))")
    assert len(visible_rows(page)) == 3
    # the detail panels come in the table's order
    panels = page.js("Array.from(document.querySelectorAll('.detail h2 code')).map(c => c.textContent)")
    assert panels == ["cr-read-before-review", "cs-refund-en", "cr-sql-注入-zh"]

    # sorting by composite: ascending puts the errored (no score) first, descending the best first
    composite = "Array.from(document.querySelectorAll('#results th')).find(th => th.textContent === 'composite')"
    page.js(f"{composite}.click()")
    assert visible_rows(page) == ["cs-refund-en", "cr-read-before-review", "cr-sql-注入-zh"]
    page.js(f"{composite}.click()")
    assert visible_rows(page) == ["cr-sql-注入-zh", "cr-read-before-review", "cs-refund-en"]

    # the failed and the errored results' details are open from the start; a row's click selects its own
    opened = page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)")
    assert len(opened) == 2
    page.js(
        "Array.from(document.querySelectorAll('#results tbody tr'))"
        ".find(r => r.cells[0].textContent === 'cr-read-before-review').click()"
    )
    assert page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)") == opened
    selected = page.js("document.querySelector('#results tbody tr.selected').getAttribute('data-detail')")
    detail = f"document.getElementById('{selected}')"
    text = page.js(f"{detail}.innerText")
    assert "Review src/auth.py" in text  # the composed prompt
    assert "<script>window.__pwned=1</script>" in text  # untrusted output shown as text...
    assert page.js("typeof window.__pwned") == "undefined"  # ...and never run
    assert page.js(f"{detail}.querySelectorAll('li.assertion').length") == 7  # 5 top-level + 2 in the set
    assert page.js(f"{detail}.querySelectorAll('ul.asserts ul.asserts li.assertion.failed').length") == 2
    assert page.js(f"{detail}.querySelectorAll('tr.tool-call').length") == 1
    assert "Read:1" in text
    assert "missed the MD5 weakness" in text
    assert "https://example.com/doc" in text
    assert page.js("location.hash") == f"#{selected}"

    assert page.errors() == []
    page.screenshot(ARTIFACTS / "report.png")
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_deep_link_opens_the_detail_and_zh_page_renders(browser, tmp_path):
    path = write_html(tmp_path, make_report(repeats=2), lang="zh")
    page = Page(browser)
    page.goto(path.as_uri() + "#sample-0")
    assert page.js("document.documentElement.lang") == "zh-CN"
    assert page.js("document.getElementById('sample-0').hidden") is False
    assert page.js("document.querySelectorAll('#results tbody tr').length") == 6
    assert "cr-sql-注入-zh#1" in page.js("document.body.textContent")  # hidden panels too
    assert "识别了注入并给出修复" in page.js("document.getElementById('sample-0').innerText")
    assert page.errors() == []
    page.screenshot(ARTIFACTS / "report-zh.png")


def test_a_broken_page_is_caught(browser, tmp_path):
    """The error collection itself works: a page with a script error reports it."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); undefinedFn();</script></body></html>")
    page = Page(browser)
    page.goto(bad.as_uri())
    errors = page.errors()
    assert any("boom" in e for e in errors)
    assert any("undefinedFn" in e for e in errors)


def test_a_pairwise_verdict_links_to_its_sample_panel(browser, tmp_path):
    from pairwise_reports import with_pairwise

    path = write_html(tmp_path, with_pairwise())
    page = Page(browser)
    page.goto(path.as_uri())
    links = page.js("Array.from(document.querySelectorAll('table.pairwise a')).map(a => a.getAttribute('href'))")
    assert links
    assert all(h.startswith("#sample-") for h in links)
    second = links[1]
    page.js(f"document.querySelector('table.pairwise a[href=\"{second}\"]').click()")
    page.js("new Promise(r => setTimeout(r, 100))")  # the hashchange event fires after the click
    shown = page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)")
    assert second[1:] in shown
    assert all(d == second[1:] or "failing" in page.js(f"document.getElementById('{d}').className") for d in shown)
    sid = page.js(f"document.querySelector('table.pairwise a[href=\"{second}\"]').textContent")
    assert sid in page.js(f"document.getElementById('{second[1:]}').innerText")
    assert page.errors() == []


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory) -> Path:
    """report.html of a real run with failures: the bundled samples replayed, gated at 4.5."""
    out = tmp_path_factory.mktemp("failing-run")
    cmd = ["eval", "samples/eval-samples.yaml", "--target", "replay:samples/responses.jsonl"]
    cmd += ["--threshold", "4.5", "--format", "html", "--out", str(out), "--no-cache"]
    proc = run_omk(*cmd, cwd=ROOT, drop=(), columns=None, timeout=300)
    assert proc.returncode == 1, proc.stderr  # the gate fails: some samples are under 4.5
    assert (out / "report.html").is_file()
    return out / "report.html"


def at_size(page: Page, width: int, height: int = 800, dark: bool = False) -> None:
    page.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    scheme = "dark" if dark else "light"
    page.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})


def luminance(page: Page, expression: str) -> float:
    """Relative brightness (0 black .. 1 white) of a computed `rgb(...)` colour."""
    rgb = page.js(f"getComputedStyle({expression}).backgroundColor")
    r, g, b = (int(x) for x in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def open_first_row(page: Page) -> str:
    page.js("document.querySelector('#results tbody tr').click()")
    return page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden)[0].id")


def test_a_failing_run_lists_its_failures_first(browser, failing_run):
    page = Page(browser)
    page.goto(failing_run.as_uri())
    states = page.js("Array.from(document.querySelectorAll('#results tbody tr')).map(r => r.getAttribute('data-state'))")
    assert "passed" in states
    assert states[0] in ("failed", "errored")
    first_pass = states.index("passed")
    assert all(s == "passed" for s in states[first_pass:])  # no failure after the first pass
    # each group keeps the run order: the panel ids (run positions) rise within a group
    ids = page.js("Array.from(document.querySelectorAll('#results tbody tr')).map(r => +r.getAttribute('data-detail').slice(7))")
    assert ids[:first_pass] == sorted(ids[:first_pass])
    assert ids[first_pass:] == sorted(ids[first_pass:])
    panels = page.js("Array.from(document.querySelectorAll('.detail')).map(d => +d.id.slice(7))")
    assert panels == ids
    assert page.errors() == []


def test_wide_the_output_sits_beside_its_assertions(browser, failing_run):
    page = Page(browser)
    at_size(page, 1280)
    page.goto(failing_run.as_uri())
    panel = open_first_row(page)
    box = (
        f"(sel => document.querySelector('#{panel} ' + sel).getBoundingClientRect().toJSON())"
    )
    out, checks = page.js(f"{box}('.judged-output')"), page.js(f"{box}('.judged-assertions')")
    assert out["right"] <= checks["left"]
    assert abs(out["top"] - checks["top"]) < 2  # side by side
    assert page.js(f"document.querySelector('#{panel} .judged-assertions li.assertion.failed') !== null")
    assert page.errors() == []
    page.screenshot(ARTIFACTS / "report-wide.png")


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_narrow_no_sideways_scrolling_and_the_colour_scheme(browser, failing_run, dark):
    page = Page(browser)
    at_size(page, 375, dark=dark)
    page.goto(failing_run.as_uri())
    panel = open_first_row(page)
    assert page.js("document.documentElement.clientWidth") == 375
    assert page.js("document.documentElement.scrollWidth") <= 375
    box = f"(sel => document.querySelector('#{panel} ' + sel).getBoundingClientRect().toJSON())"
    out, checks = page.js(f"{box}('.judged-output')"), page.js(f"{box}('.judged-assertions')")
    assert out["bottom"] <= checks["top"] + 1
    assert abs(out["left"] - checks["left"]) < 2  # output right above
    # nothing but code blocks is wider than its box
    wide = page.js(
        "Array.from(document.querySelectorAll('body *')).filter(e => !e.closest('pre') && e.offsetParent !== null"
        " && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible').map(e => e.tagName)"
    )
    assert wide == []
    body = luminance(page, "document.body")
    assert (body < 0.2) if dark else (body > 0.9)
    text = page.js("getComputedStyle(document.body).color")
    assert text != page.js("getComputedStyle(document.body).backgroundColor")
    assert page.errors() == []  # the page's scripts still pass its policy
    page.screenshot(ARTIFACTS / f"report-narrow-{'dark' if dark else 'light'}.png")


CORPUS = sorted(p.parent for p in (ROOT / "tests" / "fixtures" / "reports").glob("*/report.json"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("folder", CORPUS, ids=lambda p: p.name)
def test_every_corpus_report_fits_375_px_with_every_panel_open(browser, tmp_path, folder, lang):
    """Experiments, categories, pairwise votes, conversations: no page scrolls sideways on a phone."""
    from omk.records.document import read_document

    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(read_document(folder), lang), encoding="utf-8")
    page = Page(browser)
    at_size(page, 375, dark=True)
    page.goto(page_file.as_uri())
    page.js("document.querySelectorAll('.detail').forEach(d => { d.hidden = false; })")
    too_wide = page.js(
        "Array.from(document.querySelectorAll('body *')).filter(e => !e.closest('pre')"
        " && e.getBoundingClientRect().right > 376).map(e => e.tagName + '.' + e.className)"
    )
    assert too_wide == []
    assert page.js("document.documentElement.scrollWidth") <= 375
    assert page.errors() == []


# ---------------------------------------------------------------- a large run: the paged page

LARGE = 5000


@pytest.fixture(scope="module")
def large_page(tmp_path_factory) -> Path:
    from large_report import large_report

    report, _ = large_report(LARGE)
    return write_html(tmp_path_factory.mktemp("large"), report)


def wait_for(page: Page, condition: str) -> None:
    page.js(
        "new Promise((ok, fail) => { const t0 = Date.now(); const f = () => (" + condition + ") ? ok() :"
        " Date.now() - t0 > 20000 ? fail(new Error('timed out: ' + " + repr(condition) + ")) : setTimeout(f, 20); f(); })"
    )


def type_in(page: Page, element: str, value: str, event: str = "input") -> None:
    page.js(f"(e => {{ e.value = {value!r}; e.dispatchEvent(new Event({event!r})); }})(document.getElementById({element!r}))")


def panel_text(page: Page) -> str:
    wait_for(page, "!document.getElementById('sample-view').hidden")
    return page.js("document.getElementById('sample-view').innerText")


def test_a_large_report_pages_searches_sorts_and_opens_details(browser, large_page):
    from large_report import result_dict

    states = ["errored" if d["status"] == "error" else "passed" if d["passed"] else "failed" for d in map(result_dict, range(LARGE))]
    order = [f"case-{i:05d}" for i, s in enumerate(states) if s != "passed"] + [f"case-{i:05d}" for i, s in enumerate(states) if s == "passed"]
    page = Page(browser)
    page.goto(large_page.as_uri())  # a file: URL, offline; the policy allows no network at all
    wait_for(page, "document.querySelectorAll('#results tbody tr').length > 0")
    assert visible_rows(page) == order[:100]  # page 1: 100 rows, failed and errored first
    assert page.js("document.getElementById('count').textContent") == f"{LARGE} / {LARGE}"
    assert page.js("document.getElementById('page').textContent") == "page 1 of 50"
    page.js("document.getElementById('next').click()")
    assert visible_rows(page) == order[100:200]
    assert page.js("document.getElementById('page').textContent") == "page 2 of 50"
    page.js("document.querySelectorAll('.pager [data-step=\"1\"]')[1].click()")  # the pager under the table
    assert visible_rows(page) == order[200:300]
    assert page.js("Array.from(document.querySelectorAll('.page-label')).map(s => s.textContent)") == ["page 3 of 50"] * 2
    page.js("document.getElementById('prev').click()")
    assert visible_rows(page) == order[100:200]

    type_in(page, "filter", "CASE-04321")  # the search, by sample id, case-insensitive
    assert visible_rows(page) == ["case-04321"]
    assert page.js("document.getElementById('page').textContent") == "page 1 of 1"
    type_in(page, "filter", "")
    type_in(page, "status-filter", "errored", "change")
    assert page.js("document.getElementById('count').textContent") == f"{states.count('errored')} / {LARGE}"
    assert set(page.js("Array.from(document.querySelectorAll('#results tbody tr')).map(r => r.dataset.state)")) == {"errored"}
    type_in(page, "status-filter", "", "change")

    composite = "Array.from(document.querySelectorAll('#results th')).find(th => th.textContent === 'composite')"
    page.js(f"{composite}.click()")
    page.js(f"{composite}.click()")  # descending: the best first
    best = max((d["scores"]["composite"], -i) for i, d in enumerate(map(result_dict, range(LARGE))) if d["status"] == "ok")
    assert visible_rows(page)[0] == f"case-{-best[1]:05d}"

    type_in(page, "filter", "case-00011")  # exact halves round to even, as on the server
    assert page.js("Array.from(document.querySelectorAll('#results tbody td.num')).map(c => c.textContent)")[:4] == ["4.12", "4.38", "—", "4.25"]
    page.js("document.querySelector('#results tbody tr').click()")
    text = panel_text(page)
    assert "Review snippet 11 for SQL injection" in text
    assert "names the fix" not in text
    assert page.js("document.querySelectorAll('#sample-view li.assertion').length") == 5  # 3 top-level + 2 in the set
    assert page.js("location.hash") == "#sample-11"
    assert page.js("document.querySelector('#results tbody tr').classList.contains('selected')")

    type_in(page, "filter", "case-00003")  # an output with markup: shown as text, never run
    page.js("document.querySelector('#results tbody tr').click()")
    wait_for(page, "document.getElementById('sample-view').dataset.index === '3'")
    assert "<script>window.__pwned=1</script>" in panel_text(page)
    assert page.js("typeof window.__pwned") == "undefined"
    assert page.errors() == []


def test_a_large_report_deep_links_conversations_and_failures(browser, large_page):
    page = Page(browser)
    page.goto(large_page.as_uri() + "#sample-4013")  # a conversation, deep in the run
    text = panel_text(page)
    assert "case-04013" in text
    assert "turn one of 4013" in text
    assert "not sent: an earlier turn failed" in text
    assert page.js("document.querySelectorAll('#sample-view section.turn').length") == 2
    # a failure's panel is rendered on the server, beside the failures
    page.js("document.querySelector('#failures-table tbody tr').click()")
    shown = page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)")
    assert "sample-1" in shown
    assert page.js("location.hash") == "#sample-1"  # the failures' panels are all open
    page.js("document.querySelector('#slowest-table a').click()")  # a link to a sample's panel
    wait_for(page, "!document.getElementById('sample-view').hidden")
    first = page.js("document.querySelector('#slowest-table a').textContent")
    assert first in page.js("document.getElementById('sample-view').innerText")
    assert page.errors() == []


def test_a_large_report_fits_a_phone(browser, large_page):
    page = Page(browser)
    at_size(page, 375, dark=True)
    page.goto(large_page.as_uri() + "#sample-10")
    assert "Read" in panel_text(page)
    assert page.js("document.documentElement.scrollWidth") <= 375
    assert page.errors() == []
    page.screenshot(ARTIFACTS / "report-large-narrow.png")


@pytest.mark.parametrize("folder", CORPUS, ids=lambda p: p.name)
def test_a_panel_drawn_in_the_browser_reads_as_the_server_rendered_one(browser, tmp_path, folder, monkeypatch):
    """Every result of the corpus (conversations, judges, tool calls, URLs, repeats, errors): its
    row and its panel drawn by the large page's script from the embedded data show the same text
    as those a small page renders on the server."""
    from omk.records.document import read_document
    from omk.report import html_report

    report = read_document(folder)
    lang = "zh" if folder.name in ("judged", "repeats") else "en"
    full = tmp_path / "full.html"
    full.write_text(render_html(report, lang), encoding="utf-8")
    monkeypatch.setattr(html_report, "MAX_FULL_RESULTS", 0)
    paged = write_html(tmp_path, report, lang)
    assert "omk-rows" in paged.read_text(encoding="utf-8")

    page = Page(browser)
    page.goto(full.as_uri())
    page.js("document.querySelectorAll('.detail').forEach(d => { d.hidden = false; })")
    expected = page.js("Array.from(document.querySelectorAll('#details .detail')).map(d => [+d.id.slice(7), d.innerText])")
    cells = "Array.from(r.cells).map(c => [c.className, c.textContent, c.dataset.label || null])"
    rows = page.js(f"Array.from(document.querySelectorAll('#results tbody tr')).map(r => [+r.dataset.detail.slice(7), r.dataset.state, {cells}])")
    page = Page(browser)
    page.goto(paged.as_uri())
    wait_for(page, "document.querySelectorAll('#results tbody tr').length > 0")
    assert page.js(f"Array.from(document.querySelectorAll('#results tbody tr')).map(r => [+r.dataset.index, r.dataset.state, {cells}])") == rows
    for i, text in expected:
        page.js(f"document.querySelector('#results tbody tr[data-index=\"{i}\"]').click()")
        wait_for(page, f"document.getElementById('sample-view').dataset.index === '{i}'")
        assert page.js("document.getElementById('sample-view').innerText") == text, f"sample-{i}"
    assert expected
    assert page.errors() == []


def test_a_large_report_without_decompression_still_lists_the_failures(browser, large_page):
    """A browser without DecompressionStream: the page says why the table is empty, and the
    failures, slowest and costliest rendered on the server still work."""
    page = Page(browser)
    page.send("Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.DecompressionStream;"})
    page.goto(large_page.as_uri())
    wait_for(page, "document.getElementById('table-note').textContent.indexOf('DecompressionStream') !== -1")
    assert page.js("document.querySelectorAll('#results tbody tr').length") == 0
    page.js("document.querySelector('#failures-table tbody tr').click()")
    assert "sample-1" in page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)")
    assert page.errors() == []
