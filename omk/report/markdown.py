"""`summary.md`: a short Markdown summary fit for a CI job summary ($GITHUB_STEP_SUMMARY).

An experiment's summary (a report with an `experiment` block) is the verdict and the variants
side by side instead, fit for a pull request (omk/report/experiment_markdown.py).

GitHub and GitLab render inline HTML in Markdown, so every value from a run (outputs and
messages are untrusted) is escaped for both Markdown tables and HTML.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from omk.report import _legacy_categories as categories
from omk.report import _legacy_experiment as experiment
from omk.report import _legacy_pairwise as pairwise
from omk.report._legacy_reasons import (
    failure_lines,
    is_repeated,
    repeats_line,
    result_name,
    skipped_judge_line,
    turn_label,
)
from omk.report.document import ReportDocument
from omk.report.i18n import t

MAX_CELL = 300


def cell(value: Any) -> str:
    """One table cell: no line breaks, no pipes, no live HTML, not too long."""
    text = "—" if value is None else str(value)
    text = " ".join(text.split())
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 1] + "…"
    return html.escape(text, quote=False).replace("|", "\\|").replace("`", "\\`")


def _score(v: Any) -> str:
    return "—" if v is None else f"{v:.2f}"


def render_markdown(report: dict[str, Any], lang: str = "en") -> str:
    if (exp := experiment.block(report)) is not None:  # an experiment: the verdict and the variants
        from omk.report import experiment_markdown

        return experiment_markdown.render(report, exp, lang, cell)
    summary = report.get("summary") or {}
    out = _head(report, lang)
    if line := repeats_line(report):
        out += [cell(line), ""]
    out += categories.markdown_lines(report, lang, cell)
    out += pairwise.markdown_lines(report, lang, cell)
    results = report.get("results") or []
    out += _failures(results, summary.get("threshold"), lang)
    if line := skipped_judge_line(summary, lang):
        out += [line, ""]
    out += _all_results(results, lang)
    return "\n".join(out)


def _head(report: dict[str, Any], lang: str) -> list[str]:
    """The verdict, the target and judge, and the run's scores, cost and duration."""
    summary = report.get("summary") or {}
    scores = summary.get("scores") or {}
    threshold = summary.get("threshold")
    verdict = "✅ " + t("gate passed", lang) if summary.get("gate_passed") else "❌ " + t("gate failed", lang)
    target = report.get("target") or {}
    judge = report.get("judge")
    return [
        f"## omk · {cell(report.get('run_id'))}",
        "",
        f"**{verdict}** · {summary.get('passed', 0)}/{summary.get('total', 0)} {t('passed', lang)}"
        f" · {summary.get('failed', 0)} {t('failed', lang)} · {summary.get('errored', 0)} {t('errored', lang)}",
        "",
        f"{t('target', lang)}: `{cell(target.get('spec') or target.get('kind'))}` · "
        f"{t('judge', lang)}: {cell(', '.join(map(str, judge.get('models') or [])) if judge else t('none', lang))}"
        + (f" · {t('threshold', lang)} {threshold:g}" if threshold is not None else ""),
        "",
        "| fact | behavior | judge | composite | " + t("cost", lang) + " | " + t("duration", lang) + " |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {_score(scores.get('fact'))} | {_score(scores.get('behavior'))} | {_score(scores.get('judge'))} | "
        f"{_score(scores.get('composite'))} | "
        + ("—" if summary.get("cost_usd") is None else f"${summary['cost_usd']:.4f}")
        + f" | {(summary.get('duration_ms') or 0) / 1000:.1f} s |",
        "",
    ]


def _failures(results: list[dict[str, Any]], threshold: float | None, lang: str) -> list[str]:
    bad = [r for r in results if not r.get("passed")]
    if not bad:
        return []
    repeated = is_repeated(results)
    out = [f"### {t('Failures', lang)} ({len(bad)})", "", f"| {t('sample', lang)} | composite | {t('why', lang)} |", "| --- | ---: | --- |"]
    for r in bad:
        composite = "error" if r.get("status") == "error" else _score((r.get("scores") or {}).get("composite"))
        why = "; ".join(line.strip() for line in failure_lines(r, threshold)[:6])
        out.append(f"| {cell(result_name(r, repeated))} | {composite} | {cell(why)} |")
    return [*out, ""]


def _all_results(results: list[dict[str, Any]], lang: str) -> list[str]:
    """Every result in a folded table; beneath a conversation, one row per turn."""
    repeated = is_repeated(results)
    out = [
        f"<details><summary>{t('All results', lang)} ({len(results)})</summary>",
        "",
        f"| {t('sample', lang)} | {t('status', lang)} | fact | behavior | judge | composite | {t('pass', lang)} |",
        "| --- | --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    for r in results:
        sc = r.get("scores") or {}
        out.append(
            f"| {cell(result_name(r, repeated))} | {cell(r.get('status'))} | {_score(sc.get('fact'))} | "
            f"{_score(sc.get('behavior'))} | {_score(sc.get('judge'))} | "
            f"{_score(sc.get('composite')) if r.get('status') == 'ok' else '—'} | {'✅' if r.get('passed') else '❌'} |"
        )
        for turn in r.get("turns") or []:
            ts = turn.get("scores") or {}
            mark = {True: "✅", False: "❌"}.get(turn.get("passed"), "·")
            graded = turn.get("status") == "ok" and turn.get("passed") is not None
            out.append(
                f"| ↳ {cell(turn_label(turn, lang=lang))} | {cell(turn.get('status'))} | {_score(ts.get('fact'))} | "
                f"{_score(ts.get('behavior'))} | {_score(ts.get('judge'))} | "
                f"{_score(ts.get('composite')) if graded else '—'} | {mark} |"
            )
    return [*out, "", "</details>", ""]


def write_markdown(out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
    from omk.fileio import write_atomic

    path = out_dir / "summary.md"
    write_atomic(path, render_markdown(dict(report.data), lang))
    return path
