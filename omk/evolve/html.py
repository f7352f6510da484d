"""The evolve report as one self-contained HTML page: the verdict, the selection score of the best
skill after each round with its interval (an inline SVG chart), every candidate with its figures
and why it was kept or refused, the gain on each split, the cost, and the diff. No script, no
outside resource; every text goes through `html.escape`."""

from __future__ import annotations

import html
from typing import Any

from omk.evolve.report import EvolveReport, StandingRow, level_and_rest
from omk.report.i18n_evolve import evolve_text, t

W, H, PAD = 480, 220, 40
# The page carries its own policy: no script at all, nothing from outside (`omk view` serves it
# under the same one).
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _y(score: float) -> float:
    return H - PAD - (score - 1.0) / 4.0 * (H - 2 * PAD)  # the composite's 1–5 scale


def chart(standings: tuple[StandingRow, ...], lang: str = "en") -> str:
    """The best skill's selection score after each round (0: the original), with its interval."""
    points = [(s, s.mean) for s in standings if s.mean is not None]
    if not points:
        return ""
    step = (W - 2 * PAD) / max(1, len(points) - 1)
    label = _e(t("selection score per round", lang))
    parts = [f'<svg id="selection-chart" role="img" aria-label="{label}" width="{W}" height="{H}" viewBox="0 0 {W} {H}">']
    for tick in (1, 2, 3, 4, 5):
        y = _y(tick)
        parts.append(f'<line x1="{PAD}" y1="{y:.1f}" x2="{W - PAD // 2}" y2="{y:.1f}" stroke="#ddd"/><text x="{PAD - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{tick}</text>')
    path = []
    for i, (s, score) in enumerate(points):
        x = PAD + i * step
        path.append(f"{x:.1f},{_y(score):.1f}")
        if s.low is not None and s.high is not None:
            parts.append(f'<line class="interval" x1="{x:.1f}" y1="{_y(s.low):.1f}" x2="{x:.1f}" y2="{_y(s.high):.1f}" stroke="#888" stroke-width="2"/>')
        tip = t("round {round}: {score} [{low}, {high}]", lang).format(round=s.round, score=f"{score:.2f}", low=s.low, high=s.high)
        parts.append(f'<circle class="point" cx="{x:.1f}" cy="{_y(score):.1f}" r="4" fill="#246"><title>{_e(tip)}</title></circle>')
        parts.append(f'<text x="{x:.1f}" y="{H - PAD + 16}" text-anchor="middle" font-size="11">{_e(s.round)}</text>')
    parts.append(f'<polyline points="{" ".join(path)}" fill="none" stroke="#246"/>')
    parts.append("</svg>")
    return "".join(parts)


def _rows(report: EvolveReport, lang: str) -> list[str]:
    rows = []
    for c in report.candidates:
        d = c.decision
        interval = f"[{d.low:+.3f}, {d.high:+.3f}]" if d is not None and d.low is not None and d.high is not None else "—"
        change = f"{d.change:+.3f}" if d is not None and d.change is not None else "—"
        rows.append(
            f'<tr class="{_e(c.status)}"><td>{_e(c.round)}</td><td>{_e(c.index)}</td><td>{_e(t(c.status, lang))}</td>'
            f"<td>{_e(change)}</td><td>{_e(interval)}</td><td>{_e(c.lines_changed)}</td><td>{_e(evolve_text(c.reason, lang))}</td></tr>"
        )
    return rows


def page(report: EvolveReport, lang: str = "en") -> str:
    """The whole page, its words in `lang` (report.json's reasons said again, omk/report/i18n_evolve.py)."""
    g, s = report.gap, report.split
    level, rest = level_and_rest(report)
    title = _e(t("omk evolve: {skill}", lang).format(skill=report.skill))
    focus = t("Focus {focus}; split train {train} / selection {selection} / test {test}; each candidate tested at α {alpha} / {tests}; stopped: {stop}.", lang)
    focus = focus.format(focus=report.focus, train=s.train, selection=s.selection, test=s.test, alpha=report.settings.alpha, tests=report.settings.tests, stop=evolve_text(report.stop, lang))
    gain = t("Gain over the original (composite): train {train}, selection {selection}, test {test}.", lang).format(train=g.train, selection=g.selection, test=g.test)
    head = "".join(f"<th>{_e(t(h, lang))}</th>" for h in ("round", "candidate", "status", "change", "interval", "lines changed", "why"))
    return "".join([
        f'<!doctype html><html lang="{"zh" if lang == "zh" else "en"}"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="', CSP, '"><title>', title, "</title>",
        "<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto}td,th{padding:.2rem .5rem;border-bottom:1px solid #eee;text-align:left}"
        ".accepted{background:#eaf6ea}.refused{color:#777}pre{background:#f6f6f6;padding:.5rem;overflow:auto}</style></head><body>",
        f"<h1>{title}</h1>",
        f'<p id="verdict"><strong>{_e(evolve_text(level, lang))}</strong> · {_e(evolve_text(rest, lang))}</p>',
        f"<p>{_e(focus)}</p>",
        f"<h2>{_e(t('Selection score of the best skill, per round', lang))}</h2>", chart(report.standings, lang),
        f"<h2>{_e(t('Candidates', lang))}</h2><table><tr>{head}</tr>", *_rows(report, lang), "</table>",
        f"<p>{_e(gain)}</p>",
        f"<p>{_e(t('Cost: ${cost}', lang).format(cost=f'{report.cost_usd:.4f}'))}</p>",
        f"<h2>{_e(t('The selected skill against the original', lang))}</h2><pre>{_e(report.diff) or _e(t('(no change)', lang))}</pre>",
        "</body></html>\n",
    ])  # fmt: skip
