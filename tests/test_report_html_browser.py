"""The HTML report in a real headless Chromium: no console errors, the filter, sorting, a detail view."""

from __future__ import annotations

from pathlib import Path

import pytest
from cdp_pipe import Browser, Page, find_chromium
from report_factory import make_report

from omk.report.html_report import write_html

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = find_chromium()

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium); .ci/run installs it"
)


@pytest.fixture(scope="module")
def browser():
    b = Browser(CHROMIUM)
    yield b
    b.close()


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
    assert visible_rows(page) == ["cr-sql-注入-zh", "cr-read-before-review", "cs-refund-en"]
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

    # sorting by composite: ascending puts the errored (no score) first, descending the best first
    composite = "Array.from(document.querySelectorAll('#results th')).find(th => th.textContent === 'composite')"
    page.js(f"{composite}.click()")
    assert visible_rows(page) == ["cs-refund-en", "cr-read-before-review", "cr-sql-注入-zh"]
    page.js(f"{composite}.click()")
    assert visible_rows(page) == ["cr-sql-注入-zh", "cr-read-before-review", "cs-refund-en"]

    # a detail view opens on click, and only one is open
    assert page.js("document.querySelectorAll('.detail:not([hidden])').length") == 0
    page.js(
        "Array.from(document.querySelectorAll('#results tbody tr'))"
        ".find(r => r.cells[0].textContent === 'cr-read-before-review').click()"
    )
    opened = page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)")
    assert len(opened) == 1
    detail = f"document.getElementById('{opened[0]}')"
    text = page.js(f"{detail}.innerText")
    assert "Review src/auth.py" in text  # the composed prompt
    assert "<script>window.__pwned=1</script>" in text  # untrusted output shown as text...
    assert page.js("typeof window.__pwned") == "undefined"  # ...and never run
    assert page.js(f"{detail}.querySelectorAll('li.assertion').length") == 7  # 5 top-level + 2 in the set
    assert page.js(f"{detail}.querySelectorAll('ul.asserts ul.asserts li.assertion.failed').length") == 2
    assert page.js(f"{detail}.querySelectorAll('tr.tool-call').length") == 1
    assert "Read:1" in text and "missed the MD5 weakness" in text and "https://example.com/doc" in text
    assert page.js("location.hash") == f"#{opened[0]}"

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
    assert any("boom" in e for e in errors) and any("undefinedFn" in e for e in errors)


def test_a_pairwise_verdict_links_to_its_sample_panel(browser, tmp_path):
    from test_report_pairwise import with_pairwise

    path = write_html(tmp_path, with_pairwise())
    page = Page(browser)
    page.goto(path.as_uri())
    links = page.js("Array.from(document.querySelectorAll('table.pairwise a')).map(a => a.getAttribute('href'))")
    assert links and all(h.startswith("#sample-") for h in links)
    second = links[1]
    page.js(f"document.querySelector('table.pairwise a[href=\"{second}\"]').click()")
    page.js("new Promise(r => setTimeout(r, 100))")  # the hashchange event fires after the click
    shown = page.js("Array.from(document.querySelectorAll('.detail')).filter(d => !d.hidden).map(d => d.id)")
    assert shown == [second[1:]]
    sid = page.js(f"document.querySelector('table.pairwise a[href=\"{second}\"]').textContent")
    assert sid in page.js(f"document.getElementById('{second[1:]}').innerText")
    assert page.errors() == []
