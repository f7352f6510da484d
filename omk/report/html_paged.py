"""The `report.html` of a large run: still one self-contained file, light enough to open.

Above the size where a row and a detail panel for every result make the page too heavy
(omk/report/html_report.py decides), the page shows what a reader looks at first, rendered on the
server as on a small page: the summary, the charts, the first failed and errored results with
their panels, and the slowest and the costliest samples. The full table comes from embedded
compressed data (omk/report/html_data.py): the page's script draws it one page of rows at a time,
with the text and status filters and the column sort of a small page, and draws a result's panel
only when it is opened, from text and never from markup.

The results are read once, in run order, and never kept: only the first failures (to render
them) and a few numbers of the slowest and costliest results (in bounded heaps) stay in memory.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from typing import NamedTuple

from omk.records.report import ReportDocument
from omk.records.result import SampleResult
from omk.report.html_data import EmbeddedData, num, state
from omk.report.html_report import (
    CSS,
    ORDER_NOTE,
    Histogram,
    badge,
    detail_panel,
    esc,
    page_closing,
    page_opening,
    table_controls,
    table_heads,
    table_row,
)
from omk.report.i18n import t
from omk.report.reasons import result_name

FAILURES_SHOWN = 100  # failed and errored results rendered with their panels
TOP = 10  # results in the slowest and in the costliest list
PAGE_SIZE = 100  # rows of the full table drawn at once




LARGE_NOTE = (
    "A large run: this page lists the failures and errors, the slowest and the costliest samples, "
    "and shows the full table {n} rows at a time."
)
UNREADABLE = (
    "This browser cannot read the table's embedded data (it needs DecompressionStream); "
    "the sections above still list the failures."
)

CSS_PAGED = """
table.listing tbody tr{cursor:pointer}table.listing tbody tr:hover{background:var(--hover)}
table.listing tbody tr.selected{background:var(--selected)}
.pager{display:inline-flex;gap:8px;align-items:center}
.pager button{padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--fg);
font:inherit;cursor:pointer}
.pager button:disabled{opacity:.5;cursor:default}
#table-note:empty{display:none}
@media (max-width: 480px){
table.listing thead{display:none}
table.listing tbody tr{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));border-bottom:1px solid var(--line);padding:4px 0}
table.listing tbody td{border:0;padding:2px 6px;text-align:left}table.listing tbody td:first-child{grid-column:1/-1}
.pager{flex-wrap:wrap}
}
"""


class Extreme(NamedTuple):
    """What the slowest and costliest lists show of a result."""

    position: int  # of the result in the run (a field named index would hide the tuple's index())
    sample_id: str
    repeat: int
    state: str
    composite: float | None
    duration_ms: float | None
    cost: float | None


class LargePass:
    """Everything the page needs from one pass over the results."""

    def __init__(self, data: EmbeddedData) -> None:
        self.data = data
        self.histogram = Histogram()
        self.repeated = False
        self.failing = 0
        self.failures: list[tuple[int, SampleResult]] = []  # the first FAILURES_SHOWN, in run order
        self.slowest: list[tuple[float, int, Extreme]] = []  # min-heaps of (value, -index, what)
        self.costliest: list[tuple[float, int, Extreme]] = []

    def add(self, i: int, r: SampleResult) -> None:
        self.histogram.add(r)
        self.repeated = self.repeated or r.repeat > 0
        st = state(r)
        if st != "passed":
            self.failing += 1
            if len(self.failures) < FAILURES_SHOWN:
                self.failures.append((i, r))
        composite = r.scores.composite if r.status == "ok" else None
        seen = Extreme(i, r.sample_id, r.repeat, st, composite, r.duration_ms, r.trace.cost_usd)
        _keep_top(self.slowest, seen.duration_ms, seen)
        _keep_top(self.costliest, seen.cost, seen)
        self.data.add(i, r)


def _keep_top(heap: list[tuple[float, int, Extreme]], value: float | None, seen: Extreme) -> None:
    """Keep the TOP largest values; on a tie the earlier result stays."""
    if value is None:
        return
    item = (value, -seen.position, seen)
    if len(heap) < TOP:
        heapq.heappush(heap, item)
    elif item[:2] > heap[0][:2]:
        heapq.heapreplace(heap, item)


def page_pieces(report: ReportDocument, lang: str) -> Iterator[str]:
    """The page in pieces; the embedded data streams out of temporary files."""
    threshold = report.summary.threshold
    with EmbeddedData.open(lang) as data:
        seen = LargePass(data)
        for i, r in enumerate(report.results):
            seen.add(i, r)
        chart = seen.histogram.svg(threshold, lang)
        opening, scripts = page_opening(report, lang, chart, CSS + CSS_PAGED, JS)
        yield opening
        yield f'<p class="meta" id="large-note">{esc(t(LARGE_NOTE, lang).format(n=PAGE_SIZE))}</p>'
        yield _failures(seen, threshold, lang)
        yield _extremes("slowest", t("Slowest samples", lang), seen.slowest, seen.repeated, lang)
        yield _extremes("costliest", t("Costliest samples", lang), seen.costliest, seen.repeated, lang)
        yield _full_table(seen.repeated, threshold, lang)
        yield _labels(lang)
        yield from data.blocks()
        yield page_closing(scripts)


def _failures(seen: LargePass, threshold: float | None, lang: str) -> str:
    head = f'<h2 id="failures">{esc(t("Failures and errors", lang))} ({seen.failing})</h2>'
    if not seen.failing:
        return head + f'<p class="empty">{esc(t("no failed or errored samples", lang))}</p>'
    if seen.failing > len(seen.failures):
        head += f'<p class="meta">{esc(t("showing the first {n} of {m}, in run order", lang).format(n=len(seen.failures), m=seen.failing))}</p>'
    rows = "".join(table_row(i, r, seen.repeated, threshold, lang) for i, r in seen.failures)
    panels = "".join(detail_panel(i, r, seen.repeated, lang) for i, r in seen.failures)
    return (
        head + f'<table class="listing" id="failures-table"><thead><tr>{table_heads(seen.repeated, lang)}</tr></thead>'
        f'<tbody>{rows}</tbody></table><div id="failure-details">{panels}</div>'
    )


def _extremes(key: str, title: str, heap: list[tuple[float, int, Extreme]], repeated: bool, lang: str) -> str:
    """The slowest (`key` "slowest") or costliest results, the largest first."""
    head = f'<h2 id="{key}">{esc(title)}</h2>'
    if not heap:
        word = "no result has a duration" if key == "slowest" else "no result has a cost"
        return head + f'<p class="empty">{esc(t(word, lang))}</p>'
    measure = t("duration", lang) if key == "slowest" else t("cost", lang)
    heads = f'<th>{esc(t("sample", lang))}</th><th>{esc(t("status", lang))}</th>'
    heads += f'<th class="num">{esc(measure)}</th><th class="num">{esc(t("composite", lang))}</th>'
    rows = []
    for _, _, x in sorted(heap, reverse=True):
        value = f"{x.duration_ms:.0f} ms" if key == "slowest" else f"${x.cost:.4f}"
        rows.append(
            f'<tr data-index="{x.position}"><td><a href="#sample-{x.position}"><code>{esc(result_name(x, repeated))}</code></a></td>'
            f'<td>{badge(x.state, lang)}</td><td class="num">{esc(value)}</td><td class="num">{num(x.composite)}</td></tr>'
        )
    return head + f'<table class="extremes" id="{key}-table"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _full_table(repeated: bool, threshold: float | None, lang: str) -> str:
    """The full table's frame: the script fills its body from the embedded rows."""
    limit = "" if threshold is None else f' data-threshold="{threshold}"'
    return (
        f"<h2 id=\"all-results\">{esc(t('All results', lang))}</h2>"
        + table_controls(lang) + _pager(lang, "prev", "page", "next") + "</div>"
        f'<p class="meta" id="table-note">{esc(t("loading the table…", lang))}</p>'
        f'<table id="results" data-repeated="{int(repeated)}" data-page-size="{PAGE_SIZE}"{limit}>'
        f"<caption>{esc(t(ORDER_NOTE, lang))}</caption>"
        f"<thead><tr>{table_heads(repeated, lang)}</tr></thead><tbody></tbody></table>"
        f'<div class="controls">{_pager(lang)}</div>'
        '<article class="detail" id="sample-view" hidden></article>'
    )


def _pager(lang: str, *ids: str) -> str:
    """Previous, "page N of M", next; `ids` name the three (the pager above the table has them)."""
    prev, where, next_ = (f' id="{i}"' for i in ids) if ids else ("", "", "")
    return (
        f'<span class="pager"><button type="button" data-step="-1"{prev}>‹ {esc(t("previous", lang))}</button>'
        f'<span class="page-label"{where}></span>'
        f'<button type="button" data-step="1"{next_}>{esc(t("next", lang))} ›</button></span>'
    )


def _labels(lang: str) -> str:
    """The words the script shows, as JSON in a block it reads (not a script to run)."""
    columns = {k: t(k, lang) for k in ("repeat", "status", "fact", "behavior", "judge", "composite", "cost", "latency")}
    words = {
        **{k: t(k, lang) for k in ("passed", "failed", "errored")},
        "columns": {**columns, "state": columns["status"]},
        "page": t("page {n} of {m}", lang),
        "unreadable": t(UNREADABLE, lang),
        "judgeSkipped": t("judge skipped", lang),
        "judge": t("judge", lang),
        "score": t("score", lang),
        "item": t("item", lang),
        "reason": t("reason", lang),
        "turn": t("turn {n}", lang),
        "notSent": t("not sent: an earlier turn failed", lang),
        "wholeConversation": t("whole conversation", lang),
        **{k: t(k, lang) for k in ("Prompt", "Output", "Assertions", "Judge", "Trace")},
    }
    text = json.dumps(words, ensure_ascii=False).replace("<", "\\u003c")
    return f'<script type="application/json" id="omk-labels">{text}</script>'


JS = """
(function(){
  'use strict';
  var D=document, $=function(id){return D.getElementById(id);};
  var L=JSON.parse($('omk-labels').textContent);
  var table=$('results'), body=table.tBodies[0], view=$('sample-view'), note=$('table-note');
  var q=$('filter'), st=$('status-filter'), count=$('count');
  var labels=D.querySelectorAll('.pager .page-label'), steps=D.querySelectorAll('.pager button[data-step]');
  var repeated=table.getAttribute('data-repeated')==='1', SIZE=+table.getAttribute('data-page-size');
  var threshold=table.hasAttribute('data-threshold')?parseFloat(table.getAttribute('data-threshold')):null;
  var CHUNK=+$('omk-rows').getAttribute('data-chunk');
  var KEYS=['id'].concat(repeated?['repeat']:[],['state','fact','behavior','judge','composite','cost','latency']);
  var BADGE={passed:'pass',failed:'fail',errored:'error'}, ICON={passed:['\\u2713','ok'],failed:['\\u2717','bad'],skipped:['\\u25cb','skip']};
  var byIndex=[], rows=[], shown=[], page=0, selected=null, chunks={}, cached=[];
  var collator=new Intl.Collator();

  function bytes(id){
    var s=atob($(id).textContent), a=new Uint8Array(s.length);
    for(var i=0;i<s.length;i++){a[i]=s.charCodeAt(i);}
    return a;
  }
  function unpack(id){
    return Promise.resolve(id).then(function(id){
      return new Response(new Blob([bytes(id)]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
    }).then(JSON.parse);
  }
  // as Python formats a number with a fixed count of decimals: an exact half rounds to even
  function num(v,d){
    if(v===null||v===undefined){return '\\u2014';}
    var x=Math.abs(v).toFixed(d+25), cut=x.length-25;
    if(/^50*$/.test(x.slice(cut))){
      var head=x.slice(0,cut).replace(/\\.$/,'');
      if(+head.charAt(head.length-1)%2===0){return (v<0?'-':'')+head;}
    }
    return v.toFixed(d);
  }
  // text as it reads in a page rendered on the server, whose parser drops NUL characters
  function clean(s){return String(s).replace(/\\u0000/g,'');}
  function el(tag,cls,text){
    var e=D.createElement(tag);
    if(cls){e.className=cls;}
    if(text!==undefined&&text!==null){e.textContent=clean(text);}
    return e;
  }
  function add(parent){
    for(var i=1;i<arguments.length;i++){if(arguments[i]){parent.appendChild(arguments[i]);}}
    return parent;
  }
  function txt(s){return D.createTextNode(clean(s));}
  function badge(state,word){return el('span','badge '+(BADGE[state]||'skip'),word||L[state]||state);}
  function labelled(td,name){td.setAttribute('data-label',name);return td;}

  function cell(r,key){
    var v=r[key], td;
    if(key==='id'){return add(el('td'),el('code',null,v));}
    if(key==='state'){return labelled(add(el('td'),badge(v)),L.columns.state);}
    td=labelled(el('td','num'),L.columns[key]);
    if(key==='repeat'){td.textContent=v;}
    else if(key==='cost'){td.textContent=v===null?'\\u2014':'$'+num(v,4);}
    else if(key==='latency'){td.textContent=v===null?'\\u2014':num(v,0)+' ms';}
    else{td.textContent=num(v,2); if(v!==null&&threshold!==null){td.className+=v>=threshold?' ok':' bad';}}
    return td;
  }
  function draw(){
    var pages=Math.max(1,Math.ceil(shown.length/SIZE)), frag=D.createDocumentFragment();
    page=Math.max(0,Math.min(page,pages-1));
    shown.slice(page*SIZE,page*SIZE+SIZE).forEach(function(r){
      var tr=el('tr',r.index===selected?'selected':null);
      tr.setAttribute('data-index',r.index); tr.setAttribute('data-state',r.state);
      KEYS.forEach(function(k){tr.appendChild(cell(r,k));});
      frag.appendChild(tr);
    });
    body.textContent=''; body.appendChild(frag);
    count.textContent=shown.length+' / '+rows.length;
    Array.prototype.forEach.call(labels,function(s){s.textContent=L.page.replace('{n}',page+1).replace('{m}',pages);});
    Array.prototype.forEach.call(steps,function(b){b.disabled=b.getAttribute('data-step')<0?page===0:page>=pages-1;});
  }
  function apply(){
    var text=q.value.trim().toLowerCase(), want=st.value;
    shown=rows.filter(function(r){return (!want||r.state===want)&&(!text||r.search.indexOf(text)!==-1);});
    page=0; draw();
  }
  function sortBy(th,i){
    var key=KEYS[i], asc=th.getAttribute('aria-sort')!=='ascending', numeric=th.classList.contains('num');
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',asc?'ascending':'descending');
    rows.sort(function(a,b){
      var x=a[key], y=b[key], c;
      if(numeric){x=x===null?-Infinity:x; y=y===null?-Infinity:y; c=x<y?-1:x>y?1:0;}
      else{c=collator.compare(String(x),String(y));}
      return asc?c:-c;
    });
    apply();
  }

  function pre(s){return s===null||s===undefined||s===''?el('p','empty','(none)'):el('pre',null,s);}
  function meta(pairs){
    var p=el('p','meta');
    pairs.forEach(function(kv){p.appendChild(el('span',null,kv[0]+': '+kv[1]));});
    return p;
  }
  function assertions(list){
    if(!list.length){return el('p','empty','(no assertions)');}
    var ul=el('ul','asserts');
    list.forEach(function(a){
      var icon=ICON[a.status]||['?',''], mark=el('span',icon[1],icon[0]), li=el('li','assertion '+a.status);
      mark.title=a.status;
      add(li,mark,txt(' '),el('code',null,a.label),txt(' '),el('small','meta','['+a.meta+']'));
      if(a.message){li.appendChild(txt(' \\u2014 '+a.message));}
      if(a.children.length){li.appendChild(assertions(a.children));}
      ul.appendChild(li);
    });
    return ul;
  }
  function judge(x){
    var j=x.judge, frag=D.createDocumentFragment(), t, tb;
    if(!j){return x.judge_skipped?el('p','skip',L.judgeSkipped+': '+x.judge_skipped):el('p','empty','(no judge)');}
    add(frag,add(el('p',null,L.judge+' '+L.score+' '),el('b',null,j.score)));
    if(j.items.length){
      t=add(el('table'),add(el('thead'),add(el('tr'),el('th',null,L.item),el('th','num',L.score),el('th',null,L.reason))));
      tb=t.appendChild(el('tbody'));
      j.items.forEach(function(it){add(tb,add(el('tr'),el('td',null,it[0]),el('td','num',it[1]),el('td',null,it[2])));});
      frag.appendChild(t);
    }
    if(j.extra){frag.appendChild(pre(j.extra));}
    return frag;
  }
  function trace(tr){
    var frag=add(D.createDocumentFragment(),meta(tr.facts),tr.mocks?el('p',null,tr.mocks):null), t, tb;
    if(!tr.calls.length){return add(frag,el('p','empty','(no tool calls)'));}
    t=add(el('table'),add(el('thead'),add(el('tr'),el('th','num','#'),el('th',null,'tool'),el('th',null,'input'),
      el('th',null,'output'),el('th',null,'mock'))));
    tb=t.appendChild(el('tbody'));
    tr.calls.forEach(function(c,n){
      var tool=add(el('td'),el('code',null,c.tool));
      if(c.error){add(tool,txt(' '),el('span','bad','error'));}
      add(tb,add(el('tr','tool-call'),el('td','num',n+1),tool,labelled(add(el('td'),pre(c.input)),'input'),
        labelled(add(el('td'),pre(c.output)),'output'),labelled(el('td',null,c.mock),'mock')));
    });
    return add(frag,t);
  }
  function urls(list){
    if(!list.length){return null;}
    var frag=add(D.createDocumentFragment(),el('h3',null,'URLs inlined'));
    list.forEach(function(u){
      if('raw' in u){frag.appendChild(pre(u.raw)); return;}
      add(frag,add(el('h4'),el('code',null,u.url)),u.meta?pre(u.meta):null,u.body?pre(u.body):null);
    });
    return frag;
  }
  function judged(h,x){
    return add(el('div','judged'),add(el('div','judged-output'),el(h,null,L.Output),pre(x.output)),
      add(el('div','judged-assertions'),el(h,null,L.Assertions),assertions(x.assertions)));
  }
  function errbox(text){return add(el('div','errbox'),el('b',null,'error'),txt(': '+text));}
  function turn(i,x){
    var s=el('section','turn');
    s.id='sample-'+i+'-turn-'+x.n;
    add(s,add(el('h4',null,L.turn.replace('{n}',x.n)+' '),badge(x.badge[0],x.badge[1])));
    if(x.skipped){return add(s,el('p','empty',L.notSent),pre(x.prompt));}
    return add(s,el('p','meta',x.scores),x.error?errbox(x.error):null,el('h5',null,L.Prompt),pre(x.prompt),judged('h5',x),
      el('h5',null,L.Judge),judge(x),el('h5',null,L.Trace),trace(x.trace));
  }
  function render(i,d){
    var r=byIndex[i], m=d.meta.slice();
    if(repeated){m.push(['repeat',String(r.repeat)]);}
    m.push(['duration',d.duration]);
    view.textContent=''; view.setAttribute('data-index',i);
    add(view,add(el('h2'),el('code',null,repeated?r.id+'#'+r.repeat:r.id),txt(' '),badge(r.state)),meta(m),
      el('p',null,d.scores),d.error?errbox(d.error):null);
    if(d.turns){
      d.turns.forEach(function(x){view.appendChild(turn(i,x));});
      add(view,el('h3',null,L.Trace+' ('+L.wholeConversation+')'),trace(d.trace));
    }else{
      add(view,el('h3',null,L.Prompt),pre(d.prompt),judged('h3',d),el('h3',null,L.Judge),judge(d),el('h3',null,L.Trace),trace(d.trace));
    }
    add(view,urls(d.urls));
  }
  function details(i){
    var k=Math.floor(i/CHUNK);
    if(!chunks[k]){
      chunks[k]=unpack('omk-details-'+k); cached.push(k);
      if(cached.length>16){delete chunks[cached.shift()];}
    }
    return chunks[k].then(function(list){return list[i-k*CHUNK];});
  }
  function mark(i){
    selected=i;
    Array.prototype.forEach.call(D.querySelectorAll('#results tbody tr, table.listing tbody tr'),function(r){
      var at=r.hasAttribute('data-index')?r.getAttribute('data-index'):(r.getAttribute('data-detail')||'').slice(7);
      r.classList.toggle('selected',at!==''&&+at===i);
    });
  }
  function reveal(panel){
    Array.prototype.forEach.call(D.querySelectorAll('.detail'),function(d){d.hidden=d!==panel;});
    panel.scrollIntoView({block:'start'});
  }
  // a panel rendered on the server (the failures') when there is one, unless asked near the table
  function show(id,nearTable){
    var fixed=$(id), m=/^sample-(\\d+)$/.exec(id), i=m?+m[1]:null;
    if(!nearTable&&fixed&&fixed.classList.contains('detail')){mark(i); reveal(fixed); return Promise.resolve();}
    if(i===null){return Promise.resolve();}
    return ready.then(function(){
      if(i>=byIndex.length){return;}
      return details(i).then(function(d){render(i,d); mark(i); reveal(view);});
    });
  }
  function go(id,nearTable){history.replaceState(null,'','#'+id); return show(id,nearTable);}

  function load(data){
    byIndex=data;
    data.forEach(function(r){r.search=[r.id,r.state].concat(r.capability,[r.difficulty||'']).join(' ').toLowerCase();});
    rows=data.filter(function(r){return r.state!=='passed';}).concat(data.filter(function(r){return r.state==='passed';}));
    note.textContent=''; apply();
  }
  var ready=unpack('omk-rows').then(load,function(){note.textContent=L.unreadable;});
  q.addEventListener('input',apply); st.addEventListener('change',apply);
  Array.prototype.forEach.call(steps,function(b){
    b.addEventListener('click',function(){page+=+b.getAttribute('data-step'); draw();});
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){th.addEventListener('click',function(){sortBy(th,i);});});
  body.addEventListener('click',function(e){
    var tr=e.target.closest('tr'); if(tr){go('sample-'+tr.getAttribute('data-index'),true);}
  });
  Array.prototype.forEach.call(D.querySelectorAll('table.listing tbody tr'),function(tr){
    tr.addEventListener('click',function(){go(tr.getAttribute('data-detail'),false);});
  });
  window.addEventListener('hashchange',function(){show(decodeURIComponent(location.hash.slice(1)),false);});
  if(location.hash.length>1){show(decodeURIComponent(location.hash.slice(1)),false);}
})();
"""
