"""The `report.html` of a large run: still one self-contained file, light enough to open.

Above the size where a row and a detail panel for every result make the page too heavy
(omk/report/html_report.py decides), the page shows what a reader looks at first, rendered on the
server as on a small page: the summary, the charts, the first failed and errored results with
their panels, and the slowest and the costliest samples. The full table comes from embedded
compressed data (omk/report/html_data.py): the page's script draws it one page of rows at a time,
with the text and status filters and the column sort of a small page, and draws a result's panel
only when it is opened, from the same tree a small page renders (omk/report/html_panel.py), as
text and never as markup. Its script is omk/report/assets/paged.js.

The results are read once, in run order, and never kept: only the first failures (to render
them) and a few numbers of the slowest and costliest results (in bounded heaps) stay in memory.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from typing import NamedTuple

from omk.records.document import ReportDocument
from omk.records.result import SampleResult
from omk.report import assets
from omk.report.html_data import EmbeddedData
from omk.report.html_page import (
    ORDER_NOTE,
    Histogram,
    badge,
    detail_panel,
    esc,
    page_closing,
    page_opening,
    table_controls,
    table_heads,
    table_row,
)
from omk.report.html_panel import num, state
from omk.report.i18n import t
from omk.report.reasons import result_name

FAILURES_SHOWN = 100  # failed and errored results rendered with their panels
TOP = 10  # results in the slowest and in the costliest list
PAGE_SIZE = 100  # rows of the full table drawn at once

LARGE_NOTE = (
    "A large run: this page lists the failures and errors, the slowest and the costliest samples, "
    "and shows the full table {n} rows at a time."
)
UNREADABLE = (
    "This browser cannot read the table's embedded data (it needs DecompressionStream); "
    "the sections above still list the failures."
)

class Extreme(NamedTuple):
    """What the slowest and costliest lists show of a result."""

    position: int  # of the result in the run (a field named index would hide the tuple's index())
    sample_id: str
    repeat: int
    state: str
    composite: float | None
    duration_ms: float | None
    cost: float | None


class LargePass:
    """Everything the page needs from one pass over the results."""

    def __init__(self, data: EmbeddedData) -> None:
        self.data = data
        self.histogram = Histogram()
        self.repeated = False
        self.failing = 0
        self.failures: list[tuple[int, SampleResult]] = []  # the first FAILURES_SHOWN, in run order
        self.slowest: list[tuple[float, int, Extreme]] = []  # min-heaps of (value, -index, what)
        self.costliest: list[tuple[float, int, Extreme]] = []

    def add(self, i: int, r: SampleResult) -> None:
        self.histogram.add(r)
        self.repeated = self.repeated or r.repeat > 0
        st = state(r)
        if st != "passed":
            self.failing += 1
            if len(self.failures) < FAILURES_SHOWN:
                self.failures.append((i, r))
        composite = r.scores.composite if r.status == "ok" else None
        seen = Extreme(i, r.sample_id, r.repeat, st, composite, r.duration_ms, r.trace.cost_usd)
        _keep_top(self.slowest, seen.duration_ms, seen)
        _keep_top(self.costliest, seen.cost, seen)
        self.data.add(i, r)


def _keep_top(heap: list[tuple[float, int, Extreme]], value: float | None, seen: Extreme) -> None:
    """Keep the TOP largest values; on a tie the earlier result stays."""
    if value is None:
        return
    item = (value, -seen.position, seen)
    if len(heap) < TOP:
        heapq.heappush(heap, item)
    elif item[:2] > heap[0][:2]:
        heapq.heapreplace(heap, item)


def page_pieces(report: ReportDocument, lang: str) -> Iterator[str]:
    """The page in pieces; the embedded data streams out of temporary files."""
    threshold = report.summary.threshold
    with EmbeddedData.open(lang) as data:
        seen = LargePass(data)
        for i, r in enumerate(report.results):
            seen.add(i, r)
        chart = seen.histogram.svg(threshold, lang)
        css = assets.text("report.css") + assets.text("paged.css")
        opening, scripts = page_opening(report, lang, chart, css, assets.text("paged.js"))
        yield opening
        yield f'<p class="meta" id="large-note">{esc(t(LARGE_NOTE, lang).format(n=PAGE_SIZE))}</p>'
        yield _failures(seen, threshold, lang)
        yield _extremes("slowest", t("Slowest samples", lang), seen.slowest, seen.repeated, lang)
        yield _extremes("costliest", t("Costliest samples", lang), seen.costliest, seen.repeated, lang)
        yield _full_table(seen.repeated, threshold, lang)
        yield _labels(lang)
        yield from data.blocks()
        yield page_closing(scripts)


def _failures(seen: LargePass, threshold: float | None, lang: str) -> str:
    head = f'<h2 id="failures">{esc(t("Failures and errors", lang))} ({seen.failing})</h2>'
    if not seen.failing:
        return head + f'<p class="empty">{esc(t("no failed or errored samples", lang))}</p>'
    if seen.failing > len(seen.failures):
        head += f'<p class="meta">{esc(t("showing the first {n} of {m}, in run order", lang).format(n=len(seen.failures), m=seen.failing))}</p>'
    rows = "".join(table_row(i, r, seen.repeated, threshold, lang) for i, r in seen.failures)
    panels = "".join(detail_panel(i, r, seen.repeated, lang) for i, r in seen.failures)
    return (
        head + f'<table class="listing" id="failures-table"><thead><tr>{table_heads(seen.repeated, lang)}</tr></thead>'
        f'<tbody>{rows}</tbody></table><div id="failure-details">{panels}</div>'
    )


def _extremes(key: str, title: str, heap: list[tuple[float, int, Extreme]], repeated: bool, lang: str) -> str:
    """The slowest (`key` "slowest") or costliest results, the largest first."""
    head = f'<h2 id="{key}">{esc(title)}</h2>'
    if not heap:
        word = "no result has a duration" if key == "slowest" else "no result has a cost"
        return head + f'<p class="empty">{esc(t(word, lang))}</p>'
    measure = t("duration", lang) if key == "slowest" else t("cost", lang)
    heads = f'<th>{esc(t("sample", lang))}</th><th>{esc(t("status", lang))}</th>'
    heads += f'<th class="num">{esc(measure)}</th><th class="num">{esc(t("composite", lang))}</th>'
    rows = []
    for _, _, x in sorted(heap, reverse=True):
        value = f"{x.duration_ms:.0f} ms" if key == "slowest" else f"${x.cost:.4f}"
        rows.append(
            f'<tr data-index="{x.position}"><td><a href="#sample-{x.position}"><code>{esc(result_name(x, repeated))}</code></a></td>'
            f'<td>{badge(x.state, lang)}</td><td class="num">{esc(value)}</td><td class="num">{num(x.composite)}</td></tr>'
        )
    return head + f'<table class="extremes" id="{key}-table"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _full_table(repeated: bool, threshold: float | None, lang: str) -> str:
    """The full table's frame: the script fills its body from the embedded rows."""
    limit = "" if threshold is None else f' data-threshold="{threshold}"'
    return (
        f"<h2 id=\"all-results\">{esc(t('All results', lang))}</h2>"
        + table_controls(lang) + _pager(lang, "prev", "page", "next") + "</div>"
        f'<p class="meta" id="table-note">{esc(t("loading the table…", lang))}</p>'
        f'<table id="results" data-repeated="{int(repeated)}" data-page-size="{PAGE_SIZE}"{limit}>'
        f"<caption>{esc(t(ORDER_NOTE, lang))}</caption>"
        f"<thead><tr>{table_heads(repeated, lang)}</tr></thead><tbody></tbody></table>"
        f'<div class="controls">{_pager(lang)}</div>'
        '<article class="detail" id="sample-view" hidden></article>'
    )


def _pager(lang: str, *ids: str) -> str:
    """Previous, "page N of M", next; `ids` name the three (the pager above the table has them)."""
    prev, where, next_ = (f' id="{i}"' for i in ids) if ids else ("", "", "")
    return (
        f'<span class="pager"><button type="button" data-step="-1"{prev}>‹ {esc(t("previous", lang))}</button>'
        f'<span class="page-label"{where}></span>'
        f'<button type="button" data-step="1"{next_}>{esc(t("next", lang))} ›</button></span>'
    )


def _labels(lang: str) -> str:
    """The words the script shows, as JSON in a block it reads (not a script to run)."""
    columns = {k: t(k, lang) for k in ("repeat", "status", "fact", "behavior", "judge", "composite", "cost", "latency")}
    words = {
        **{k: t(k, lang) for k in ("passed", "failed", "errored")},
        "columns": {**columns, "state": columns["status"]},
        "page": t("page {n} of {m}", lang),
        "unreadable": t(UNREADABLE, lang),
    }
    text = json.dumps(words, ensure_ascii=False).replace("<", "\\u003c")
    return f'<script type="application/json" id="omk-labels">{text}</script>'
