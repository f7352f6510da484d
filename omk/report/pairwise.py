"""The `pairwise` block of a two-target run (omk/engine/pairwise.py) in the Markdown, HTML and JUnit
reports: the tally (A better / B better / ties / errored / skipped) and each verdict with the
judge's reason. The terminal prints it where the run happens (`print_pairwise`).

Reports of one target have no such block: every function here then yields nothing. Verdicts are
untrusted text (the judge's reasons quote the answers), so each format escapes them its own way.
"""

from __future__ import annotations

import html
from typing import Any

from omk.report.i18n import t

DEFAULT_KEY = "pairwise"  # the key of the one verdict a non-Big Sky sample gets
MD_REASON = 200  # characters of a reason in a Markdown cell (a job summary stays short)
MD_OPEN_ROWS = 20  # more verdicts than this are folded into <details> in Markdown
TALLY = (("a_better", "A better"), ("b_better", "B better"), ("ties", "ties"), ("errored", "errored"), ("skipped", "skipped"))


def block(report: dict[str, Any]) -> dict[str, Any] | None:
    found = report.get("pairwise")
    return found if isinstance(found, dict) else None


def verdicts(pair: dict[str, Any]) -> list[dict[str, Any]]:
    found = pair.get("verdicts")
    return [v for v in found if isinstance(v, dict)] if isinstance(found, list) else []


def targets(pair: dict[str, Any]) -> tuple[str, str]:
    """A's and B's specs (`KIND:ARG`), "?" when the block does not say."""
    found = pair.get("targets") if isinstance(pair.get("targets"), list) else []
    names = [(x.get("spec") or x.get("kind") if isinstance(x, dict) else x) for x in found[:2]]
    names += [None] * (2 - len(names))
    return str(names[0] or "?"), str(names[1] or "?")


def judges(pair: dict[str, Any], lang: str) -> str:
    found = pair.get("judge")
    return ", ".join(map(str, found)) if isinstance(found, list) and found else t("none", lang)


def tally(pair: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(summary key, English label, count) in display order."""
    summary = pair.get("summary") if isinstance(pair.get("summary"), dict) else {}
    return [(key, label, int(summary.get(key) or 0)) for key, label in TALLY]


def verdict_word(v: dict[str, Any], lang: str) -> str:
    if v.get("status") == "ok":
        return t({"a": "A better", "b": "B better"}.get(v.get("winner"), "tie"), lang)
    return t(str(v.get("status") or "?"), lang, context="pairwise")


def why(v: dict[str, Any]) -> str:
    """The judge's reason for a verdict, or why there is none."""
    return str(v.get("reason") or "") if v.get("status") == "ok" else str(v.get("error") or "")


def _keyed(rows: list[dict[str, Any]]) -> bool:
    """Show the key column only when some verdict has a Big Sky comparative key."""
    return any(v.get("key") not in (None, DEFAULT_KEY) for v in rows)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ---------------------------------------------------------------- Markdown


def markdown_lines(report: dict[str, Any], lang: str, cell: Any) -> list[str]:
    """`cell` escapes one Markdown table cell (omk.report.markdown.cell)."""
    pair = block(report)
    if pair is None:
        return []
    a, b = targets(pair)
    rows = verdicts(pair)
    counts = tally(pair)
    out = [
        f"### {t('Pairwise', lang)}: A {t('vs', lang)} B",
        "",
        f"A: `{cell(a)}` · B: `{cell(b)}` · {t('judge', lang)}: {cell(judges(pair, lang))}",
        "",
        "| " + " | ".join(t(label, lang, context="pairwise") for _, label, _ in counts) + " |",
        "| " + " | ".join("---:" for _ in counts) + " |",
        "| " + " | ".join(str(n) for _, _, n in counts) + " |",
        "",
    ]
    if not rows:
        return out
    keyed = _keyed(rows)
    head = [t("sample", lang), *([t("key", lang)] if keyed else []), t("verdict", lang), t("reason", lang)]
    table = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for v in rows:
        cells = [cell(v.get("sample_id")), *([cell(v.get("key"))] if keyed else []), cell(verdict_word(v, lang))]
        table.append("| " + " | ".join([*cells, cell(_short(why(v), MD_REASON))]) + " |")
    if len(rows) > MD_OPEN_ROWS:  # a long list would push the rest of the job summary down
        return [*out, f"<details><summary>{t('Verdicts', lang)} ({len(rows)})</summary>", "", *table, "", "</details>", ""]
    return [*out, *table, ""]


# ---------------------------------------------------------------- HTML

HTML_BADGE = {"a": "pw-a", "b": "pw-b", "tie": "skip"}


def html_section(report: dict[str, Any], lang: str) -> str:
    pair = block(report)
    if pair is None:
        return ""
    esc = html.escape
    a, b = targets(pair)
    counts = tally(pair)
    head = "".join(f"<th>{esc(t(label, lang, context='pairwise'))}</th>" for _, label, _ in counts)
    body = "".join(f'<td data-key="{key}">{n}</td>' for key, _, n in counts)
    out = (
        f'<h2 id="pairwise">{esc(t("Pairwise", lang))}: A {esc(t("vs", lang))} B</h2>'
        f'<p class="meta"><span>A: <code>{esc(a)}</code></span><span>B: <code>{esc(b)}</code></span>'
        f"<span>{esc(t('judge', lang))}: {esc(judges(pair, lang))}</span></p>"
        f'<table class="pairwise-tally"><thead><tr>{head}</tr></thead><tbody><tr>{body}</tr></tbody></table>'
    )
    rows = verdicts(pair)
    if not rows:
        return out
    keyed = _keyed(rows)
    cols = [t("sample", lang), *([t("key", lang)] if keyed else []), t("verdict", lang), t("reason", lang)]
    panels: dict[str, int] = {}  # sample id -> index of its (first) panel, `sample-{i}` in report.html
    for i, r in enumerate(report.get("results") or []):
        panels.setdefault(str(r.get("sample_id")), i)
    trs = []
    for v in rows:
        status = v.get("status")
        cls = HTML_BADGE.get(v.get("winner"), "skip") if status == "ok" else ("error" if status == "error" else "skip")
        sid = str(v.get("sample_id"))
        name = f"<code>{esc(sid)}</code>"
        cells = [f'<td><a href="#sample-{panels[sid]}">{name}</a></td>' if sid in panels else f"<td>{name}</td>"]
        if keyed:
            cells.append(f'<td class="nw">{esc(str(v.get("key")))}</td>')
        cells.append(f'<td class="nw"><span class="badge {cls}">{esc(verdict_word(v, lang))}</span></td>')
        cells.append(f"<td>{esc(why(v))}{_votes(v)}</td>")
        trs.append(f'<tr class="verdict" data-status="{esc(str(status))}">' + "".join(cells) + "</tr>")
    thead = "".join(f"<th>{esc(c)}</th>" for c in cols)
    return out + f'<table class="pairwise"><thead><tr>{thead}</tr></thead><tbody>{"".join(trs)}</tbody></table>'


def _votes(v: dict[str, Any]) -> str:
    """An ensemble's votes, one line each, under the reason."""
    found = v.get("votes")
    if not isinstance(found, list) or not found:
        return ""
    esc = html.escape
    words = {1: "A", 2: "B", 0: "tie"}
    items = "".join(
        f"<li><code>{esc(str(x.get('judge')))}</code>: {esc(words.get(x.get('preference'), '—'))} — {esc(str(x.get('reason') or ''))}</li>"
        for x in found
        if isinstance(x, dict)
    )
    return f'<ul class="votes">{items}</ul>'


# ---------------------------------------------------------------- JUnit


def junit_properties(report: dict[str, Any]) -> list[tuple[str, str]]:
    """`pairwise:a_better` … for the suite's properties, then one `pairwise:verdict:<sample_id>`
    (`…:<sample_id>:<key>` for a Big Sky comparative key) = `a`, `b`, `tie`, `error` or `skipped`."""
    pair = block(report)
    if pair is None:
        return []
    a, b = targets(pair)
    summary = pair.get("summary") if isinstance(pair.get("summary"), dict) else {}
    props = [("pairwise:target_a", a), ("pairwise:target_b", b), ("pairwise:judge", judges(pair, "en"))]
    props += [(f"pairwise:{key}", str(n)) for key, _, n in [("compared", "", int(summary.get("compared") or 0)), *tally(pair)]]
    for v in verdicts(pair):
        name = f"pairwise:verdict:{v.get('sample_id')}"
        if v.get("key") not in (None, DEFAULT_KEY):
            name += f":{v.get('key')}"
        props.append((name, str(v.get("winner") if v.get("status") == "ok" else v.get("status"))))
    return props
