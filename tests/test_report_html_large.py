"""report.html of a large run: the page stays light (the failures, the extremes, the full table as
embedded compressed data drawn in pages), and the writer reads the results only by iterating
them, keeping a bounded number alive. The page in a real browser: tests/test_report_html_browser.py."""

from __future__ import annotations

import base64
import gzip
import json
import re

import msgspec
import pytest
from large_report import LiveResults, large_report, result_dict
from report_factory import XSS, make_report

from omk.records.document import ReportDocument
from omk.records.result import SampleResult
from omk.report import html_data, html_paged, html_report
from omk.report.assets import text as asset
from omk.report.html_report import _script_hash, render_html, write_html

N = 5000
BLOCK = re.compile(r'<script type="application/octet-stream" id="(omk-[a-z0-9-]+)"[^>]*>([^<]*)</script>')


def blocks(page: str) -> dict[str, object]:
    """Every embedded data block, decompressed and parsed."""
    return {name: json.loads(gzip.decompress(base64.b64decode(text))) for name, text in BLOCK.findall(page)}


def expected_row(i: int) -> dict[str, object]:
    d = result_dict(i)
    state = "errored" if d["status"] == "error" else ("passed" if d["passed"] else "failed")
    sc = d["scores"]
    return {
        "index": i, "id": d["sample_id"], "repeat": 0, "state": state, "fact": sc["fact"], "behavior": sc["behavior"],
        "judge": sc["judge"], "composite": sc["composite"] if d["status"] == "ok" else None,
        "cost": d["trace"]["cost_usd"], "latency": d["trace"]["latency_ms"], "capability": d["capability"],
        "difficulty": d["difficulty"],
    }  # fmt: skip


@pytest.fixture(scope="module")
def large() -> tuple[str, LiveResults]:
    report, results = large_report(N)
    return render_html(report), results


def test_the_writer_reads_once_and_keeps_a_bounded_number_of_results_alive(large):
    page, results = large
    assert results.passes == 1
    assert results.alive == 0
    # the first failures (rendered with their panels after the pass) and the one being read
    assert results.most_alive <= html_paged.FAILURES_SHOWN + 2
    assert results.most_alive < N // 10


def test_a_full_page_reads_twice_and_keeps_no_result(tmp_path):
    report, results = large_report(300)
    page = write_html(tmp_path, report).read_text(encoding="utf-8")
    assert results.passes == 2
    assert results.most_alive <= 2
    assert 'id="details"' in page
    assert "omk-rows" not in page
    assert page.count('<tr data-detail="sample-') == 300


def test_a_large_report_is_paged_and_its_data_are_exactly_the_rows(large):
    page, _ = large
    assert 'id="details"' not in page
    assert page.count('<article class="detail failing"') == html_paged.FAILURES_SHOWN  # open on arrival
    assert page.count('<article class="detail"') == 1  # the panel a clicked row fills
    data = blocks(page)
    assert data["omk-rows"] == [expected_row(i) for i in range(N)]
    chunks = [data[f"omk-details-{k}"] for k in range(-(-N // html_data.CHUNK))]
    assert len(data) == 1 + len(chunks)
    assert all(len(c) == html_data.CHUNK for c in chunks)
    details = [d for c in chunks for d in c]
    assert len(details) == N
    for i in (0, 10, 13, 17, 509, 4999):  # plain, tool call, conversation, errored, URL, last
        d, source = details[i], result_dict(i)
        assert texts(find(d, "p", "meta")[0])[0] == f"source: samples/large.yaml:{3 + 4 * i}"
        if source.get("turns"):
            turns = find(d, "section", "turn")
            assert [texts(find(x, "pre")[0])[0] for x in turns] == [t["prompt"] for t in source["turns"]]
            assert "not sent: an earlier turn failed" in texts(turns[1])
        else:
            assert pres(d)[:2] == [source["prompt"], source["output"]]
        assert [texts(e) for e in find(d, "div", "errbox")] == ([["error", ": " + source["error"]]] if source["error"] else [])
    call = find(details[10], "tr", "tool-call")[0]
    assert pres(call)[0] == json.dumps({"file_path": "src/q10.py"}, indent=2)
    assert texts(find(details[509], "h4")[0]) == ["https://example.com/doc/509"]
    top = find(details[0], "ul", "asserts")[0]
    labels = [texts(find(li, "code")[0])[0] for li in top[2:]]
    assert labels == ["contains 'bound parameters'", "word_count_max 90", "assert-set"]
    assert [texts(find(li, "code")[0])[0] for li in find(top[4], "ul", "asserts")[0][2:]] == ["contains 'prepared'", "regex 'bind|param'"]


def find(node: object, tag: str, cls: str | None = None) -> list[list]:
    """The elements of a panel's tree (omk/report/html_panel.py) with this tag (and class), in order."""
    if not isinstance(node, list):
        return []
    found = []
    if node and isinstance(node[0], str) and node[0] == tag and (cls is None or node[1] == cls or (isinstance(node[1], dict) and node[1].get("class") == cls)):
        found.append(node)
    start = 2 if node and isinstance(node[0], str) else 0  # a tree, or a list of trees
    for child in node[start:]:
        found += find(child, tag, cls)
    return found


def texts(node: object) -> list[str]:
    """The texts of a panel's tree, in order."""
    if isinstance(node, str):
        return [node]
    return [x for child in node[2:] for x in texts(child)]


def pres(node: object) -> list[str]:
    """The texts of the `<pre>` blocks in a panel's tree."""
    return [texts(p)[0] for p in find(node, "pre")]


def test_the_failures_come_first_in_run_order_with_their_panels(large):
    page, _ = large
    failing = [i for i in range(N) if expected_row(i)["state"] != "passed"]
    assert f"Failures and errors ({len(failing)})" in page
    assert f"showing the first {html_paged.FAILURES_SHOWN} of {len(failing)}, in run order" in page
    section = page[page.index('id="failures-table"') : page.index('id="slowest"')]
    shown = [int(n) for n in re.findall(r'<tr data-detail="sample-(\d+)"', section)]
    assert shown == failing[: html_paged.FAILURES_SHOWN]
    panels = [int(n) for n in re.findall(r'<article class="detail(?: failing)?" id="sample-(\d+)"', section)]
    assert panels == shown
    assert "target failed after 3 attempts: HTTP 503 (case 7)" in section


@pytest.mark.parametrize("key, field", [("slowest", "duration_ms"), ("costliest", "cost_usd")])
def test_the_slowest_and_the_costliest(large, key, field):
    page, _ = large

    def value(i: int) -> float | None:
        d = result_dict(i)
        return d["duration_ms"] if field == "duration_ms" else d["trace"]["cost_usd"]

    ranked = sorted((i for i in range(N) if value(i) is not None), key=lambda i: (-value(i), i))
    section = page[page.index(f'id="{key}-table"') :]
    section = section[: section.index("</table>")]
    assert [int(n) for n in re.findall(r'<tr data-index="(\d+)"', section)] == ranked[: html_paged.TOP]
    top = ranked[0]
    shown = f"{value(top):.0f} ms" if field == "duration_ms" else f"${value(top):.4f}"
    assert f'<a href="#sample-{top}"><code>case-{top:05d}</code></a>' in section
    assert shown in section


def test_the_large_page_is_a_fraction_of_the_full_one(large):
    page, _ = large
    report, _ = large_report(N)
    full = html_report._full_page(report, html_report.FirstPass.over(report.results, "en"), "en")
    assert len(page) * 5 < len(full), (len(page), len(full))


def test_the_large_page_is_self_contained_and_runs_no_run_data(large):
    page, _ = large
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "no network resource"
    assert page.count("<script>") == 1  # the page's own script; the data blocks are not scripts
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src &#x27;none&#x27;" in csp
    assert _script_hash(asset("paged.js")) in csp
    assert _script_hash(asset("report.js")) not in csp
    assert f"<script>{asset('paged.js')}</script>" in page
    assert XSS not in page
    assert "<script>window.__pwned" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page  # failure 3's output, escaped in its panel
    tags = re.findall(r"<script[^>]*>", page)
    assert set(tags) - {"<script>"} <= {
        '<script type="application/json" id="omk-labels">',
        f'<script type="application/octet-stream" id="omk-rows" data-chunk="{html_data.CHUNK}">',
        *(f'<script type="application/octet-stream" id="omk-details-{k}">' for k in range(N // html_data.CHUNK)),
    }


def test_write_html_streams_the_same_page(tmp_path, large):
    page, _ = large
    report, results = large_report(N)
    path = write_html(tmp_path, report)
    assert path.read_text(encoding="utf-8") == page
    assert results.passes == 1
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left


def test_the_size_limits_choose_the_page():
    at_limit, _ = large_report(html_report.MAX_FULL_RESULTS)
    over, _ = large_report(html_report.MAX_FULL_RESULTS + 1)
    assert 'id="details"' in render_html(at_limit)
    assert 'id="omk-rows"' in render_html(over)
    # few results, but large ones: the data decide
    base = make_report()
    big = dict(base["results"][0], output="x" * (html_report.MAX_FULL_DATA_BYTES // 50))
    heavy = dict(base, results=[dict(big, sample_id=f"big-{i}") for i in range(60)])
    light = dict(base, results=[dict(big, sample_id=f"big-{i}") for i in range(40)])
    assert 'id="omk-rows"' in render_html(heavy)
    assert 'id="details"' in render_html(light)


def test_zh_labels():
    report, _ = large_report(html_report.MAX_FULL_RESULTS + 1)
    page = render_html(report, "zh")
    assert "未通过与出错" in page
    assert "最慢的用例" in page
    assert "全部结果" in page
    assert "上一页" in page
    labels = json.loads(re.search(r'<script type="application/json" id="omk-labels">([^<]*)</script>', page).group(1))
    assert labels["page"] == "第 {n} / {m} 页"
    assert labels["columns"]["state"] == "状态"
    assert labels["passed"] == "通过"


def test_a_run_with_no_failure_and_no_cost():
    free = dict(result_dict(0), passed=True)
    free["trace"] = dict(free["trace"], cost_usd=None)
    head = ReportDocument.from_dict(dict(make_report(), results=[]))
    passing = tuple(SampleResult.read(dict(free, sample_id=f"ok-{i}")) for i in range(html_report.MAX_FULL_RESULTS + 1))
    page = render_html(msgspec.structs.replace(head, results=passing))
    assert "Failures and errors (0)" in page
    assert "no failed or errored samples" in page
    assert "no result has a cost" in page
    assert 'id="slowest-table"' in page
    assert blocks(page)["omk-rows"][0]["state"] == "passed"


def test_heavy_results_stop_the_first_pass_early(monkeypatch):
    monkeypatch.setattr(html_report, "MAX_FULL_DATA_BYTES", 50_000)
    report, results = large_report(1000)
    page = render_html(report)
    assert 'id="omk-rows"' in page
    assert len(blocks(page)["omk-rows"]) == 1000
    assert results.passes == 2
    assert results.most_alive <= html_paged.FAILURES_SHOWN + 2
    assert results.read < 1100  # the first pass stopped after about 50 KB of data


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_text_is_cut_in_the_large_page_and_says_how_much_more_there_is(monkeypatch, lang):
    import large_report as factory

    made = factory.result_dict

    def long_output(i: int) -> dict[str, object]:
        d = made(i)
        if i % 2 == 0 and not d.get("turns"):
            d["output"] = "长" * (html_data.TEXT_SHOWN + 12_345)  # whole characters, not bytes
        return d

    monkeypatch.setattr(factory, "result_dict", long_output)
    report, _ = large_report(2 * html_data.CHUNK)
    page = render_html(report, lang=lang)
    details = [d for k in range(2) for d in blocks(page)[f"omk-details-{k}"]]
    more = "……另有 12,345 个字符：见 report.json" if lang == "zh" else "… 12,345 more characters: see report.json"
    assert pres(details[0])[1] == "长" * html_data.TEXT_SHOWN + "\n" + more  # the output, after the prompt
    assert pres(details[1])[1] == made(1)["output"]  # a short text is whole
    assert len(page) < 2 * html_data.CHUNK * html_data.TEXT_SHOWN  # not every long output in full


def test_the_paged_script_makes_every_tag_and_attribute_a_panel_uses():
    """The large page's script builds a panel's tree only from the tags and attributes it knows
    (and fails on any other): every panel of the corpus stays inside them."""
    from report_corpus import CORPUS

    from omk.records.document import read_document
    from omk.report.html_panel import REPEATED, panel

    script = asset("paged.js")
    known_tags = set(re.search(r"'([a-z0-9 ]+)'\.split\(' '\)", script).group(1).split())
    known_attrs = set(re.findall(r"'?([a-z-]+)'?:1", re.search(r"ATTRS=\{([^}]*)\}", script).group(1)))
    tags, attrs = set(), set()

    def walk(node: object) -> None:
        if isinstance(node, list):
            tags.add(node[0])
            attrs.update(node[1] if isinstance(node[1], dict) else ["class"] if node[1] else [])
            for child in node[2:]:
                walk(child)

    for folder in sorted(p.parent for p in CORPUS.glob("*/report.json")):
        for i, r in enumerate(read_document(folder).results):
            for node in panel(i, r, "en"):
                walk(node)
    assert tags - {REPEATED} <= known_tags and attrs <= known_attrs, (tags - known_tags, attrs - known_attrs)
    assert {"pre", "section", "table", "ul", "li", REPEATED} <= tags
    assert {"class", "id", "title", "data-label"} <= attrs
