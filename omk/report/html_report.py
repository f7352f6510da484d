"""`report.html`: one self-contained file (inline CSS, JS and SVG; no network) that opens from disk.

Built with plain string building and `html.escape`, not a template engine: the page is one
fixed layout, and rendering every value through a single `esc()` on the server side means no
run data ever reaches JavaScript or `innerHTML` (outputs are untrusted). The script only sorts,
filters and shows pre-rendered detail panels. A Content-Security-Policy allows no network and
only the page's own script (by hash), as a second line of defence.

The results are read only by iterating them (twice at most) and counting them, never all held:
a report can hand over a collection that reads them lazily from a file. A large run (more
results, or more text, than a browser handles well as one page) gets the page of
omk/report/html_paged.py instead: the same summary, its failures and extremes rendered here, and
the full table as embedded data that its script shows as text (`textContent`), never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from omk.records.report import ReportDocument, Summary
from omk.records.result import AssertionResult, InlinedUrl, SampleResult, Trace, TurnResult
from omk.report import categories, pairwise
from omk.report.html_data import detail as detail_data
from omk.report.html_data import dumps
from omk.report.html_data import num as _num
from omk.report.html_data import row as row_data
from omk.report.html_data import state as _state
from omk.report.i18n import t
from omk.report.reasons import label, repeats_line, result_name, skipped_judge_line

FONT_SANS = (
    'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", '
    '"PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", '
    '"WenQuanYi Micro Hei", sans-serif'
)
FONT_MONO = (
    'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", "Noto Sans Mono CJK SC", '
    '"Sarasa Mono SC", "Microsoft YaHei", monospace'
)

CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;
--warn:#9a6700;--skip:#6e7781;--accent:#0969da;--purple:#8250df;--on-badge:#fff;--hover:#eaeef2;--selected:#ddf4ff;
--bad-bg:#ffebe9;color-scheme:light dark}
@media (prefers-color-scheme: dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--bg:#0d1117;--soft:#151b23;
--ok:#3fb950;--bad:#f85149;--warn:#d29922;--skip:#9198a1;--accent:#4493f8;--purple:#ab7df8;--on-badge:#0d1117;
--hover:#262c36;--selected:#1b3251;--bad-bg:#3c1618}}
*{box-sizing:border-box}
body{margin:0;font-family:__SANS__;color:var(--fg);background:var(--bg);line-height:1.5;font-size:14px}
code,pre,.mono{font-family:__MONO__;font-size:12.5px}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--soft)}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 8px}h3{font-size:14px;margin:16px 0 6px}
main{padding:8px 24px 48px;max-width:1400px}
.meta{color:var(--muted)}.meta span{margin-right:16px;white-space:nowrap}header .meta{display:flex;flex-wrap:wrap}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:var(--on-badge)}
.badge.pass{background:var(--ok)}.badge.fail{background:var(--bad)}.badge.error{background:var(--warn)}
.badge.skip{background:var(--skip)}.badge.pw-a{background:var(--accent)}.badge.pw-b{background:var(--purple)}
table.pairwise-tally{width:auto}table.pairwise-tally th,table.pairwise-tally td{min-width:96px}
table.pairwise{margin-top:12px}table.pairwise td{overflow-wrap:anywhere}table.pairwise td.nw{white-space:nowrap}
ul.votes{margin:4px 0;padding-left:18px;color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid var(--line);border-radius:6px;padding:10px 14px;min-width:120px}
.card b{display:block;font-size:20px}.card small{color:var(--muted)}
.bar{height:6px;background:var(--soft);border-radius:3px;margin-top:4px}.bar i{display:block;height:6px;border-radius:3px;background:var(--accent)}
.charts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
svg{max-width:100%;height:auto}
svg text{font-family:__SANS__;font-size:11px;fill:var(--muted)}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0}
.controls input,.controls select{padding:4px 8px;border:1px solid var(--line);border-radius:6px;font:inherit}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);position:sticky;top:0}
#results th{cursor:pointer;user-select:none;white-space:nowrap}
#results th[aria-sort=ascending]::after{content:" ▲"}#results th[aria-sort=descending]::after{content:" ▼"}
#results tbody tr{cursor:pointer}#results tbody tr:hover{background:var(--hover)}
#results tbody tr.selected{background:var(--selected)}
#results caption{caption-side:top;text-align:left;color:var(--muted);padding:2px 0 6px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:var(--ok)}.bad{color:var(--bad)}.skip{color:var(--skip)}.warn{color:var(--warn)}
.detail{border:1px solid var(--line);border-radius:6px;padding:8px 16px 16px;margin-top:16px}
.detail[hidden]{display:none}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px;white-space:pre-wrap;
word-break:break-word;max-height:480px;overflow:auto;margin:4px 0}
ul.asserts{list-style:none;padding-left:0;margin:4px 0}ul.asserts ul.asserts{padding-left:22px;border-left:2px solid var(--line)}
ul.asserts li{padding:2px 0}
.errbox{border:1px solid var(--bad);background:var(--bad-bg);border-radius:6px;padding:8px}
.empty{color:var(--muted);font-style:italic}
#count{color:var(--muted)}
section.turn{border-left:3px solid var(--line);padding:0 0 4px 12px;margin:12px 0}
section.turn h4{font-size:14px;margin:8px 0 4px}section.turn h5{font-size:13px;margin:10px 0 4px}
.judged{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:0 20px;align-items:start}
@media (max-width: 900px){.judged{grid-template-columns:minmax(0,1fr)}}
@media (max-width: 480px){
header{padding:12px}main{padding:4px 12px 32px}
.meta span{white-space:normal;overflow-wrap:anywhere}code{overflow-wrap:anywhere}
.card{min-width:0;flex:1 1 96px;padding:6px 10px}.controls input{flex:1 1 100%}
th{position:static}
#results thead tr{display:flex;flex-wrap:wrap;gap:4px}#results thead th{border:1px solid var(--line);border-radius:6px;padding:2px 6px}
#results tbody tr{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));border-bottom:1px solid var(--line);padding:4px 0}
#results tbody td{border:0;padding:2px 6px;text-align:left}#results tbody td:first-child{grid-column:1/-1}
td[data-label]::before{content:attr(data-label);display:block;font-size:11px;color:var(--muted)}
.detail{padding:6px 10px 12px}
.detail table,.detail thead,.detail tbody,.detail tr,.detail td,.detail th{display:block;width:auto}
.detail thead{display:none}.detail tr{border-bottom:1px solid var(--line);padding:4px 0}.detail td{border:0;padding:2px 4px}
table.pairwise td.nw{white-space:normal}
main table{font-size:12px}main th,main td{padding:3px 4px;overflow-wrap:break-word}main td{overflow-wrap:anywhere}
main td.num{overflow-wrap:normal;word-break:normal}table.categories{font-size:11px}
table.pairwise-tally th,table.pairwise-tally td{min-width:0}
}
""".replace("__SANS__", FONT_SANS).replace("__MONO__", FONT_MONO)

JS = """
(function(){
  var table=document.getElementById('results'), body=table.tBodies[0];
  var rows=Array.prototype.slice.call(body.rows);
  var q=document.getElementById('filter'), st=document.getElementById('status-filter');
  var count=document.getElementById('count');
  function apply(){
    var text=q.value.trim().toLowerCase(), want=st.value, shown=0;
    rows.forEach(function(r){
      var ok=(!text||r.getAttribute('data-search').indexOf(text)!==-1)&&(!want||r.getAttribute('data-state')===want);
      r.hidden=!ok; if(ok){shown++;}
    });
    count.textContent=shown+' / '+rows.length;
  }
  q.addEventListener('input',apply); st.addEventListener('change',apply);
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){
      var asc=th.getAttribute('aria-sort')!=='ascending', numeric=th.classList.contains('num');
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var sorted=rows.slice().sort(function(a,b){
        var x=a.cells[i].getAttribute('data-v'), y=b.cells[i].getAttribute('data-v'), c;
        if(numeric){x=x===''?-Infinity:parseFloat(x); y=y===''?-Infinity:parseFloat(y); c=x<y?-1:x>y?1:0;}
        else{c=x.localeCompare(y);}
        return asc?c:-c;
      });
      sorted.forEach(function(r){body.appendChild(r);});
    });
  });
  function show(id){
    var panel=document.getElementById(id); if(!panel){return;}
    Array.prototype.forEach.call(document.querySelectorAll('.detail'),function(d){d.hidden=d!==panel;});
    rows.forEach(function(r){r.classList.toggle('selected',r.getAttribute('data-detail')===id);});
    panel.scrollIntoView({block:'start'});
  }
  rows.forEach(function(r){
    r.addEventListener('click',function(){var id=r.getAttribute('data-detail'); history.replaceState(null,'','#'+id); show(id);});
  });
  window.addEventListener('hashchange',function(){show(decodeURIComponent(location.hash.slice(1)));});
  if(location.hash.length>1){show(decodeURIComponent(location.hash.slice(1)));}
  apply();
})();
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _pre(value: Any) -> str:
    if value is None or value == "":
        return '<p class="empty">(none)</p>'
    return f"<pre>{esc(_json_text(value))}</pre>"


def badge(state: str, lang: str) -> str:
    cls = {"passed": "pass", "failed": "fail", "errored": "error"}[state]
    return f'<span class="badge {cls}">{esc(t(state, lang))}</span>'


# ---------------------------------------------------------------- summary and chart


def _layer_cards(summary: Summary, lang: str) -> str:
    cards = []
    for key in ("composite", "fact", "behavior", "judge"):
        v = summary.scores.layer(key)
        width = 0 if v is None else max(0.0, min(100.0, (v - 1) / 4 * 100))
        cards.append(
            f'<div class="card" data-layer="{key}"><small>{esc(t(key, lang))}</small><b>{_num(v)}</b>'
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


def _assertion_list(assertions: tuple[AssertionResult, ...]) -> str:
    if not assertions:
        return '<p class="empty">(no assertions)</p>'
    items = []
    for a in assertions:
        status = a.status or ("passed" if a.passed else "failed")
        icon, cls = {"passed": ("✓", "ok"), "failed": ("✗", "bad"), "skipped": ("○", "skip")}.get(status, ("?", ""))
        bits = [f'<span class="{cls}" title="{esc(status)}">{icon}</span> <code>{esc(label(a))}</code>']
        extra = [f"{esc(a.layer)}", f"weight {esc(a.weight)}"]
        if a.metric is not None:
            extra.append(f"metric {esc(a.metric)}")
        if a.score is not None:
            extra.append(f"score {esc(a.score)}")
        bits.append(f' <small class="meta">[{" · ".join(extra)}]</small>')
        if a.message:
            bits.append(f" — {esc(a.message)}")
        if a.children:
            bits.append(_assertion_list(a.children))
        items.append(f'<li class="assertion {esc(status)}">{"".join(bits)}</li>')
    return '<ul class="asserts">' + "".join(items) + "</ul>"


def _judge_item(what: str, lang: str) -> str:
    """`rubric` / `dimension NAME` in the report's language (the dimension's own name stays)."""
    if what.startswith("dimension "):
        return f"{t('dimension', lang)} {what[len('dimension '):]}"
    return t(what, lang)


def _judge(r: SampleResult | TurnResult, lang: str) -> str:
    judge = r.judge
    if judge is None:
        if r.judge_skipped:
            return f'<p class="skip">{esc(t("judge skipped", lang))}: {esc(r.judge_skipped)}</p>'
        return '<p class="empty">(no judge)</p>'
    rows = "".join(
        f"<tr><td>{esc(_judge_item(what, lang))}</td><td class='num'>{esc(score)}</td><td>{esc(reason)}</td></tr>"
        for what, score, reason in judge.items()
    )
    out = f"<p>{esc(t('judge', lang))} {esc(t('score', lang))} <b>{esc(judge.score)}</b></p>"
    if rows:
        heads = f"<th>{esc(t('item', lang))}</th><th class='num'>{esc(t('score', lang))}</th><th>{esc(t('reason', lang))}</th>"
        out += f"<table><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>"
    if judge.extra:
        out += _pre(dict(judge.extra))
    return out


def _trace(trace: Trace, lang: str) -> str:
    facts = [
        ("turns", trace.turns),
        ("cost", None if trace.cost_usd is None else f"${trace.cost_usd:.6f}"),
        ("latency", None if trace.latency_ms is None else f"{trace.latency_ms:.0f} ms"),
        ("tokens in", trace.tokens.input),
        ("tokens out", trace.tokens.output),
    ]
    out = '<p class="meta">' + "".join(f"<span>{esc(t(k, lang))}: {esc('—' if v is None else v)}</span>" for k, v in facts) + "</p>"
    stats = trace.mock_stats
    if stats is not None:
        per = ", ".join(f"{k}×{v}" for k, v in stats.per_mock.items()) or "—"
        out += f"<p>mocks: {esc(stats.hits)} hit(s), {esc(stats.misses)} miss(es); {esc(per)}</p>"
    if not trace.tool_calls:
        return out + '<p class="empty">(no tool calls)</p>'
    rows = []
    for n, c in enumerate(trace.tool_calls, 1):
        mock = esc(c.mock_key) if c.mocked else "—"
        err = ' <span class="bad">error</span>' if c.is_error else ""
        rows.append(
            f"<tr class='tool-call'><td class='num'>{n}</td><td><code>{esc(c.tool)}</code>{err}</td>"
            f"<td data-label='input'>{_pre(c.input)}</td><td data-label='output'>{_pre(c.output)}</td>"
            f"<td data-label='mock'>{mock}</td></tr>"
        )
    return out + (
        "<table><thead><tr><th class='num'>#</th><th>tool</th><th>input</th><th>output</th><th>mock</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _urls(urls: tuple[Any, ...]) -> str:
    if not urls:
        return ""
    parts = []
    for u in urls:
        if isinstance(u, InlinedUrl):
            head = esc(u.url or "")
            meta = dict(u.meta)
            parts.append(f"<h4><code>{head}</code></h4>{_pre(meta) if meta else ''}{_pre(u.body) if u.body else ''}")
        else:
            parts.append(_pre(u))
    return "<h3>URLs inlined</h3>" + "".join(parts)


def _judged(h: str, output: Any, assertions: tuple[AssertionResult, ...], lang: str) -> str:
    """The output beside the assertions that judged it (stacked, output first, on narrow screens)."""
    return (
        f'<div class="judged"><div class="judged-output"><{h}>{esc(t("Output", lang))}</{h}>{_pre(output)}</div>'
        f'<div class="judged-assertions"><{h}>{esc(t("Assertions", lang))}</{h}>{_assertion_list(assertions)}</div></div>'
    )


def detail_panel(i: int, r: SampleResult, repeated: bool, lang: str) -> str:
    state = _state(r)
    where = f"{r.source_file}:{r.source_line}" if r.source_line else r.source_file
    meta = [
        ("source", where),
        ("capability", ", ".join(r.capability) or None),
        ("difficulty", r.difficulty),
        ("tripwire", "yes" if r.tripwire else None),
        ("repeat", r.repeat if repeated else None),
        ("duration", f"{r.duration_ms or 0:.0f} ms"),
    ]
    scores = " · ".join(f"{k} {_num(r.scores.layer(k))}" for k in ("fact", "behavior", "judge", "composite"))
    error = f'<div class="errbox"><b>error</b>: {esc(r.error)}</div>' if r.error else ""
    if r.turns:  # a conversation: every turn with its own prompt, output, checks and trace
        body = "".join(_turn_section(i, turn, lang) for turn in r.turns)
        body += f"<h3>{esc(t('Trace', lang))} ({esc(t('whole conversation', lang))})</h3>{_trace(r.trace, lang)}"
    else:
        body = (
            f"<h3>{esc(t('Prompt', lang))}</h3>{_pre(r.prompt)}"
            + _judged("h3", r.output, r.assertions, lang)
            + f"<h3>{esc(t('Judge', lang))}</h3>{_judge(r, lang)}"
            f"<h3>{esc(t('Trace', lang))}</h3>{_trace(r.trace, lang)}"
        )
    return (
        f'<article class="detail" id="sample-{i}" hidden>'
        f"<h2><code>{esc(result_name(r, repeated))}</code> {badge(state, lang)}</h2>"
        '<p class="meta">' + "".join(f"<span>{esc(k)}: {esc(v)}</span>" for k, v in meta if v is not None) + "</p>"
        f"<p>{esc(scores)}</p>{error}{body}"
        f"{_urls(r.inlined_urls)}"
        "</article>"
    )


def _turn_section(i: int, turn: TurnResult, lang: str) -> str:
    n = turn.index + 1
    status, passed = turn.status, turn.passed
    if status == "error":
        mark = badge("errored", lang)
    elif status == "ok" and passed is not None:
        mark = badge("passed" if passed else "failed", lang)
    else:
        word = t("skipped", lang) if status == "skipped" else t("not graded", lang)
        mark = f'<span class="badge skip">{esc(word)}</span>'
    scores = " · ".join(f"{k} {_num(turn.scores.layer(k))}" for k in ("fact", "behavior", "judge", "composite"))
    error = f'<div class="errbox"><b>error</b>: {esc(turn.error)}</div>' if turn.error else ""
    head = f'<section class="turn" id="sample-{i}-turn-{n}"><h4>{esc(t("turn {n}", lang).format(n=n))} {mark}</h4>'
    if status == "skipped":
        return head + f'<p class="empty">{esc(t("not sent: an earlier turn failed", lang))}</p>{_pre(turn.prompt)}</section>'
    return (
        head + f'<p class="meta">{esc(scores)}</p>{error}'
        f"<h5>{esc(t('Prompt', lang))}</h5>{_pre(turn.prompt)}"
        + _judged("h5", turn.output, turn.assertions, lang)
        + f"<h5>{esc(t('Judge', lang))}</h5>{_judge(turn, lang)}"
        f"<h5>{esc(t('Trace', lang))}</h5>{_trace(turn.trace, lang)}"
        "</section>"
    )


# ---------------------------------------------------------------- the page


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


# Above either limit a page of every row and every detail panel grows too heavy for a browser;
# the page then shows the summary, the failures and the extremes, and carries the full table as
# compressed data that it draws one page at a time (omk/report/html_paged.py).
MAX_FULL_RESULTS = 2000
MAX_FULL_DATA_BYTES = 6 * 1024 * 1024  # the results' data (html_data) as JSON, a proxy for the page's size


class FirstPass:
    """What one pass over the results learns before a full page is rendered: the chart, whether
    samples repeated, and how large the results' data is."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.histogram = Histogram()
        self.repeated = False
        self.data_bytes = 0

    def add(self, i: int, r: SampleResult) -> None:
        self.histogram.add(r)
        self.repeated = self.repeated or r.repeat > 0
        self.data_bytes += len(dumps(row_data(i, r))) + len(dumps(detail_data(r, self.lang)))

    @classmethod
    def over(cls, results: Iterable[SampleResult], lang: str, limit: int | None = None) -> FirstPass:
        """The pass, stopped as soon as the data are over `limit` bytes (then the page is a large one)."""
        scan = cls(lang)
        for i, r in enumerate(results):
            scan.add(i, r)
            if limit is not None and scan.data_bytes > limit:
                break
        return scan


def page_pieces(report: ReportDocument, lang: str = "en") -> Iterator[str]:
    """The page, in pieces (a large page's data arrives in many)."""
    if len(report.results) <= MAX_FULL_RESULTS:
        scan = FirstPass.over(report.results, lang, MAX_FULL_DATA_BYTES)
        if scan.data_bytes <= MAX_FULL_DATA_BYTES:
            yield _full_page(report, scan, lang)
            return
    from omk.report import html_paged

    yield from html_paged.page_pieces(report, lang)


def render_html(report: ReportDocument | Mapping[str, Any], lang: str = "en") -> str:
    return "".join(page_pieces(ReportDocument.of(report), lang))


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
        css, scripts = css + experiment_html.CSS, [js, experiment_html.JS]
        lead = experiment_html.section(report, exp, lang)
        heading += f" · {t('control', lang)}: {exp.control}"
    return (
        _page_head(report, css, scripts, verdict, lang) + f"<main>{lead}"
        f"<h2>{esc(heading)}</h2>{_layer_cards(summary, lang)}"
        + (f'<p class="warn">{esc(skipped)}</p>' if (skipped := skipped_judge_line(summary, lang)) else "")
        + (f'<p id="repeats">{esc(line)}</p>' if (line := repeats_line(report.repeats)) else "")
        + categories.html_section(report, lang)
        + pairwise.html_section(report, lang)
        + f"<h2>{esc(t('score distribution', lang))}</h2>"
        f'<div class="charts">{chart}</div>'
    ), scripts


def page_closing(scripts: list[str]) -> str:
    return "</main>" + "".join(f"<script>{js}</script>" for js in scripts) + "</body></html>\n"


def _full_page(report: ReportDocument, scan: FirstPass, lang: str) -> str:
    """Every row and every detail panel, failed and errored results first, each group in run order.

    A panel's id is its result's place in the run (`#sample-N`), so links stay the same whatever the order."""
    threshold, repeated = report.summary.threshold, scan.repeated
    failing: list[tuple[str, str]] = []
    passing: list[tuple[str, str]] = []
    for i, r in enumerate(report.results):
        group = passing if _state(r) == "passed" else failing
        group.append((table_row(i, r, repeated, threshold, lang), detail_panel(i, r, repeated, lang)))
    ordered = failing + passing
    opening, scripts = page_opening(report, lang, scan.histogram.svg(threshold, lang), CSS, JS)
    return (
        opening + f"<h2>{esc(t('Results', lang))}</h2>{_table(''.join(row for row, _ in ordered), repeated, lang)}"
        '<div id="details">' + "".join(panel for _, panel in ordered) + "</div>" + page_closing(scripts)
    )


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
    ]
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        "script-src " + " ".join(f"'{_script_hash(js)}'" for js in scripts) + "; base-uri 'none'; form-action 'none'"
    )
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


def write_html(out_dir: Path, report: ReportDocument | Mapping[str, Any], lang: str = "en") -> Path:
    """Write report.html into `out_dir`, piece by piece, into a temporary file renamed at the end
    (a reader never sees half a page)."""
    path = out_dir / "report.html"
    from omk.fileio import open_atomic

    with open_atomic(path) as f:
        f.writelines(page_pieces(ReportDocument.of(report), lang))
    return path
