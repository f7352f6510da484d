"""The by-capability table of every report format, from `summary.capabilities`
(omk/scoring/capabilities.py): per capability its samples, passed out of its results (runs under
`--repeat`), errored, the mean composite and the pass rate, each with its 95% interval or
`(1 sample, no interval)`. Short enough to fit a phone's width in the HTML page (report.json has
every count).

Reports with no capability (none named, or written before capabilities were counted) yield nothing
here, so re-rendering an old run still works.
"""

from __future__ import annotations

import html
from typing import Any

from omk.records.document import Capability, ReportDocument
from omk.report import intervals
from omk.report.i18n import t

TITLE = "By capability"


HEADS = ("samples", "passed", "errored", "composite", "pass rate")


def _cells(c: Capability, lang: str) -> list[str]:
    return [
        str(c.samples), f"{c.passed}/{c.total}", str(c.errored),
        intervals.score(c.composite, c.composite_ci, True, lang), intervals.rate(c.pass_rate, c.pass_rate_ci, True, lang),
    ]  # fmt: skip


def terminal_table(report: ReportDocument, lang: str = "en") -> Any:
    """A rich Table, or None when no capability is counted."""
    rows = report.summary.capabilities
    if not rows:
        return None
    from rich.text import Text

    from omk.io.textsafe import for_terminal
    from omk.report.plain import PlainTable as Table

    # narrower than the other formats, to fit 80 columns: the samples count goes (passed k/n
    # says the results), errored shows only when some errored; an interval wraps between words
    shown = [i for i, head in enumerate(HEADS) if head != "samples" and (head != "errored" or any(c.errored for c in rows))]
    table = Table(title=t(TITLE, lang), title_justify="left")
    table.add_column(t("capability", lang))
    for i in shown:
        table.add_column(t(HEADS[i], lang), justify="right")
    for c in rows:
        cells = _cells(c, lang)
        table.add_row(Text(for_terminal(c.capability)), *(cells[i] for i in shown))  # the sample's words, not markup
    return table


def markdown_lines(report: ReportDocument, lang: str, cell: Any) -> list[str]:
    """`cell` escapes one Markdown table cell (omk.report.markdown.cell)."""
    rows = report.summary.capabilities
    if not rows:
        return []
    heads = [t(h, lang) if h != "composite" else h for h in HEADS]
    out = [
        f"### {t(TITLE, lang)}",
        "",
        f"| {t('capability', lang)} | " + " | ".join(heads) + " |",
        "| --- |" + " ---: |" * len(heads),
    ]
    for c in rows:
        out.append(f"| {cell(c.capability)} | " + " | ".join(cell(v) for v in _cells(c, lang)) + " |")
    return [*out, ""]


def html_section(report: ReportDocument, lang: str) -> str:
    rows = report.summary.capabilities
    if not rows:
        return ""
    esc = html.escape
    head = "".join(f"<th>{esc(t(h, lang))}</th>" for h in ("capability", *HEADS))
    body = "".join(
        f"<tr><td>{esc(c.capability)}</td>" + "".join(f"<td>{esc(v)}</td>" for v in _cells(c, lang)) + "</tr>"
        for c in rows
    )
    return f'<h2>{esc(t(TITLE, lang))}</h2><table class="capabilities"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """`capability:<name>` = `passed/total`, and `capability_ci:<name>` = the composite's
    interval as `low,high` (`n<2` below 2 samples; absent with no composite)."""
    out = []
    for c in report.summary.capabilities:
        out.append((f"capability:{c.capability}", f"{c.passed}/{c.total}"))
        if c.composite is not None:
            out.append((f"capability_ci:{c.capability}", intervals.pair(c.composite_ci)))
    return out
