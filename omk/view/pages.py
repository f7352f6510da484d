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


def page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
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


def index_page(runs: Sequence[RunEntry], problems: Sequence[str], evolve: Sequence[EvolveEntry] = ()) -> str:
    rows = "".join(
        f'<tr><td><a href="{link("run", r.key)}">{esc(r.key)}</a></td><td>{esc(r.started_at)}</td>'
        f"<td><code>{esc((r.commit or '')[:10]) or '—'}</code></td><td>{esc(r.suite)}</td><td>{esc(r.target)}</td>"
        f'<td class="num">{_num(r.composite)}</td><td class="num">{_pct(r.pass_rate)}</td><td>{esc(r.verdict or "")}</td>'
        f"<td>{_compare_link(runs, i)}</td></tr>"
        for i, r in enumerate(runs)
    )
    head = "<tr><th>run</th><th>started</th><th>commit</th><th>samples</th><th>target</th><th>composite</th><th>pass rate</th><th>verdict</th><th></th></tr>"
    table = f'<table id="runs">{head}{rows}</table>' if runs else '<p id="runs">No runs found.</p>'
    unread = "".join(f"<li>{esc(p)}</li>" for p in problems)
    return page("Runs", table + trends(runs) + evolve_table(evolve) + (f'<h2>Not read</h2><ul id="unread">{unread}</ul>' if unread else ""))


def evolve_table(evolve: Sequence[EvolveEntry]) -> str:
    """The `omk evolve` runs: the skill, what was improved, the final level and what it cost."""
    if not evolve:
        return ""
    rows = "".join(
        f'<tr><td><a href="{link("evolve", e.key)}">{esc(e.key)}</a></td><td>{esc(e.report.skill)}</td><td>{esc(e.report.focus)}</td>'
        f'<td class="num">{len(e.report.candidates)}</td><td>{esc(e.report.level)}</td><td>{esc(e.report.headline)}</td>'
        f'<td class="num">${e.report.cost_usd:.4f}</td></tr>'
        for e in evolve
    )
    head = "<tr><th>evolve run</th><th>skill</th><th>focus</th><th>candidates</th><th>level</th><th>verdict</th><th>cost</th></tr>"
    return f'<h2>Evolve runs</h2><table id="evolve">{head}{rows}</table>'


def _compare_link(runs: Sequence[RunEntry], i: int) -> str:
    """To the previous run of the same sample set and target, when there is one."""
    r = runs[i]
    earlier = [p for p in runs[:i] if p.suite == r.suite and p.target == r.target]
    return f'<a href="{link("compare", earlier[-1].key, r.key)}">vs previous</a>' if earlier else ""


def trends(runs: Sequence[RunEntry]) -> str:
    """One chart per sample set and target: composite (1–5) and pass rate (0–100%) run by run."""
    groups: dict[tuple[str, str], list[RunEntry]] = {}
    for r in runs:
        groups.setdefault((r.suite, r.target), []).append(r)
    charts = [_chart(suite, target, group) for (suite, target), group in groups.items() if len(group) >= 2]
    return "<h2>Trends</h2>" + "".join(charts) if charts else ""


def _chart(suite: str, target: str, group: list[RunEntry]) -> str:
    w, h, pad = 520, 160, 24
    step = (w - 2 * pad) / max(len(group) - 1, 1)

    def points(values: list[float | None], low: float, high: float) -> str:
        return " ".join(
            f"{pad + i * step:.1f},{h - pad - (v - low) / (high - low) * (h - 2 * pad):.1f}"
            for i, v in enumerate(values)
            if v is not None
        )

    composite = points([r.composite for r in group], 1.0, 5.0)
    passed = points([r.pass_rate for r in group], 0.0, 1.0)
    title = f"{suite} · {target}"
    return (
        f'<figure class="trend"><figcaption>{esc(title)}: composite (blue, 1–5) and pass rate (green, 0–100%), '
        f"{len(group)} runs</figcaption>"
        f'<svg width="{w}" height="{h}" role="img" aria-label="{esc(title)}">'
        f'<polyline class="composite" fill="none" stroke="#175cd3" stroke-width="2" points="{composite}"/>'
        f'<polyline class="pass-rate" fill="none" stroke="#067647" stroke-width="2" points="{passed}"/></svg></figure>'
    )


def compare_page(a: RunEntry, b: RunEntry, trivial: float = 0.1) -> str:
    diff = diff_runs(records_of_report(a.document), records_of_report(b.document), trivial=trivial)
    changed = {c.sample_id for c in diff.changes}
    checks_a, checks_b = _checks(a.document.results, changed), _checks(b.document.results, changed)
    rows = "".join(
        f'<tr><td><a href="{link("sample", c.sample_id)}">{esc(c.sample_id)}</a></td>'
        f"<td>{esc(', '.join(k.replace('_', ' ') for k in c.kinds))}</td>"
        f'<td class="num">{_num(c.a_composite)}</td><td class="num">{_num(c.b_composite)}</td>'
        f"<td>{_flipped(checks_a.get(c.sample_id, {}), checks_b.get(c.sample_id, {}))}</td></tr>"
        for c in diff.changes
    )
    head = "<tr><th>sample</th><th>what changed</th><th>A</th><th>B</th><th>checks that changed</th></tr>"
    lead = (
        f'<p>A = <a href="{link("run", a.key)}">{esc(a.key)}</a> ({esc(a.target)}) · '
        f'B = <a href="{link("run", b.key)}">{esc(b.key)}</a> ({esc(b.target)}) · {len(diff.changes)} changed, '
        f"{diff.unchanged} unchanged, {diff.regressed} got worse</p>"
    )
    return page(f"{a.key} → {b.key}", lead + f'<table id="changes">{head}{rows}</table>')


def _checks(results: Sequence[SampleResult], wanted: set[str]) -> dict[str, dict[str, bool | None]]:
    """Per changed sample (its first repeat), each check's label and whether it passed."""
    out: dict[str, dict[str, bool | None]] = {}
    for r in results:
        if r.sample_id in wanted and r.repeat == 0:
            out[r.sample_id] = {_label(a): a.passed for a in r.assertions}
    return out


def _label(a: AssertionResult) -> str:
    return ("not " if a.negate else "") + a.type + (f" {a.value!r}" if a.value is not None else "")


def _flipped(a: dict[str, bool | None], b: dict[str, bool | None]) -> str:
    words = {True: "pass", False: "fail", None: "—"}
    flips = [f"{esc(k)}: {words[a.get(k)]} → {words[b.get(k)]}" for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    return "<br>".join(flips) or '<span class="muted">none</span>'


def sample_page(sample_id: str, runs: Sequence[RunEntry]) -> str:
    rows = []
    for r in runs:
        for res in r.document.results:
            if res.sample_id == sample_id:
                state = "error" if res.status == "error" else ("passed" if res.passed else "failed")
                cls = "ok" if state == "passed" else "bad"
                rows.append(
                    f'<tr><td><a href="{link("run", r.key)}">{esc(r.key)}</a></td><td>{esc(r.started_at)}</td>'
                    f'<td class="num">{res.repeat + 1}</td><td class="{cls}">{state}</td>'
                    f'<td class="num">{_num(res.scores.composite)}</td><td>{esc(res.error or "")}</td></tr>'
                )
    head = "<tr><th>run</th><th>started</th><th>repeat</th><th>state</th><th>composite</th><th>error</th></tr>"
    body = f'<table id="history">{head}{"".join(rows)}</table>' if rows else '<p id="history">In no run.</p>'
    return page(f"Sample {sample_id}", body)
