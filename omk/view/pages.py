"""The pages of `omk view`: the list of runs with a trend per sample set and target, two runs side
by side, and one sample's history. Plain HTML with no script and no outside resource; every value
that comes from a report is escaped. One run's page is its own report.html (the HTML report)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from omk.engine.variant_records import records_of_report
from omk.records.result import AssertionResult, SampleResult
from omk.report.i18n_evolve import t
from omk.stats.diff import diff_runs
from omk.view.runs import EvolveEntry, RunEntry

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STYLE = (
    "body{font:14px system-ui,sans-serif;margin:24px;color:#1b1f24}table{border-collapse:collapse;margin:8px 0 20px}"
    "th,td{border-bottom:1px solid #d8dee4;padding:4px 10px;text-align:left;vertical-align:top}th{background:#f3f5f7}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#b42318}.ok{color:#067647}"
    "svg{border:1px solid #d8dee4;background:#fff}.muted{color:#57606a}code{font-size:13px}"
)


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def page(title: str, body: str, lang: str = "en") -> str:
    return (
        f'<!DOCTYPE html><html lang="{"zh" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
        f'<p class="muted"><a href="{link("index")}">omk view</a></p><h1>{esc(title)}</h1>{body}</body></html>\n'
    )


def link(kind: str, *parts: str) -> str:
    """A page's address, relative, the same for the server and an export (`run-KEY.html`), as
    it goes into an `href` (percent-encoded; the file an export writes has the decoded name)."""
    if kind == "index":
        return "index.html"
    return quote(f"{kind}-" + "--".join(page_name(p) for p in parts) + ".html", safe="")


# A part of a page's name holds at most this many bytes of UTF-8, so that a page name (two parts
# for a comparison) stays well under the 255 bytes a file name may have on common file systems.
NAME_BYTES = 80


def page_name(part: str) -> str:
    """`part` (a sample id, a run's key) as it goes into a page's name: itself when it is short
    and made of letters, digits, `.`, `_` and `-` (no `--`, which separates a comparison's two
    runs) and in lower case; otherwise a readable prefix of those characters and `~` with a hash of the whole (a `..` or `--` in it is written `__`), so
    two ids never share a page and no name is too long for a file."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in part)
    # upper case too: `A` and `a` must not be one file on a file system blind to case
    plain = "--" not in part and ".." not in part and "~" not in part and part == part.lower()
    if safe == part and plain and len(part.encode("utf-8")) <= NAME_BYTES:
        return part
    prefix = safe.lower().replace("--", "__").replace("..", "__")
    while len(prefix.encode("utf-8")) > NAME_BYTES - 13:
        prefix = prefix[:-1]
    return f"{prefix}~{hashlib.sha256(part.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def sample_id_named(name: str, runs: Sequence[RunEntry]) -> str | None:
    """The sample id whose page is `name` (`page_name`), found in the runs; None when no run has it."""
    if "~" not in name:
        return name
    for r in runs:
        for res in r.document.results:
            if page_name(res.sample_id) == name:
                return res.sample_id
    return None


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _head(*names: str, lang: str) -> str:
    """A table's header row, each name in `lang` (an empty name: an empty cell)."""
    return "<tr>" + "".join(f"<th>{esc(t(n, lang)) if n else ''}</th>" for n in names) + "</tr>"


def index_page(runs: Sequence[RunEntry], problems: Sequence[str], evolve: Sequence[EvolveEntry] = (), lang: str = "en") -> str:
    rows = "".join(
        f'<tr><td><a href="{link("run", r.key)}">{esc(r.key)}</a></td><td>{esc(r.started_at)}</td>'
        f"<td><code>{esc((r.commit or '')[:10]) or '—'}</code></td><td>{esc(r.suite)}</td><td>{esc(r.target)}</td>"
        f'<td class="num">{_num(r.composite)}</td><td class="num">{_pct(r.pass_rate)}</td><td>{esc(r.verdict or "")}</td>'
        f"<td>{_compare_link(runs, i, lang)}</td></tr>"
        for i, r in enumerate(runs)
    )
    head = _head("run", "started", "commit", "samples", "target", "composite", "pass rate", "verdict", "", lang=lang)
    table = f'<table id="runs">{head}{rows}</table>' if runs else f'<p id="runs">{esc(t("No runs found.", lang))}</p>'
    unread = "".join(f"<li>{esc(p)}</li>" for p in problems)
    unread_part = f'<h2>{esc(t("Not read", lang))}</h2><ul id="unread">{unread}</ul>' if unread else ""
    return page(t("Runs", lang), table + trends(runs, lang) + evolve_table(evolve, lang) + unread_part, lang)


def evolve_table(evolve: Sequence[EvolveEntry], lang: str = "en") -> str:
    """The `omk evolve` runs: the skill, what was improved, the final level and what it cost."""
    if not evolve:
        return ""
    from omk.report.i18n_evolve import evolve_text

    rows = "".join(
        f'<tr><td><a href="{link("evolve", e.key)}">{esc(e.key)}</a></td><td>{esc(e.report.skill)}</td><td>{esc(e.report.focus)}</td>'
        f'<td class="num">{len(e.report.candidates)}</td><td>{esc(evolve_text(e.report.level, lang))}</td><td>{esc(evolve_text(e.report.headline, lang))}</td>'
        f'<td class="num">${e.report.cost_usd:.4f}</td></tr>'
        for e in evolve
    )
    head = _head("evolve run", "skill", "focus", "candidates", "level", "verdict", "cost", lang=lang)
    return f'<h2>{esc(t("Evolve runs", lang))}</h2><table id="evolve">{head}{rows}</table>'


def _compare_link(runs: Sequence[RunEntry], i: int, lang: str = "en") -> str:
    """To the previous run of the same sample set and target, when there is one."""
    r = runs[i]
    earlier = [p for p in runs[:i] if p.suite == r.suite and p.target == r.target]
    return f'<a href="{link("compare", earlier[-1].key, r.key)}">{esc(t("vs previous", lang))}</a>' if earlier else ""


def trends(runs: Sequence[RunEntry], lang: str = "en") -> str:
    """One chart per sample set and target: composite (1–5) and pass rate (0–100%) run by run."""
    groups: dict[tuple[str, str], list[RunEntry]] = {}
    for r in runs:
        groups.setdefault((r.suite, r.target), []).append(r)
    charts = [_chart(suite, target, group, lang) for (suite, target), group in groups.items() if len(group) >= 2]
    return f"<h2>{esc(t('Trends', lang))}</h2>" + "".join(charts) if charts else ""


def _chart(suite: str, target: str, group: list[RunEntry], lang: str = "en") -> str:
    """The two lines over labelled axes: pass rate (0–100%) on the left, composite (1–5) on the
    right, the runs in order along the bottom."""
    w, h = 560, 200
    left, right, top, bottom = 52, 44, 12, 40  # room for the tick labels and the axes' names
    step = (w - left - right) / max(len(group) - 1, 1)

    def y(v: float, low: float, high: float) -> float:
        return h - bottom - (v - low) / (high - low) * (h - top - bottom)

    def points(values: list[float | None], low: float, high: float) -> str:
        return " ".join(f"{left + i * step:.1f},{y(v, low, high):.1f}" for i, v in enumerate(values) if v is not None)

    composite = points([r.composite for r in group], 1.0, 5.0)
    passed = points([r.pass_rate for r in group], 0.0, 1.0)
    title = f"{suite} · {target}"
    caption = t("{title}: composite (blue, 1–5) and pass rate (green, 0–100%), {n} runs", lang).format(title=title, n=len(group))
    return (
        f'<figure class="trend"><figcaption>{esc(caption)}</figcaption>'
        f'<svg width="{w}" height="{h}" role="img" aria-label="{esc(title)}">'
        + _axes(w, h, (left, right, top, bottom), len(group), step, y, lang)
        + f'<polyline class="composite" fill="none" stroke="#175cd3" stroke-width="2" points="{composite}"/>'
        f'<polyline class="pass-rate" fill="none" stroke="#067647" stroke-width="2" points="{passed}"/></svg></figure>'
    )


def _axes(w: int, h: int, margins: tuple[int, int, int, int], runs: int, step: float, y: Any, lang: str = "en") -> str:
    """The axes of a trend chart, each with its ticks and its name."""
    left, right, top, bottom = margins
    base, end = h - bottom, w - right
    small = 'font-size="11" fill="#57606a"'
    out = [
        f'<g class="axes" stroke="#8c959f" stroke-width="1">'
        f'<line class="axis-score" x1="{left}" y1="{top}" x2="{left}" y2="{base}"/>'
        f'<line class="axis-composite" x1="{end}" y1="{top}" x2="{end}" y2="{base}"/>'
        f'<line class="axis-run" x1="{left}" y1="{base}" x2="{end}" y2="{base}"/></g>'
    ]
    for rate in (0.0, 0.5, 1.0):
        out.append(f'<text class="tick-score" x="{left - 4}" y="{y(rate, 0.0, 1.0) + 4:.1f}" text-anchor="end" {small}>{rate:.0%}</text>')
    for score in (1, 3, 5):
        out.append(f'<text class="tick-composite" x="{end + 4}" y="{y(score, 1.0, 5.0) + 4:.1f}" {small}>{score}</text>')
    every = max(1, -(-runs // 10))  # at most about ten run numbers along the bottom
    for i in range(0, runs, every):
        out.append(f'<text class="tick-run" x="{left + i * step:.1f}" y="{base + 14}" text-anchor="middle" {small}>{i + 1}</text>')
    middle = (top + base) / 2
    out += [
        f'<text class="axis-name" x="{(left + end) / 2:.0f}" y="{h - 6}" text-anchor="middle" {small}>{esc(t("run (oldest first)", lang))}</text>',
        f'<text class="axis-name" x="12" y="{middle:.0f}" text-anchor="middle" transform="rotate(-90 12 {middle:.0f})" {small}>{esc(t("pass rate", lang))}</text>',
        f'<text class="axis-name" x="{w - 12}" y="{middle:.0f}" text-anchor="middle" transform="rotate(90 {w - 12} {middle:.0f})" {small}>{esc(t("composite", lang))}</text>',
    ]
    return "".join(out)


def compare_page(a: RunEntry, b: RunEntry, trivial: float = 0.1, lang: str = "en") -> str:
    diff = diff_runs(records_of_report(a.document), records_of_report(b.document), trivial=trivial)
    changed = {c.sample_id for c in diff.changes}
    checks_a, checks_b = _checks(a.document.results, changed), _checks(b.document.results, changed)
    rows = "".join(
        f'<tr><td><a href="{link("sample", c.sample_id)}">{esc(c.sample_id)}</a></td>'
        f"<td>{esc(', '.join(t(k.replace('_', ' '), lang) for k in c.kinds))}</td>"
        f'<td class="num">{_num(c.a_composite)}</td><td class="num">{_num(c.b_composite)}</td>'
        f"<td>{_flipped(checks_a.get(c.sample_id, {}), checks_b.get(c.sample_id, {}), lang)}</td></tr>"
        for c in diff.changes
    )
    head = _head("sample", "what changed", "A", "B", "checks that changed", lang=lang)
    said = t("A = {a} ({a_target}) · B = {b} ({b_target}) · {changed} changed, {unchanged} unchanged, {worse} got worse", lang)
    lead = esc(said).format(
        a=f'<a href="{link("run", a.key)}">{esc(a.key)}</a>', a_target=esc(a.target), b=f'<a href="{link("run", b.key)}">{esc(b.key)}</a>',
        b_target=esc(b.target), changed=len(diff.changes), unchanged=diff.unchanged, worse=diff.regressed,
    )
    return page(f"{a.key} → {b.key}", f"<p>{lead}</p>" + f'<table id="changes">{head}{rows}</table>', lang)


def _checks(results: Sequence[SampleResult], wanted: set[str]) -> dict[str, dict[str, bool | None]]:
    """Per changed sample (its first repeat), each check's label and whether it passed."""
    out: dict[str, dict[str, bool | None]] = {}
    for r in results:
        if r.sample_id in wanted and r.repeat == 0:
            out[r.sample_id] = {_label(a): a.passed for a in r.assertions}
    return out


def _label(a: AssertionResult) -> str:
    return ("not " if a.negate else "") + a.type + (f" {a.value!r}" if a.value is not None else "")


def _flipped(a: dict[str, bool | None], b: dict[str, bool | None], lang: str = "en") -> str:
    words = {True: t("pass", lang), False: t("fail", lang), None: "—"}
    flips = [f"{esc(k)}: {words[a.get(k)]} → {words[b.get(k)]}" for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    return "<br>".join(flips) or f'<span class="muted">{esc(t("none", lang))}</span>'


def sample_page(sample_id: str, runs: Sequence[RunEntry], lang: str = "en") -> str:
    rows = []
    for r in runs:
        for res in r.document.results:
            if res.sample_id == sample_id:
                state = "error" if res.status == "error" else ("passed" if res.passed else "failed")
                cls = "ok" if state == "passed" else "bad"
                rows.append(
                    f'<tr><td><a href="{link("run", r.key)}">{esc(r.key)}</a></td><td>{esc(r.started_at)}</td>'
                    f'<td class="num">{res.repeat + 1}</td><td class="{cls}">{esc(t(state, lang))}</td>'
                    f'<td class="num">{_num(res.scores.composite)}</td><td>{esc(res.error or "")}</td></tr>'
                )
    head = _head("run", "started", "repeat", "state", "composite", "error", lang=lang)
    body = f'<table id="history">{head}{"".join(rows)}</table>' if rows else f'<p id="history">{esc(t("In no run.", lang))}</p>'
    return page(t("Sample {sample}", lang).format(sample=sample_id), body, lang)
