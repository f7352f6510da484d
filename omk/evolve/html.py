"""The evolve report as one self-contained HTML page: the verdict, the selection score of the best
skill after each round with its interval (an inline SVG chart), every candidate with its figures
and why it was kept or refused, the gain on each split, the cost, and the diff. No script, no
outside resource; every text goes through `html.escape`."""

from __future__ import annotations

import html
from typing import Any

from omk.evolve.report import EvolveReport, StandingRow

W, H, PAD = 480, 220, 40
# The page carries its own policy: no script at all, nothing from outside (`omk view` serves it
# under the same one).
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _y(score: float) -> float:
    return H - PAD - (score - 1.0) / 4.0 * (H - 2 * PAD)  # the composite's 1–5 scale


def chart(standings: tuple[StandingRow, ...]) -> str:
    """The best skill's selection score after each round (0: the original), with its interval."""
    points = [(s, s.mean) for s in standings if s.mean is not None]
    if not points:
        return ""
    step = (W - 2 * PAD) / max(1, len(points) - 1)
    parts = [f'<svg id="selection-chart" role="img" aria-label="selection score per round" width="{W}" height="{H}" viewBox="0 0 {W} {H}">']
    for tick in (1, 2, 3, 4, 5):
        y = _y(tick)
        parts.append(f'<line x1="{PAD}" y1="{y:.1f}" x2="{W - PAD // 2}" y2="{y:.1f}" stroke="#ddd"/><text x="{PAD - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{tick}</text>')
    path = []
    for i, (s, score) in enumerate(points):
        x = PAD + i * step
        path.append(f"{x:.1f},{_y(score):.1f}")
        if s.low is not None and s.high is not None:
            parts.append(f'<line class="interval" x1="{x:.1f}" y1="{_y(s.low):.1f}" x2="{x:.1f}" y2="{_y(s.high):.1f}" stroke="#888" stroke-width="2"/>')
        parts.append(f'<circle class="point" cx="{x:.1f}" cy="{_y(score):.1f}" r="4" fill="#246"><title>round {_e(s.round)}: {score:.2f} [{_e(s.low)}, {_e(s.high)}]</title></circle>')
        parts.append(f'<text x="{x:.1f}" y="{H - PAD + 16}" text-anchor="middle" font-size="11">{_e(s.round)}</text>')
    parts.append(f'<polyline points="{" ".join(path)}" fill="none" stroke="#246"/>')
    parts.append("</svg>")
    return "".join(parts)


def page(report: EvolveReport) -> str:
    rows = []
    for c in report.candidates:
        d = c.decision
        interval = f"[{d.low:+.3f}, {d.high:+.3f}]" if d is not None and d.low is not None and d.high is not None else "—"
        change = f"{d.change:+.3f}" if d is not None and d.change is not None else "—"
        rows.append(
            f'<tr class="{_e(c.status)}"><td>{_e(c.round)}</td><td>{_e(c.index)}</td><td>{_e(c.status)}</td>'
            f"<td>{_e(change)}</td><td>{_e(interval)}</td><td>{_e(c.lines_changed)}</td><td>{_e(c.reason)}</td></tr>"
        )
    g, s = report.gap, report.split
    return "".join([
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="', CSP, '"><title>omk evolve: ', _e(report.skill), "</title>",
        "<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto}td,th{padding:.2rem .5rem;border-bottom:1px solid #eee;text-align:left}"
        ".accepted{background:#eaf6ea}.refused{color:#777}pre{background:#f6f6f6;padding:.5rem;overflow:auto}</style></head><body>",
        f"<h1>omk evolve: {_e(report.skill)}</h1>",
        f'<p id="verdict"><strong>{_e(report.level)}</strong> · {_e(report.headline)}</p>',
        f"<p>Focus {_e(report.focus)}; split train {_e(s.train)} / selection {_e(s.selection)} / test {_e(s.test)}; "
        f"each candidate tested at α {_e(report.settings.alpha)} / {_e(report.settings.tests)}; stopped: {_e(report.stop)}.</p>",
        "<h2>Selection score of the best skill, per round</h2>", chart(report.standings),
        "<h2>Candidates</h2><table><tr><th>round</th><th>candidate</th><th>status</th><th>change</th><th>interval</th><th>lines changed</th><th>why</th></tr>",
        *rows, "</table>",
        f"<p>Gain over the original (composite): train {_e(g.train)}, selection {_e(g.selection)}, test {_e(g.test)}.</p>",
        f"<p>Cost: ${report.cost_usd:.4f}</p>",
        f"<h2>The selected skill against the original</h2><pre>{_e(report.diff) or '(no change)'}</pre>" ,
        "</body></html>\n",
    ])  # fmt: skip
