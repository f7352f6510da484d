"""The by-category table of every report format, from `summary.categories` (omk/scoring/categories.py).

Reports written before categories existed have none: every function here then yields nothing,
so re-rendering an old run still works.
"""

from __future__ import annotations

import html
from typing import Any

from omk.records.document import Category, ReportDocument
from omk.report.i18n import t

NONE = "(none)"  # the uncategorised, in every format (JUnit's `category:(none)` too)


def name(entry: Category, lang: str = "en") -> str:
    return entry.category or t(NONE, lang)


def _score(v: Any) -> str:
    return "—" if v is None else f"{v:.2f}"


def terminal_table(report: ReportDocument, lang: str = "en") -> Any:
    """A rich Table, or None when there are no categories."""
    rows = report.summary.categories
    if not rows:
        return None
    from rich.table import Table

    table = Table(title=t("By category", lang), title_justify="left")
    table.add_column(t("category", lang), overflow="fold")
    for col in ("samples", "passed", "failed", "errored", "composite"):
        table.add_column(t(col, lang), justify="right")
    for c in rows:
        table.add_row(name(c, lang), str(c.total), str(c.passed), str(c.failed), str(c.errored), _score(c.composite))
    return table


def markdown_lines(report: ReportDocument, lang: str, cell: Any) -> list[str]:
    """`cell` escapes one Markdown table cell (omk.report.markdown.cell)."""
    rows = report.summary.categories
    if not rows:
        return []
    out = [
        f"### {t('By category', lang)}",
        "",
        f"| {t('category', lang)} | {t('samples', lang)} | {t('passed', lang)} | {t('failed', lang)} | {t('errored', lang)} | composite |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in rows:
        out.append(f"| {cell(name(c, lang))} | {c.total} | {c.passed} | {c.failed} | {c.errored} | {_score(c.composite)} |")
    return [*out, ""]


def html_section(report: ReportDocument, lang: str) -> str:
    rows = report.summary.categories
    if not rows:
        return ""
    esc = html.escape
    head = "".join(f"<th>{esc(t(h, lang))}</th>" for h in ("category", "samples", "passed", "failed", "errored", "composite"))
    body = "".join(
        f"<tr><td>{esc(name(c, lang))}</td><td>{c.total}</td><td>{c.passed}</td><td>{c.failed}</td>"
        f"<td>{c.errored}</td><td>{_score(c.composite)}</td></tr>"
        for c in rows
    )
    return f'<h2>{esc(t("By category", lang))}</h2><table class="categories"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """`category:<name>` = `passed/total` for the suite's properties."""
    return [(f"category:{c.category or NONE}", f"{c.passed}/{c.total}") for c in report.summary.categories]
