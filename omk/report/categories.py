"""The by-category table of every report format, from `summary.categories` (omk/scoring/categories.py).

Reports written before categories existed have none: every function here then yields nothing,
so re-rendering an old run still works.
"""

from __future__ import annotations

import html
from typing import Any

from omk.records.document import Category, ReportDocument
from omk.report import intervals
from omk.report.i18n import t

NONE = "(none)"  # the uncategorised, in every format (JUnit's `category:(none)` too)


def name(entry: Category, lang: str = "en") -> str:
    return entry.category or t(NONE, lang)


def _score(v: Any) -> str:
    return "—" if v is None else f"{v:.2f}"


def _with_intervals(rows: tuple[Category, ...]) -> bool:
    """Whether the report has the categories' intervals (reports from before them do not)."""
    return any(c.intervals for c in rows)


def _heads(rows: tuple[Category, ...]) -> tuple[str, ...]:
    heads = ("samples", "passed", "failed", "errored", "composite")
    return (*heads, "pass rate") if _with_intervals(rows) else heads


def _cells(c: Category, shown: bool, lang: str) -> list[str]:
    cells = [str(c.total), str(c.passed), str(c.failed), str(c.errored), intervals.score(c.composite, c.composite_ci, shown, lang)]
    return [*cells, intervals.rate(c.pass_rate, c.pass_rate_ci, shown, lang)] if shown else cells


def terminal_table(report: ReportDocument, lang: str = "en") -> Any:
    """A rich Table, or None when there are no categories."""
    rows = report.summary.categories
    if not rows:
        return None
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    # narrower than the other formats, to fit 80 columns: passed as k/n (failed is the rest),
    # errored only when some errored, and an interval never wraps
    shown = _with_intervals(rows)
    errored = any(c.errored for c in rows)
    heads = ("passed", *(("errored",) if errored else ()), "composite", *(("pass rate",) if shown else ()))
    table = Table(title=t("By category", lang), title_justify="left")
    table.add_column(t("category", lang))
    for col in heads:
        table.add_column(t(col, lang), justify="right", no_wrap=True)
    for c in rows:
        cells = _cells(c, shown, lang)
        table.add_row(name(c, lang), plain(f"{c.passed}/{c.total}"), *((str(c.errored),) if errored else ()), *cells[4:])
    return table


def markdown_lines(report: ReportDocument, lang: str, cell: Any) -> list[str]:
    """`cell` escapes one Markdown table cell (omk.report.markdown.cell)."""
    rows = report.summary.categories
    if not rows:
        return []
    heads = [t(h, lang) if h != "composite" else h for h in _heads(rows)]
    out = [
        f"### {t('By category', lang)}",
        "",
        f"| {t('category', lang)} | " + " | ".join(heads) + " |",
        "| --- |" + " ---: |" * len(heads),
    ]
    shown = _with_intervals(rows)
    for c in rows:
        out.append(f"| {cell(name(c, lang))} | " + " | ".join(_cells(c, shown, lang)) + " |")
    return [*out, ""]


def html_section(report: ReportDocument, lang: str) -> str:
    rows = report.summary.categories
    if not rows:
        return ""
    esc = html.escape
    head = "".join(f"<th>{esc(t(h, lang))}</th>" for h in ("category", *_heads(rows)))
    shown = _with_intervals(rows)
    body = "".join(
        f"<tr><td>{esc(name(c, lang))}</td>" + "".join(f"<td>{esc(v)}</td>" for v in _cells(c, shown, lang)) + "</tr>"
        for c in rows
    )
    return f'<h2>{esc(t("By category", lang))}</h2><table class="categories"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """`category:<name>` = `passed/total` for the suite's properties, and `category_ci:<name>` =
    its composite's interval (`low,high`, `n<2`) when the report has intervals and a composite."""
    out = []
    for c in report.summary.categories:
        out.append((f"category:{c.category or NONE}", f"{c.passed}/{c.total}"))
        if c.intervals and c.composite is not None:
            out.append((f"category_ci:{c.category or NONE}", intervals.pair(c.composite_ci)))
    return out
