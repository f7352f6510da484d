"""The `budget` block in every report format: the limit, the spend, and the runs the budget left
undone (report.json `budget`, docs/run.md)."""

from __future__ import annotations

import html

from omk.records.document import ReportDocument
from omk.report.i18n import t

SHOWN = 20  # runs not started named in full; the rest are counted


def headline(report: ReportDocument, lang: str) -> str | None:
    """One line: what was spent of the budget, and how many runs it left undone (None: no budget)."""
    budget = report.budget
    if budget is None:
        return None
    spent = t("budget: ${spent} spent of ${limit}", lang).format(spent=f"{budget.spent_usd:.4f}", limit=f"{budget.limit_usd:.4f}")
    if not budget.stopped:
        return spent
    return spent + " · " + t("budget reached: {n} run(s) not started (resume with --resume)", lang).format(n=len(budget.not_run))


def not_run_names(report: ReportDocument) -> list[str]:
    """`sample_id` (with `#repeat` when the run repeated) of each run not started, the first SHOWN."""
    budget = report.budget
    if budget is None:
        return []
    names = [n.sample_id if report.summary.repeat <= 1 else f"{n.sample_id}#{n.repeat}" for n in budget.not_run]
    return names[:SHOWN] + ([f"… +{len(names) - SHOWN}"] if len(names) > SHOWN else [])


def markdown_lines(report: ReportDocument, lang: str, cell: object) -> list[str]:
    if (line := headline(report, lang)) is None:
        return []
    names = not_run_names(report)
    escape = cell if callable(cell) else str
    listed = f" — {t('not run', lang)}: " + ", ".join(f"`{escape(n)}`" for n in names) if names else ""
    return [f"**{escape(line)}**{listed}", ""]


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    budget = report.budget
    if budget is None:
        return []
    found = [("budget_usd", f"{budget.limit_usd}"), ("budget_spent_usd", f"{budget.spent_usd}")]
    if budget.stopped:
        found.append(("budget_not_run", ",".join(f"{n.sample_id}#{n.repeat}" for n in budget.not_run)))
    return found


def html_section(report: ReportDocument, lang: str) -> str:
    if (line := headline(report, lang)) is None:
        return ""
    names = not_run_names(report)
    listed = f"<p>{html.escape(t('not run', lang))}: {html.escape(', '.join(names))}</p>" if names else ""
    css = "warn" if report.budget is not None and report.budget.stopped else ""
    return f'<section id="budget"><p class="{css}">{html.escape(line)}</p>{listed}</section>'
