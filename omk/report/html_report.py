"""`report.html`: one self-contained file (inline CSS, JS and SVG; no network) that opens from disk.

Built with plain string building and `html.escape`, not a template engine: the page is one
fixed layout, and rendering every value through a single `esc()` on the server side means no
run data ever reaches JavaScript or `innerHTML` (outputs are untrusted). The script only sorts,
filters and shows pre-rendered detail panels. A Content-Security-Policy allows no network and
only the page's own script (by hash), as a second line of defence. The style sheet and the script
are files of the package (omk/report/assets/); a result's detail panel is built as a tree by
omk/report/html_panel.py, which both this page and the large page's script turn into elements.

The results are read only by iterating them (twice at most) and counting them, never all held:
a report can hand over a collection that reads them lazily from a file. A large run (more
results, or more text, than a browser handles well as one page) gets the page of
omk/report/html_paged.py instead: the same summary, its failures and extremes rendered here, and
the full table as embedded data that its script shows as text (`textContent`), never as markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from omk.records.document import ReportDocument
from omk.records.result import SampleResult
from omk.report import (
    assets,
)
from omk.report.html_data import dumps
from omk.report.html_data import row as row_data
from omk.report.html_page import (  # noqa: F401  # _script_hash, report_policy: importable from here, as before
    Histogram,
    _script_hash,
    _table,
    detail_panel,
    esc,
    page_closing,
    page_opening,
    report_policy,
    table_row,
)
from omk.report.html_panel import panel
from omk.report.html_panel import state as _state
from omk.report.i18n import t

# Above either limit a page of every row and every detail panel grows too heavy for a browser;
# the page then shows the summary, the failures and the extremes, and carries the full table as
# compressed data that it draws one page at a time (omk/report/html_paged.py).
MAX_FULL_RESULTS = 2000
MAX_FULL_DATA_BYTES = 6 * 1024 * 1024  # the results' data (html_data) as JSON, a proxy for the page's size


class FirstPass:
    """What one pass over the results learns before a full page is rendered: the chart, whether
    samples repeated, and how large the results' data is."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.histogram = Histogram()
        self.repeated = False
        self.data_bytes = 0

    def add(self, i: int, r: SampleResult) -> None:
        self.histogram.add(r)
        self.repeated = self.repeated or r.repeat > 0
        self.data_bytes += len(dumps(row_data(i, r))) + len(dumps(panel(i, r, self.lang)))

    @classmethod
    def over(cls, results: Iterable[SampleResult], lang: str, limit: int | None = None) -> FirstPass:
        """The pass, stopped as soon as the data are over `limit` bytes (then the page is a large one)."""
        scan = cls(lang)
        for i, r in enumerate(results):
            scan.add(i, r)
            if limit is not None and scan.data_bytes > limit:
                break
        return scan


def page_pieces(report: ReportDocument, lang: str = "en") -> Iterator[str]:
    """The page, in pieces (a large page's data arrives in many)."""
    if len(report.results) <= MAX_FULL_RESULTS:
        scan = FirstPass.over(report.results, lang, MAX_FULL_DATA_BYTES)
        if scan.data_bytes <= MAX_FULL_DATA_BYTES:
            yield _full_page(report, scan, lang)
            return
    from omk.report import html_paged

    yield from html_paged.page_pieces(report, lang)


def render_html(report: ReportDocument | Mapping[str, Any], lang: str = "en") -> str:
    return "".join(page_pieces(ReportDocument.of(report), lang))


def _full_page(report: ReportDocument, scan: FirstPass, lang: str) -> str:
    """Every row and every detail panel, failed and errored results first, each group in run order.

    A panel's id is its result's place in the run (`#sample-N`), so links stay the same whatever the order."""
    threshold, repeated = report.summary.threshold, scan.repeated
    failing: list[tuple[str, str]] = []
    passing: list[tuple[str, str]] = []
    for i, r in enumerate(report.results):
        group = passing if _state(r) == "passed" else failing
        group.append((table_row(i, r, repeated, threshold, lang), detail_panel(i, r, repeated, lang)))
    ordered = failing + passing
    chart = scan.histogram.svg(threshold, lang)
    opening, scripts = page_opening(report, lang, chart, assets.text("report.css"), assets.text("report.js"))
    return (
        opening + f"<h2>{esc(t('Results', lang))}</h2>{_table(''.join(row for row, _ in ordered), repeated, lang)}"
        '<div id="details">' + "".join(panel for _, panel in ordered) + "</div>" + page_closing(scripts)
    )


def write_html(out_dir: Path, report: ReportDocument | Mapping[str, Any], lang: str = "en") -> Path:
    """Write report.html into `out_dir`, piece by piece, into a temporary file renamed at the end
    (a reader never sees half a page)."""
    path = out_dir / "report.html"
    from omk.io.fileio import open_atomic

    with open_atomic(path) as f:
        f.writelines(page_pieces(ReportDocument.of(report), lang))
    return path
