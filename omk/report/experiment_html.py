"""The experiment section of `report.html`: the verdict, the variants in columns, and per
treatment its paired measures, a chart of the per-sample changes with the confidence interval
(inline SVG), and a sortable table of those changes.

Everything from the run goes through `esc()` here, on the server side; the section's script
(omk/report/assets/experiment.js, allowed by its hash in the page's Content-Security-Policy) only
reorders rows that are already rendered.
"""

from __future__ import annotations

import html
import math
from typing import Any
from urllib.parse import quote

from omk.records.document import ReportDocument
from omk.records.experiment_block import Comparison, ExperimentBlock, PerSample, Verdict
from omk.report import ablation, i18n
from omk.report import experiment_tables as ex

LEVEL_CLASS = {
    "PROGRESS": "progress",
    "CAUTIOUS": "cautious",
    "REGRESS": "regress",
    "NOISE": "noise",
    "UNDERPOWERED": "underpowered",
    "SOLO": "solo",
}


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def level_badge(level: Any) -> str:
    cls = LEVEL_CLASS.get(str(level), "noise")
    return f'<span class="badge lvl lvl-{cls}">{esc(level)}</span>'


def section(report: ReportDocument, exp: ExperimentBlock, lang: str) -> str:
    parts = [
        f'<section id="experiment"><h2>{esc(i18n.t("Experiment", lang))}</h2>',
        _verdict(exp, lang),
        _variants(exp, lang),
        f'<p class="warn">{esc(cached)}</p>' if (cached := ex.cached_line(exp, lang)) else "",
        ablation.html_section(exp.ablation, lang),  # --ablate: each part of the skill ranked
    ]
    for i, comp in enumerate(exp.comparisons, 1):
        parts.append(_comparison(exp, comp, i, lang))
    parts.append(_variant_links(exp, lang))
    return "".join(parts) + "</section>"


def _verdict(exp: ExperimentBlock, lang: str = "en") -> str:
    v = exp.verdict
    cls = LEVEL_CLASS.get(str(v.level), "noise")
    context = "".join(f"<li>{esc(i18n.verdict_line(line.strip(), lang))}</li>" for line in v.lines[2:-1])
    out = (
        f'<div class="verdict lvl-{cls}" data-level="{esc(v.level)}">'
        f'<div class="vhead">{level_badge(v.level)} <b>{esc(i18n.verdict_text(_without_level(v), lang))}</b></div>'
        f'<p class="rec">{esc(i18n.verdict_text(v.recommendation, lang))}</p>'
        + (f"<ul>{context}</ul>" if context else "")
    )
    require = exp.require
    if require is not None:
        ok = require.passed
        out += (
            f'<p class="require {"ok" if ok else "bad"}"><code>--require {esc(require.policy)}</code>: '
            f'{esc(i18n.t("met" if ok else "NOT met", lang))} — {esc(i18n.verdict_text(require.reason or "", lang))}</p>'
        )
    return out + "</div>"


def _without_level(v: Verdict) -> str:
    """The headline after its `LEVEL · `, which the badge beside it already says."""
    headline, prefix = v.headline or "", f"{v.level} · "
    return headline[len(prefix) :] if headline.startswith(prefix) else headline


def _variants(exp: ExperimentBlock, lang: str) -> str:
    heads = "".join(
        f'<th class="num" data-variant="{esc(v.name)}">{esc(v.name)}<small>{esc(i18n.t(str(v.role), lang))}</small></th>'
        for v in exp.variants
    )
    rows = []
    for label, values in ex.variant_rows(exp, lang):
        if label == i18n.t("role", lang):
            continue
        cells = "".join(f'<td class="num{_gate_class(x)}">{esc(_gate_text(x, lang))}</td>' for x in values)
        rows.append(f"<tr><th>{esc(label)}</th>{cells}</tr>")
    return f'<table class="variants"><thead><tr><th></th>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _gate_text(value: str, lang: str) -> str:
    if value == "pass" or value.startswith("fail"):
        word = "pass" if value == "pass" else "fail"
        return i18n.t(word, lang, "gate") + value[len(word) :]
    return value


def _gate_class(value: str) -> str:
    return " ok" if value == "pass" else " bad" if value.startswith("fail") else ""


def _comparison(exp: ExperimentBlock, comp: Comparison, i: int, lang: str) -> str:
    pair = exp.pair_verdict(comp)
    t, c = esc(comp.treatment), esc(comp.control)
    heads = ["measure", "change", "95% CI", "wins / ties / losses", "effect size d_z", "detects ≥", "n"]
    head = "".join(f'<th{"" if h == "measure" else " class=num"}>{esc(i18n.t(h, lang))}</th>' for h in heads)
    rows = "".join(
        f'<tr data-measure="{esc(r.measure)}"><td>{esc(i18n.t(r.measure, lang))}</td>'
        f'<td class="num">{"<b>" + esc(r.mean) + "</b>" if r.significant else esc(r.mean)}</td>'
        f'<td class="num">{esc(r.ci)}</td><td class="num">{esc(r.wins_ties_losses)}</td>'
        f'<td class="num">{esc(r.effect)}</td><td class="num">{esc(r.mde)}</td><td class="num">{r.n}</td></tr>'
        for r in ex.measure_rows(comp)
    )
    return (
        f'<section class="comparison" id="comparison-{i}" data-treatment="{t}">'
        f"<h3>{t} vs {c} {level_badge(pair.level if pair else None)}</h3>"
        f'<p class="meta">{esc(i18n.verdict_text(pair.headline, lang) if pair else None)}<br>{esc(i18n.verdict_text(pair.recommendation, lang) if pair else None)}</p>'
        f'<table class="measures"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        f"<p>{esc(ex.pass_rate_text(comp, lang))} · {esc(ex.resources_text(comp, lang))}</p>"
        f'<p class="meta">{esc(ex.coverage_text(comp, lang))}</p>'
        f"{_figure(exp, comp, i, lang)}"
        f"<h4>{esc(i18n.t('Per-sample changes', lang))}</h4>{_regressed_line(comp, lang)}{_deltas(comp, i, lang)}"
        "</section>"
    )


def _regressed_line(comp: Comparison, lang: str = "en") -> str:
    n = len(comp.regressions)
    what = i18n.counted(n, "sample", "samples", lang) + " " + i18n.t("regressed (highlighted)", lang) if n else i18n.t("No sample regressed", lang)
    return f'<p class="meta regressed-count" data-count="{n}">{esc(what)}. {esc(i18n.t("Click a column to sort it; Δ sorts the worst first.", lang))}</p>'


def _deltas(comp: Comparison, i: int, lang: str) -> str:
    """Every shared sample: both composites, the change, what happened, whether it regressed."""
    t, c = str(comp.treatment), str(comp.control)
    why = {str(r.sample_id): ex.regression_why(r) for r in comp.regressions}
    cols = [(i18n.t("sample", lang), ""), (c, "num"), (t, "num"), ("Δ", "num"), (i18n.t("status", lang), ""), (i18n.t("regressed", lang), "")]
    head = "".join(f'<th class="{cls}">{esc(name)}</th>' for name, cls in cols)
    rows = []
    for n, s in enumerate(comp.per_sample):
        sid = str(s.sample_id)
        delta = s.delta
        outcome = f"{_state(s, 'control')} → {_state(s, 'treatment')}"
        cells = [
            f'<td data-v="{esc(sid)}"><code>{esc(sid)}</code></td>',
            _score_cell(None if s.control_errored else s.control),
            _score_cell(None if s.treatment_errored else s.treatment),
            f'<td class="num" data-v="{"" if delta is None else delta}">{esc(ex.signed(delta))}</td>',
            f'<td data-v="{esc(outcome)}">{_outcome(s, lang)}</td>',
            f'<td data-v="{esc(why.get(sid, ""))}">{esc(why.get(sid, ""))}</td>',
        ]
        cls = ' class="regressed"' if sid in why else ""
        rows.append(f'<tr data-i="{n}" data-sample="{esc(sid)}"{cls}>' + "".join(cells) + "</tr>")
    return (
        f'<table class="deltas sortable" id="deltas-{i}"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
    )


def _outcome(s: PerSample, lang: str = "en") -> str:
    cls = {"pass": "ok", "fail": "bad", "error": "warn"}
    sides = [_state(s, side) for side in ("control", "treatment")]
    return " → ".join(f'<span class="{cls[x]}">{esc(i18n.t(x, lang, "gate"))}</span>' for x in sides)


def _state(s: PerSample, side: str) -> str:
    if s.errored(side):
        return "error"
    return "pass" if s.passed(side) else "fail"


def _score_cell(v: Any) -> str:
    return f'<td class="num" data-v="{"" if v is None else v}">{esc(ex.num(v))}</td>'


def _variant_links(exp: ExperimentBlock, lang: str = "en") -> str:
    links = []
    for v in exp.variants:
        run = exp.runs.get(v.name)
        folder = run.report if run is not None else None
        href = f"{quote(folder)}/report.html" if folder else f"variants/{quote(v.name)}/report.html"
        links.append(f'<a href="{esc(href)}">{esc(v.name)}</a>')
    control = esc(exp.control)
    said = esc(i18n.t("The sections below are the control's run ({control}). Each variant's own report (when written as HTML):", lang))
    return f'<p class="meta">{said.format(control=control)} ' + " · ".join(links) + "</p>"


# ---------------------------------------------------------------- the chart


def _figure(exp: ExperimentBlock, comp: Comparison, i: int, lang: str = "en") -> str:
    trivial = float(exp.settings.trivial or 0.0)
    d = comp.composite
    t = esc(comp.treatment)
    tr = i18n.t
    ci_text = (
        '<span class="sw band"></span>'
        + esc(tr("shaded: the 95% confidence interval of the mean change, {low} to {high}; ", lang)).format(
            low=esc(ex.signed(d.ci_low)), high=esc(ex.signed(d.ci_high))
        )
        if d is not None and d.has_ci
        else esc(tr("no confidence interval (fewer than 2 samples scored on both sides); ", lang))
    )
    errored = sum(1 for s in comp.per_sample if s.delta is None)
    left_out = " " + esc(tr("{n} sample(s) without a score on both sides are not shown.", lang)).format(n=errored) if errored else ""
    caption = (
        esc(tr("Each dot is one sample:", lang)) + f' <span class="sw" style="background:{COLORS["win"]}"></span>'
        + esc(tr("better with {t}", lang)).format(t=t) + ", "
        f'<span class="sw" style="background:{COLORS["tie"]}"></span>{esc(tr("unchanged", lang))}, '
        f'<span class="sw" style="background:{COLORS["loss"]}"></span>{esc(tr("worse", lang))}. {ci_text}'
        + esc(tr("blue line: the mean change {mean}; black line: no change; dashed lines: ±{trivial}, the smallest change worth acting on.", lang)).format(
            mean=esc(ex.signed(d.mean if d is not None else None)), trivial=esc(ex.num(trivial))
        )
        + left_out
    )  # fmt: skip
    return f'<figure class="delta-chart">{delta_chart(comp, trivial, i, lang)}<figcaption>{caption}</figcaption></figure>'


COLORS = {"win": "#1a7f37", "tie": "#8c959f", "loss": "#cf222e"}
W, LEFT, RIGHT, TOP, AXIS = 760, 24, 24, 44, 46
MAX_PLOT = 240  # the dots' area grows with the tallest stack up to this height; then bars
MAX_DOTS = 250  # more samples than this read better as a histogram


def _domain(values: list[float], trivial: float) -> tuple[float, float]:
    """A symmetric axis around 0 that holds every value, the interval and ±trivial; its tick step."""
    reach = max([abs(v) * 1.06 for v in values] + [trivial * 1.5, 0.5])  # no dot on the frame
    step = 0.25 if reach <= 1 else 0.5 if reach <= 2.5 else 1.0
    return math.ceil(reach / step - 1e-9) * step, step


def _stacks(values: list[float], x: Any, r: float) -> list[int]:
    """The height (in dots) of each dot in a dot plot of columns 2r wide."""
    seen: dict[int, int] = {}
    heights = []
    for v in values:
        col = round((x(v) - LEFT) / (2 * r))
        heights.append(seen.get(col, 0))
        seen[col] = seen.get(col, 0) + 1
    return heights


def delta_chart(comp: Comparison, trivial: float, i: int = 1, lang: str = "en") -> str:
    """Inline SVG: each sample's composite change as a dot (stacked where they meet; a histogram
    for many samples or stacks too tall), the 95% interval as a band, 0, ±trivial and the mean."""
    d = comp.composite
    points = sorted(((float(s.delta), str(s.sample_id)) for s in comp.per_sample if s.delta is not None), key=lambda p: p[0])
    interval = (d.ci_low, d.ci_high) if d is not None and d.ci_low is not None and d.ci_high is not None else None
    mean = d.mean if d is not None else None
    bounds = [p[0] for p in points] + (list(interval) if interval else [])
    reach, step = _domain([float(b) for b in bounds if isinstance(b, int | float)], trivial)
    span = W - LEFT - RIGHT

    def x(v: float) -> float:
        return LEFT + (v + reach) / (2 * reach) * span

    r = 4.5
    heights = _stacks([p[0] for p in points], x, r)
    while heights and (max(heights) + 1) * 2 * r > MAX_PLOT and r > 2:
        r -= 0.5
        heights = _stacks([p[0] for p in points], x, r)
    bars = len(points) > MAX_DOTS or (bool(heights) and (max(heights) + 1) * 2 * r > MAX_PLOT)
    plot = MAX_PLOT if bars else max(90.0, (max(heights, default=0) + 1) * 2 * r + 8)
    base = TOP + plot
    t = esc(comp.treatment)
    label = esc(i18n.t("Per-sample composite change, {t} minus {c}: mean {mean}, 95% CI {ci}", lang)).format(t=t, c=esc(comp.control), mean=esc(ex.signed(mean)), ci=esc(ex.ci(d)))
    out = [
        f'<svg id="delta-chart-{i}" class="delta-chart" role="img" aria-label="{label}" width="{W}" '
        f'height="{base + AXIS:.0f}" viewBox="0 0 {W} {base + AXIS:.0f}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{LEFT}" y="14" style="font-size:12px;fill:var(--fg);font-weight:600">'
        + esc(i18n.t("How much each sample changed: {t} − {c} (composite, 1–5 scale)", lang)).format(t=t, c=esc(comp.control)) + "</text>",
    ]
    if interval:
        lo, hi = x(float(interval[0])), x(float(interval[1]))
        if hi - lo < 3:
            lo, hi = (lo + hi) / 2 - 1.5, (lo + hi) / 2 + 1.5
        out.append(
            f'<rect class="ci-band" data-low="{interval[0]}" data-high="{interval[1]}" x="{lo:.1f}" y="{TOP - 6}" '
            f'width="{hi - lo:.1f}" height="{plot + 6:.0f}" fill="#0969da" fill-opacity="0.13" stroke="#0969da" stroke-opacity="0.35">'
            f"<title>{esc(i18n.t('95% CI of the mean change', lang))}: {esc(ex.ci(d))}</title></rect>"
        )
    out += _guides(x, trivial, base, plot, lang)
    if mean is not None:  # under the dots, so that none hides behind it
        mx = x(float(mean))
        out.append(f'<line class="mean" x1="{mx:.1f}" x2="{mx:.1f}" y1="{TOP - 12}" y2="{base}" stroke="#0969da" stroke-width="2"/>')
        out.append(f'<text x="{mx:.1f}" y="{TOP - 16}" text-anchor="middle" style="fill:#0969da">{esc(i18n.t("mean", lang))} {esc(ex.signed(mean))}</text>')
    out += _bars(points, x, reach, base, plot, lang) if bars else _dots(points, heights, x, r, base)
    out += _axis(x, reach, step, base, t, lang)
    return "".join(out) + "</svg>"


def _guides(x: Any, trivial: float, base: float, plot: float, lang: str = "en") -> list[str]:
    out = [f'<line class="zero" x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{base - plot}" y2="{base}" style="stroke:var(--fg)" stroke-width="1.2"/>']
    if trivial > 0:
        for sign in (-1, 1):
            tx_ = x(sign * trivial)
            out.append(
                f'<line class="trivial" x1="{tx_:.1f}" x2="{tx_:.1f}" y1="{base - plot}" y2="{base}" '
                'stroke="#9a6700" stroke-dasharray="4 3"/>'
            )
        out.append(f'<text x="{x(trivial) + 3:.1f}" y="{base - plot + 10:.0f}" style="fill:#9a6700">±{trivial:g} {esc(i18n.t("trivial", lang))}</text>')
    return out


def _dots(points: list[tuple[float, str]], heights: list[int], x: Any, r: float, base: float) -> list[str]:
    out = []
    for (v, sid), h in zip(points, heights, strict=True):
        kind = "win" if v > 0.005 else "loss" if v < -0.005 else "tie"
        out.append(
            f'<circle class="dot {kind}" data-sample="{esc(sid)}" data-delta="{v}" cx="{x(v):.1f}" cy="{base - r - h * 2 * r:.1f}" '
            f'r="{r - 0.4:.1f}" fill="{COLORS[kind]}" fill-opacity="0.85"><title>{esc(sid)}: {v:+.2f}</title></circle>'
        )
    return out


def _bars(points: list[tuple[float, str]], x: Any, reach: float, base: float, plot: float, lang: str = "en") -> list[str]:
    """Too many samples for dots: a histogram of the changes in 40 bins across the axis."""
    width = 2 * reach / 40
    counts = [0] * 40
    for v, _ in points:
        counts[min(39, max(0, int((v + reach) / width)))] += 1
    top = max(counts) or 1
    out = []
    for k, n in enumerate(counts):
        if not n:
            continue
        lo, hi = -reach + k * width, -reach + (k + 1) * width
        kind = "win" if lo >= 0.005 else "loss" if hi <= -0.005 else "tie"
        h = n / top * (plot - 8)
        out.append(
            f'<rect class="bin {kind}" data-count="{n}" x="{x(lo) + 0.5:.1f}" y="{base - h:.1f}" width="{x(hi) - x(lo) - 1:.1f}" '
            f'height="{h:.1f}" fill="{COLORS[kind]}" fill-opacity="0.8"><title>{lo:+.2f} … {hi:+.2f}: {esc(i18n.counted(n, "sample", "samples", lang))}</title></rect>'
        )
    return out


def _axis(x: Any, reach: float, step: float, base: float, t: str, lang: str = "en") -> list[str]:
    out = [f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{base}" y2="{base}" stroke="#d0d7de"/>']
    n = round(reach / step)
    for k in range(-n, n + 1):
        v = k * step
        out.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="{base}" y2="{base + 4}" stroke="#8c959f"/>')
        out.append(f'<text class="tick" x="{x(v):.1f}" y="{base + 16}" text-anchor="middle">{"0" if k == 0 else f"{v:+g}"}</text>')
    worse, better = (esc(i18n.t(w, lang)).format(t=t) for w in ("worse with {t}", "better with {t}"))
    out.append(f'<text x="{LEFT}" y="{base + 36}">← {worse}</text>')
    out.append(f'<text x="{W - RIGHT}" y="{base + 36}" text-anchor="end">{better} →</text>')
    return out
