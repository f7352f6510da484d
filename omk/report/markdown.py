"""`summary.md`: a short Markdown summary fit for a CI job summary ($GITHUB_STEP_SUMMARY).

An experiment's summary (a report with an `experiment` block) is the verdict and the variants
side by side instead, fit for a pull request (omk/report/experiment_markdown.py).

GitHub and GitLab render inline HTML in Markdown, so every value from a run (outputs and
messages are untrusted) is escaped for both Markdown tables and HTML, its bidirectional controls
shown as `\\u202e`; a link to anything but http, https or mailto (`[x](javascript:…)`) is left
as text in the whole summary.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omk.io.textsafe import safe_markdown_links, show_bidi
from omk.records.document import ReportDocument
from omk.records.result import Scores
from omk.report import (
    budget,
    capabilities,
    categories,
    drift,
    gold,
    intervals,
    pairwise,
    reliability,
    triggering,
    unsupported,
)
from omk.report.i18n import reason_text, shard_label, t
from omk.report.reasons import (
    cached_line,
    failure_lines,
    result_name,
    skipped_judge_line,
    turn_label,
    workspace_line,
)

MAX_CELL = 300
ROWS_SHOWN = 1000  # rows per table: a CI job summary has a size limit; every result is in the other reports


def cell(value: Any) -> str:
    """One table cell: no line breaks, no pipes, no live HTML, not too long."""
    text = "—" if value is None else str(value)
    text = " ".join(text.split())
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 1] + "…"
    return show_bidi(html.escape(text, quote=False)).replace("|", "\\|").replace("`", "\\`")


def _score(v: Any) -> str:
    return "—" if v is None else f"{v:.2f}"


def render_markdown(report: ReportDocument | Mapping[str, Any], lang: str = "en") -> str:
    """The summary's text, with every link to an unsafe scheme left as text."""
    return safe_markdown_links(_render(ReportDocument.of(report), lang))


def _render(report: ReportDocument, lang: str) -> str:
    if report.experiment is not None:  # an experiment: the verdict and the variants
        from omk.report import experiment_markdown

        return experiment_markdown.render(report, report.experiment, lang, cell)
    out = _head(report, lang)
    out += budget.markdown_lines(report, lang, cell)
    out += reliability.markdown_lines(report.repeats, lang, cell)
    out += categories.markdown_lines(report, lang, cell)
    out += capabilities.markdown_lines(report, lang, cell)
    out += triggering.markdown_lines(report, lang, cell)
    out += gold.markdown_lines(report, lang, cell)
    out += pairwise.markdown_lines(report, lang, cell)
    out += _failures(report, lang)
    out += drift.markdown_lines(report, lang, cell)
    out += unsupported.markdown_lines(report, lang, cell)
    if line := skipped_judge_line(report.summary, lang):
        out += [line, ""]
    if line := cached_line(report.summary, lang):
        out += [cell(line), ""]
    out += _all_results(report, lang)
    return "\n".join(out)


def _head(report: ReportDocument, lang: str) -> list[str]:
    """The verdict, the target and judge, and the run's scores, cost and duration."""
    summary = report.summary
    threshold = summary.threshold

    def at(name: str) -> str:
        return cell(intervals.layer(summary, name, lang))

    verdict = "✅ " + t("gate passed", lang) if summary.gate_passed else "❌ " + t("gate failed", lang)
    judge = ", ".join(report.judge_models) if report.judge_models is not None else t("none", lang)
    return [
        f"## omk · {cell(report.run_id)}",
        "",
        *([f"**{cell(shard_label(report.shard, lang))}**", ""] if report.shard is not None else []),
        f"**{verdict}** · {summary.passed}/{summary.total} {t('passed', lang)}"
        f" · {summary.failed} {t('failed', lang)} · {summary.errored} {t('errored', lang)}",
        "",
        f"{t('target', lang)}: `{cell(report.target.name)}` · {t('judge', lang)}: {cell(judge)}"
        + (f" · {t('threshold', lang)} {threshold:g}" if threshold is not None else ""),
        "",
        "| fact | behavior | judge | composite | " + t("cost", lang) + " | " + t("duration", lang) + " |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {at('fact')} | {at('behavior')} | {at('judge')} | "
        f"{at('composite')} | "
        + ("—" if summary.cost_usd is None else f"${summary.cost_usd:.4f}")
        + f" | {(summary.duration_ms or 0) / 1000:.1f} s |",
        "",
        *[f"{line}  " for line in (intervals.pass_rate_line(summary, lang), intervals.variance_line(summary, lang)) if line],
        *([""] if summary.scores_ci is not None else []),
    ]


def _failures(report: ReportDocument, lang: str) -> list[str]:
    """The results that did not pass, with why: the first `ROWS_SHOWN` of them."""
    repeated, threshold = report.repeated, report.summary.threshold
    rows: list[tuple[str, str, str, str | None]] = []
    more = 0
    for r in report.results:
        if r.passed:
            continue
        if len(rows) >= ROWS_SHOWN:
            more += 1
            continue
        composite = "error" if r.status == "error" else _score(r.scores.composite)
        why = "; ".join(reason_text(line.strip(), lang) for line in failure_lines(r, threshold)[:6])
        rows.append((result_name(r, repeated), composite, why, workspace_line(r.trace.workspace, lang=lang)))
    if not rows:
        return []
    # what the agent left in its workspace is a fact beside the reasons, in a column of its own
    facts = any(where is not None for *_, where in rows)
    heads = [t("sample", lang), "composite", t("why", lang), *([t("workspace", lang)] if facts else [])]
    out = [
        f"| {cell(name)} | {composite} | {cell(why)} |" + (f" {cell(_fact(where))} |" if facts else "")
        for name, composite, why, where in rows
    ]
    head = [f"### {t('Failures', lang)} ({len(out) + more})", "", "| " + " | ".join(heads) + " |", "| --- | ---: | --- |" + (" --- |" if facts else "")]
    return [*head, *out, *_more(more, lang), ""]


def _fact(where: str | None) -> str:
    """The workspace line without its `workspace: ` lead (the column says it)."""
    if where is None:
        return "—"
    _, colon, rest = where.replace("：", ": ", 1).partition(": ")
    return rest if colon else where


def _more(n: int, lang: str) -> list[str]:
    return ["", t("… and {n} more: see report.html or report.json", lang).format(n=n)] if n else []


def _all_results(report: ReportDocument, lang: str) -> list[str]:
    """Every result (the first `ROWS_SHOWN` of a large run) in a folded table; beneath a
    conversation, one row per turn."""
    repeated = report.repeated
    out = [
        f"<details><summary>{t('All results', lang)} ({len(report.results)})</summary>",
        "",
        f"| {t('sample', lang)} | {t('status', lang)} | fact | behavior | judge | composite | {t('pass', lang)} |",
        "| --- | --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    for n, r in enumerate(report.results):
        if n == ROWS_SHOWN:
            break
        status = f"{r.status} · {t('from the cache', lang)}" if r.cached else r.status
        out.append(_row(cell(result_name(r, repeated)), status, r.scores, r.status == "ok", "✅" if r.passed else "❌"))
        for turn in r.turns:
            mark = "·" if turn.passed is None else "✅" if turn.passed else "❌"
            graded = turn.status == "ok" and turn.passed is not None
            out.append(_row(f"↳ {cell(turn_label(turn, lang=lang))}", turn.status, turn.scores, graded, mark))
    return [*out, *_more(max(len(report.results) - ROWS_SHOWN, 0), lang), "", "</details>", ""]


def _row(name: str, status: str | None, sc: Scores, graded: bool, mark: str) -> str:
    return (
        f"| {name} | {cell(status)} | {_score(sc.fact)} | {_score(sc.behavior)} | {_score(sc.judge)} | "
        f"{_score(sc.composite) if graded else '—'} | {mark} |"
    )


def write_markdown(out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
    from omk.io.fileio import write_atomic

    path = out_dir / "summary.md"
    write_atomic(path, render_markdown(report, lang))
    return path
