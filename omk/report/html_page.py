"""The pieces of `report.html`, shared by the full page (omk/report/html_report.py) and the large
run's page (omk/report/html_paged.py): escaping, badges, the score chart, the table's rows and
heads, the detail panels, the page's head with its policy, and its opening and closing."""

from __future__ import annotations

import base64
import hashlib
import html
from typing import Any

from omk.records.document import ReportDocument, Summary
from omk.records.result import SampleResult
from omk.report import (
    assets,
    budget,
    capabilities,
    categories,
    gold,
    html_panel,
    intervals,
    pairwise,
    reliability,
    triggering,
)
from omk.report.html_panel import num as _num
from omk.report.html_panel import panel, to_html
from omk.report.html_panel import state as _state
from omk.report.i18n import shard_label, t
from omk.report.reasons import cached_line, skipped_judge_line


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def badge(state: str, lang: str) -> str:
    return to_html(html_panel.badge(state, lang), False)


# ---------------------------------------------------------------- summary and chart


def _ci(summary: Summary, key: str, lang: str) -> str:
    """A layer card's 95% interval line; nothing in a report from before intervals."""
    if summary.scores_ci is None or summary.scores.layer(key) is None:
        return ""
    ci = summary.scores_ci.layer(key)
    text = t(intervals.NO_INTERVAL, lang) if ci is None else f"95% [{float(ci.low):.2f}, {float(ci.high):.2f}]"
    return f'<small class="ci">{esc(text)}</small>'


def _interval_lines(summary: Summary, lang: str) -> str:
    lines = [x for x in (intervals.pass_rate_line(summary, lang), intervals.variance_line(summary, lang)) if x]
    return "".join(f'<p class="intervals">{esc(x)}</p>' for x in lines)


def _layer_cards(summary: Summary, lang: str) -> str:
    cards = []
    for key in ("composite", "fact", "behavior", "judge"):
        v = summary.scores.layer(key)
        width = 0 if v is None else max(0.0, min(100.0, (v - 1) / 4 * 100))
        cards.append(
            f'<div class="card" data-layer="{key}"><small>{esc(t(key, lang))}</small><b>{_num(v)}</b>{_ci(summary, key, lang)}'
            f'<div class="bar"><i style="width:{width:.0f}%"></i></div></div>'
        )
    cost = summary.cost_usd
    counts = [
        (t("samples", lang), summary.total),
        (t("passed", lang), summary.passed),
        (t("failed", lang), summary.failed),
        (t("errored", lang), summary.errored),
        (t("cost", lang), "—" if cost is None else f"${cost:.4f}"),
        (t("duration", lang), f"{(summary.duration_ms or 0) / 1000:.1f} s"),
    ]
    cards += [f'<div class="card"><small>{esc(k)}</small><b>{esc(v)}</b></div>' for k, v in counts]
    return '<div class="cards">' + "".join(cards) + "</div>"


class Histogram:
    """The composites of graded results in half-point bins from 1 to 5, plus errors, counted one
    result at a time."""

    EDGES = tuple(1 + 0.5 * i for i in range(9))

    def __init__(self) -> None:
        self.bins = [0] * 8
        self.errors = 0

    def add(self, r: SampleResult) -> None:
        if r.status == "error":
            self.errors += 1
            return
        v = r.scores.composite
        if v is None or v <= 0:
            return
        self.bins[min(7, max(0, int((v - 1) // 0.5)))] += 1

    def svg(self, threshold: float | None, lang: str) -> str:
        """The chart as inline SVG."""
        edges = self.EDGES
        labels = [f"{edges[i]:g}–{edges[i + 1]:g}" for i in range(8)] + [t("error", lang)]
        values = [*self.bins, self.errors]
        w, h, pad, bw = 520, 180, 28, 52
        top = max(values) or 1
        parts = [
            f'<svg id="score-chart" role="img" aria-label="{esc(t("score distribution", lang))}" '
            f'width="{w}" height="{h + 40}" viewBox="0 0 {w} {h + 40}" xmlns="http://www.w3.org/2000/svg">'
        ]
        for i, (lab, v) in enumerate(zip(labels, values, strict=True)):
            x = pad + i * (bw + 4)
            bh = 0 if not v else max(2, v / top * (h - 20))
            color = "#bf8700" if i == 8 else ("#1a7f37" if threshold is not None and edges[i] >= threshold else "#0969da")
            parts.append(
                f'<rect class="bin" data-count="{v}" x="{x}" y="{h - bh:.1f}" width="{bw}" height="{bh:.1f}" fill="{color}">'
                f"<title>{esc(lab)}: {v}</title></rect>"
            )
            if v:
                parts.append(f'<text x="{x + bw / 2}" y="{h - bh - 4:.1f}" text-anchor="middle">{v}</text>')
            parts.append(f'<text x="{x + bw / 2}" y="{h + 16}" text-anchor="middle">{esc(lab)}</text>')
        if threshold is not None and 1 <= threshold <= 5:
            tx = pad + (threshold - 1) / 0.5 * (bw + 4)
            parts.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="0" y2="{h}" stroke="#cf222e" stroke-dasharray="4 3"/>')
            parts.append(f'<text x="{tx + 4:.1f}" y="12">{esc(t("threshold", lang))} {threshold:g}</text>')
        parts.append(f'<line x1="{pad}" x2="{w - 4}" y1="{h}" y2="{h}" stroke="#d0d7de"/>')
        parts.append(f'<text x="{pad}" y="{h + 34}">{esc(t("composite", lang))}</text></svg>')
        return "".join(parts)


# ---------------------------------------------------------------- sample table


def table_row(i: int, r: SampleResult, has_repeat: bool, threshold: float | None, lang: str) -> str:
    sc = r.scores
    state = _state(r)
    composite = sc.composite if r.status == "ok" else None

    def score_cell(key: str, v: Any) -> str:
        cls = "" if v is None or threshold is None else (" ok" if v >= threshold else " bad")
        return f'<td class="num{cls}" data-label="{esc(t(key, lang))}" data-v="{"" if v is None else v}">{_num(v)}</td>'

    search = " ".join(str(x) for x in (r.sample_id, state, *r.capability, r.difficulty or "")).lower()
    cells = [f'<td data-v="{esc(r.sample_id)}"><code>{esc(r.sample_id)}</code></td>']
    if has_repeat:
        cells.append(f'<td class="num" data-label="{esc(t("repeat", lang))}" data-v="{r.repeat}">{esc(r.repeat)}</td>')
    cells.append(f'<td data-label="{esc(t("status", lang))}" data-v="{state}">{badge(state, lang)}</td>')
    cells += [score_cell(k, v) for k, v in (("fact", sc.fact), ("behavior", sc.behavior), ("judge", sc.judge))]
    cells.append(score_cell("composite", composite))
    cost, latency = r.trace.cost_usd, r.trace.latency_ms
    cost_text, latency_text = "—" if cost is None else f"${cost:.4f}", "—" if latency is None else f"{latency:.0f} ms"
    cells.append(f'<td class="num" data-label="{esc(t("cost", lang))}" data-v="{"" if cost is None else cost}">{cost_text}</td>')
    cells.append(
        f'<td class="num" data-label="{esc(t("latency", lang))}" data-v="{"" if latency is None else latency}">{latency_text}</td>'
    )
    return (
        f'<tr data-detail="sample-{i}" data-state="{state}" data-search="{esc(search)}">' + "".join(cells) + "</tr>"
    )


ORDER_NOTE = "Failed and errored samples first, then passed ones, each group in run order; click a column to sort."


def table_heads(has_repeat: bool, lang: str) -> str:
    """The results table's header cells."""
    heads = [(t("sample", lang), "")]
    if has_repeat:
        heads.append((t("repeat", lang), "num"))
    heads += [(t("status", lang), "")] + [(t(k, lang), "num") for k in ("fact", "behavior", "judge", "composite")]
    heads += [(t("cost", lang), "num"), (t("latency", lang), "num")]
    return "".join(f'<th class="{cls}">{esc(name)}</th>' for name, cls in heads)


def table_controls(lang: str, placeholder: str = "filter by sample id, capability…") -> str:
    """The text filter and the status filter above the results table (without their closing tag)."""
    options = "".join(
        f'<option value="{v}">{esc(t(label_, lang))}</option>'
        for v, label_ in (("", "all"), ("passed", "passed"), ("failed", "failed"), ("errored", "errored"))
    )
    return (
        '<div class="controls">'
        f'<input id="filter" type="search" placeholder="{esc(t(placeholder, lang))}" '
        f'aria-label="{esc(t("filter", lang))}">'
        f'<select id="status-filter" aria-label="{esc(t("status", lang))}">{options}</select>'
        '<span id="count"></span>'
    )


def _table(rows: str, has_repeat: bool, lang: str) -> str:
    return (
        table_controls(lang) + "</div>"
        f'<table id="results"><caption>{esc(t(ORDER_NOTE, lang))}</caption>'
        f"<thead><tr>{table_heads(has_repeat, lang)}</tr></thead><tbody>{rows}</tbody></table>"
    )


# ---------------------------------------------------------------- detail panels


def detail_panel(i: int, r: SampleResult, repeated: bool, lang: str) -> str:
    """Result `i`'s panel (omk/report/html_panel.py), hidden until its row is opened."""
    inner = "".join(to_html(node, repeated) for node in panel(i, r, lang))
    return f'<article class="detail" id="sample-{i}" hidden>{inner}</article>'


# ---------------------------------------------------------------- the page


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def _policy(scripts: list[str]) -> str:
    """The page's Content-Security-Policy: nothing from outside, and only `scripts` may run."""
    hashes = " ".join(f"'{_script_hash(js)}'" for js in scripts)
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {hashes}; base-uri 'none'; form-action 'none'"


def report_policy() -> str:
    """The policy any page this omk renders is served under (`omk view`): every script omk's
    report pages carry, allowed by hash, and no other."""
    return _policy([assets.text(name) for name in ("report.js", "paged.js", "experiment.js")])


def page_opening(report: ReportDocument, lang: str, chart: str, css: str, js: str) -> tuple[str, list[str]]:
    """The page from its head to the score chart, and the scripts it allows (its own `js` first)."""
    summary = report.summary
    verdict = (
        f'<span class="badge pass">{esc(t("gate passed", lang))}</span>'
        if summary.gate_passed
        else f'<span class="badge fail">{esc(t("gate failed", lang))}</span>'
    )
    exp = report.experiment
    scripts, lead, heading = [js], "", t("Summary", lang)
    if exp is not None:  # an experiment: its verdict heads the page, the control's run follows
        from omk.report import experiment_html

        verdict = experiment_html.level_badge(exp.verdict.level)
        css, scripts = css + assets.text("experiment.css"), [js, assets.text("experiment.js")]
        lead = experiment_html.section(report, exp, lang)
        heading += f" · {t('control', lang)}: {exp.control}"
    return (
        _page_head(report, css, scripts, verdict, lang) + f"<main>{lead}"
        f"<h2>{esc(heading)}</h2>{_layer_cards(summary, lang)}{_interval_lines(summary, lang)}"
        + (f'<p class="warn">{esc(skipped)}</p>' if (skipped := skipped_judge_line(summary, lang)) else "")
        + (f'<p class="warn">{esc(cached)}</p>' if exp is None and (cached := cached_line(summary, lang)) else "")  # an experiment's counts every variant, above
        + budget.html_section(report, lang)
        + reliability.html_section(report.repeats, lang)
        + categories.html_section(report, lang)
        + capabilities.html_section(report, lang)
        + triggering.html_section(report, lang)
        + gold.html_section(report, lang)
        + pairwise.html_section(report, lang)
        + f"<h2>{esc(t('score distribution', lang))}</h2>"
        f'<div class="charts">{chart}</div>'
    ), scripts


def page_closing(scripts: list[str]) -> str:
    return "</main>" + "".join(f"<script>{js}</script>" for js in scripts) + "</body></html>\n"


def _page_head(report: ReportDocument, css: str, scripts: list[str], verdict: str, lang: str) -> str:
    """The document head (its policy allows the page's own scripts by hash) and the page header."""
    judge_text = ", ".join(report.judge_models) if report.judge_models is not None else t("none", lang)
    meta = [
        ("run", report.run_id),
        (t("target", lang), report.target.name),
        (t("judge", lang), judge_text),
        ("started", report.started_at),
        ("finished", report.finished_at),
        ("omk", report.omk_version),
        ("samples", ", ".join(report.samples_files)),
        *([(t("shard", lang), shard_label(report.shard, lang))] if report.shard is not None else []),
    ]
    csp = _policy(scripts)
    page_lang = "zh-CN" if lang == "zh" else "en"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{page_lang}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>omk report {esc(report.run_id)}</title><style>{css}</style></head><body>"
        f"<header><h1>omk report {verdict}</h1>"
        '<div class="meta">' + "".join(f"<span>{esc(k)}: <b>{esc(v)}</b></span>" for k, v in meta if v) + "</div></header>"
    )
