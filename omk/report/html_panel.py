"""A result's detail panel in report.html, built once as a tree of elements for both kinds of page.

A small page turns the tree into HTML here (`to_html`, every text through `html.escape`); a large
page carries it as JSON in its embedded data (omk/report/html_data.py) and its script builds the
same elements from it, each text through `textContent` and only with the tags and attributes that
script knows. What the panel shows, in which words and in which order, is decided only here.

A node is a text (str) or a list `[tag, attributes, *children]`, where `attributes` is None, a
class name, or a dict of attribute names and values. The tag `REPEATED` is no element: its
children show only when the run repeated samples, which a large page learns after its data are
written (the page's script reads it from the table).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from omk.records.judging import JudgeBlock
from omk.records.result import (
    AssertionResult,
    InlinedUrl,
    SampleResult,
    ToolCall,
    Trace,
    TurnResult,
    WorkspaceChanges,
)
from omk.report.i18n import check_text, t
from omk.report.i18n import note as i18n_note
from omk.report.reasons import label, size_text

Node = str | list[Any]

REPEATED = "if-repeated"
LAYERS = ("fact", "behavior", "judge", "composite")
BADGE = {"passed": "pass", "failed": "fail", "errored": "error"}
ICON = {"passed": ("✓", "ok"), "failed": ("✗", "bad"), "skipped": ("○", "skip")}
_SPECIAL = re.compile("[&<>\"']").search  # what `html.escape` changes


def el(tag: str, attrs: str | dict[str, str] | None, *children: Node | None) -> list[Any]:
    """An element; children that are None are left out."""
    if None in children:
        return [tag, attrs, *(c for c in children if c is not None)]
    return [tag, attrs, *children]


def to_html(node: Node, repeated: bool) -> str:
    """The tree as HTML."""
    if isinstance(node, str):
        return _esc(node)
    out: list[str] = []
    _write(node, repeated, out.append)
    return "".join(out)


def _esc(s: str) -> str:
    return escape(s) if _SPECIAL(s) else s


def _write(node: list[Any], repeated: bool, put: Callable[[str], None]) -> None:
    tag, attrs = node[0], node[1]
    if tag == REPEATED and not repeated:
        return
    if tag != REPEATED:
        if attrs is None:
            put(f"<{tag}>")
        elif isinstance(attrs, str):
            put(f'<{tag} class="{_esc(attrs)}">')
        else:
            put(f"<{tag}" + "".join(f' {k}="{_esc(v)}"' for k, v in attrs.items()) + ">")
    for child in node[2:]:
        if isinstance(child, str):
            put(_esc(child))
        else:
            _write(child, repeated, put)
    if tag != REPEATED:
        put(f"</{tag}>")


def state(r: SampleResult) -> str:
    if r.status == "error":
        return "errored"
    return "passed" if r.passed else "failed"


def num(v: Any, digits: int = 2) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _str(value: Any) -> str:
    """A value as the panel prints it (None as nothing)."""
    return "" if value is None else str(value)


def text(value: Any) -> str | None:
    """A value as a panel shows it in a `<pre>`: strings as they are, JSON indented; None for
    nothing to show."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def pre(value: Any, lang: str = "en") -> list[Any]:
    shown = text(value)
    return el("p", "empty", t("(none)", lang)) if shown is None else el("pre", None, shown)


def badge(word_state: str, lang: str, word: str | None = None) -> list[Any]:
    """The coloured word of a state (`passed`, `failed`, `errored`; anything else is grey)."""
    return el("span", f"badge {BADGE.get(word_state, 'skip')}", word or t(word_state, lang))


def scores_line(scores: Any) -> str:
    return " · ".join(f"{k} {num(scores.layer(k))}" for k in LAYERS)


def errbox(error: str | None, lang: str = "en") -> list[Any] | None:
    return el("div", "errbox", el("b", None, t("error", lang)), f": {error}") if error else None


def panel(i: int, r: SampleResult, lang: str) -> list[Any]:
    """What result `i` shows when it is opened: the children of its panel."""
    where = f"{r.source_file}:{r.source_line}" if r.source_line else r.source_file
    meta = [
        ("source", where),
        ("capability", ", ".join(r.capability) or None),
        ("difficulty", r.difficulty),
        ("tripwire", t("yes", lang) if r.tripwire else None),
    ]
    spans = [el("span", None, f"{t(k, lang)}: {v}") for k, v in meta if v is not None]
    spans.append(el(REPEATED, None, el("span", None, f"{t('repeat', lang)}: {r.repeat}")))
    spans.append(el("span", None, f"{t('duration', lang)}: {r.duration_ms or 0:.0f} ms"))
    if r.cached:  # the answer is an earlier call's, from the response cache
        spans.append(el("span", None, t("from the cache", lang)))
    name = el("code", None, str(r.sample_id), el(REPEATED, None, f"#{r.repeat}"))
    nodes: list[Node | None] = [
        el("h2", None, name, " ", badge(state(r), lang)),
        el("p", "meta", *spans),
        el("p", None, scores_line(r.scores)),
        errbox(r.error, lang),
    ]
    if r.turns:  # a conversation: every turn with its own prompt, output, checks and trace
        nodes += [_turn(i, x, lang) for x in r.turns]
        nodes += [el("h3", None, f"{t('Trace', lang)} ({t('whole conversation', lang)})"), *_trace(r.trace, lang)]
    else:
        nodes += _graded("h3", r, lang)
    return [n for n in nodes + _urls(r.inlined_urls, lang) if n is not None]


def _graded(h: str, r: SampleResult | TurnResult, lang: str) -> list[Node | None]:
    """The prompt, the output beside the assertions that judged it, the judge and the trace."""
    judged = el(
        "div",
        "judged",
        el("div", "judged-output", el(h, None, t("Output", lang)), pre(r.output, lang)),
        el("div", "judged-assertions", el(h, None, t("Assertions", lang)), _assertions(r.assertions, lang)),
    )
    return [
        el(h, None, t("Prompt", lang)),
        pre(r.prompt, lang),
        judged,
        el(h, None, t("Judge", lang)),
        *_judge(r, lang),
        el(h, None, t("Trace", lang)),
        *_trace(r.trace, lang),
    ]


def _assertions(assertions: Sequence[AssertionResult], lang: str) -> list[Any]:
    if not assertions:
        return el("p", "empty", t("(no assertions)", lang))
    items = []
    for a in assertions:
        status = a.status or ("passed" if a.passed else "failed")
        icon, cls = ICON.get(status, ("?", ""))
        extra = f"{_str(a.layer)} · {t('weight', lang)} {_str(a.weight)}"
        if a.metric is not None:
            extra += f" · {t('metric', lang)} {a.metric}"
        if a.score is not None:
            extra += f" · {t('score', lang)} {a.score}"
        items.append(
            el(
                "li",
                f"assertion {status}",
                el("span", {"class": cls, "title": status}, icon),
                " ",
                el("code", None, label(a)),
                " ",
                el("small", "meta", f"[{extra}]"),
                *_message(check_text(a.message or "", lang)),
                _assertions(a.children, lang) if a.children else None,
            )
        )
    return el("ul", "asserts", *items)


def _message(message: str | None) -> list[Node | None]:
    """An assertion's message; one of several lines (a tool_sequence's two columns) in a `<pre>`,
    so its columns stay aligned."""
    if not message:
        return []
    head, sep, rest = message.partition("\n")
    return [f" — {head}", el("pre", "assert-detail", rest) if sep else None]


def _workspace(changes: WorkspaceChanges | None, lang: str) -> list[Node | None]:
    """The files the agent created, changed and deleted in its workspace, each new text's start
    behind a `<details>`."""
    if changes is None:
        return []
    if not changes:
        return [el("p", "empty", t("workspace: no file created, changed or deleted", lang))]
    rows = []
    for kind, c in changes.all():
        shown = None
        if c.content is not None:
            summary = t("{n} characters (the start)" if c.truncated else "{n} characters", lang).format(n=len(c.content))
            shown = el("details", None, el("summary", None, summary), el("pre", None, c.content))
        rows.append(
            el(
                "tr",
                f"ws-file ws-{kind}",
                el("td", None, t(kind, lang, "workspace")),
                el("td", None, el("code", None, c.path)),
                el("td", "num", size_text(c.size)),
                el("td", {"data-label": t("content", lang)}, shown),
            )
        )
    heads = [el("th", None, t(h, lang)) for h in ("workspace", "file")] + [el("th", "num", t("size", lang)), el("th", None, t("content", lang))]
    return [el("table", "workspace", el("thead", None, el("tr", None, *heads)), el("tbody", None, *rows))]


def _judge_item(what: str, lang: str) -> str:
    """`rubric` / `dimension NAME` in the report's language (the dimension's own name stays)."""
    if what.startswith("dimension "):
        return f"{t('dimension', lang)} {what[len('dimension '):]}"
    return t(what, lang)


def _judge(r: SampleResult | TurnResult, lang: str) -> list[Node | None]:
    block: JudgeBlock | None = r.judge
    if block is None:
        if r.judge_skipped:
            return [el("p", "skip", f"{t('judge skipped', lang)}: {check_text(r.judge_skipped, lang)}")]
        return [el("p", "empty", t("(no judge)", lang))]
    out: list[Node | None] = [el("p", None, f"{t('judge', lang)} {t('score', lang)} ", el("b", None, _str(block.score)))]
    rows = [
        el("tr", None, el("td", None, _judge_item(what, lang)), el("td", "num", _str(score)), el("td", None, _str(reason)))
        for what, score, reason in block.items()
    ]
    if rows:
        heads = el("tr", None, el("th", None, t("item", lang)), el("th", "num", t("score", lang)), el("th", None, t("reason", lang)))
        out.append(el("table", None, el("thead", None, heads), el("tbody", None, *rows)))
    if block.extra:
        out.append(pre(dict(block.extra), lang))
    return out


def _trace(tr: Trace, lang: str) -> list[Node | None]:
    facts = [
        ("turns", tr.turns),
        ("cost", None if tr.cost_usd is None else f"${tr.cost_usd:.6f}"),
        ("latency", None if tr.latency_ms is None else f"{tr.latency_ms:.0f} ms"),
        ("tokens in", tr.tokens.input),
        ("tokens out", tr.tokens.output),
    ]
    out: list[Node | None] = [el("p", "meta", *(el("span", None, f"{t(k, lang)}: {'—' if v is None else v}") for k, v in facts))]
    stats = tr.mock_stats
    if stats is not None:
        per = ", ".join(f"{k}×{v}" for k, v in stats.per_mock.items()) or "—"
        said = t("mocks: {hits} hit(s), {misses} miss(es); {per}", lang)
        out.append(el("p", None, said.format(hits=_str(stats.hits), misses=_str(stats.misses), per=per)))
    out += [el("p", "warn", i18n_note(n, lang)) for n in tr.notes]  # e.g. mock drift, a note from the target
    out += _workspace(tr.workspace, lang)
    if not tr.tool_calls:
        return [*out, el("p", "empty", t("(no tool calls)", lang))]
    rows = []
    for n, c in enumerate(tr.tool_calls, 1):
        error: list[Node | None] = [" ", el("span", "bad", t("error", lang))] if c.is_error else []
        rows.append(
            el(
                "tr",
                "tool-call",
                el("td", "num", str(n)),
                el("td", None, el("code", None, _str(c.tool)), *error),
                el("td", {"data-label": t("input", lang)}, pre(c.input, lang)),
                el("td", {"data-label": t("output", lang)}, pre(c.output, lang)),
                el("td", {"data-label": t("answered by", lang)}, _answered_by(c, lang)),
            )
        )
    heads = [el("th", "num", "#"), *(el("th", None, t(h, lang)) for h in ("tool", "input", "output", "answered by"))]
    return [*out, el("table", None, el("thead", None, el("tr", None, *heads)), el("tbody", None, *rows))]


def _answered_by(call: ToolCall, lang: str) -> Node | str:
    """The mock's key, or who else answered the call (`outcome`); an unsupported call stands out."""
    if call.mocked:
        return _str(call.mock_key)
    if call.outcome == "unsupported":
        return el("span", "bad", t("unsupported by this agent", lang))
    said = {"denied": "denied", "ran": "the real tool", "refused": "refused by the agent CLI"}.get(call.outcome or "")
    return "—" if said is None else t(said, lang, "answered")


def _urls(urls: Sequence[Any], lang: str) -> list[Node | None]:
    if not urls:
        return []
    out: list[Node | None] = [el("h3", None, t("URLs inlined", lang))]
    for u in urls:
        if isinstance(u, InlinedUrl):
            meta = dict(u.meta)
            out.append(el("h4", None, el("code", None, _str(u.url or ""))))
            out += [pre(meta, lang) if meta else None, pre(u.body, lang) if u.body else None]
        else:
            out.append(pre(u, lang))
    return out


def _turn(i: int, x: TurnResult, lang: str) -> list[Any]:
    n = x.index + 1
    if x.status == "error":
        mark = badge("errored", lang)
    elif x.status == "ok" and x.passed is not None:
        mark = badge("passed" if x.passed else "failed", lang)
    else:
        mark = badge("skip", lang, t("skipped", lang) if x.status == "skipped" else t("not graded", lang))
    head = el("h4", None, f"{t('turn {n}', lang).format(n=n)} ", mark)
    attrs = {"class": "turn", "id": f"sample-{i}-turn-{n}"}
    if x.status == "skipped":
        return el("section", attrs, head, el("p", "empty", t("not sent: an earlier turn failed", lang)), pre(x.prompt, lang))
    return el("section", attrs, head, el("p", "meta", scores_line(x.scores)), errbox(x.error, lang), *_graded("h5", x, lang))
