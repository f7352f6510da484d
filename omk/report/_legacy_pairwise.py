"""The pairwise judge's verdicts (omk/engine/pairwise.py) in the Markdown, HTML and JUnit reports:
per treatment compared with the control, the tally (A better / B better / ties / errored /
skipped), B's win rate with its interval, how often the two orders disagreed, and each verdict
with the judge's reason. The terminal prints the same where the run happens
(omk/report/pairwise_terminal.py).

The verdicts live in the experiment block (`experiment.pairwise`); a report written before
two-target runs became experiments carries them as a top-level `pairwise` block, which is still
rendered. A report without either yields nothing here. Verdicts are untrusted text (the judge's
reasons quote the answers), so each format escapes them its own way.
"""

from __future__ import annotations

import html
from typing import Any

from omk.report.i18n import t

DEFAULT_KEY = "pairwise"  # the key of the one verdict a non-Big Sky sample gets
MD_REASON = 200  # characters of a reason in a Markdown cell (a job summary stays short)
MD_OPEN_ROWS = 20  # more verdicts than this are folded into <details> in Markdown
TALLY = (("a_better", "A better"), ("b_better", "B better"), ("ties", "ties"), ("errored", "errored"), ("skipped", "skipped"))
POSITION = (("first", "each order preferred the answer shown first"), ("second", "each order preferred the answer shown second"), ("partial", "one order called a tie"))


def pairs(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every treatment-vs-control comparison, each with the judge that made it (`judge`)."""
    experiment = report.get("experiment")
    found = experiment.get("pairwise") if isinstance(experiment, dict) else None
    if isinstance(found, dict) and isinstance(found.get("pairs"), list):
        return [{**p, "judge": found.get("judge")} for p in found["pairs"] if isinstance(p, dict)]
    legacy = report.get("pairwise")
    return [legacy] if isinstance(legacy, dict) else []


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


def title(pair: dict[str, Any], index: int, count: int, lang: str) -> str:
    head = f"{t('Pairwise', lang)}: A {t('vs', lang)} B"
    return f"{head} — {pair.get('treatment')}" if count > 1 and pair.get("treatment") else head


def rate_lines(pair: dict[str, Any], lang: str) -> list[str]:
    """B's win rate per comparison key, then how often the two orders disagreed (plain text)."""
    out = []
    rates = [r for r in pair.get("win_rate") or [] if isinstance(r, dict)]
    for r in rates:
        key = f" ({r.get('key')})" if len(rates) > 1 or r.get("key") != DEFAULT_KEY else ""
        label = t("B's win rate", lang) + key
        if not r.get("decisive"):
            out.append(f"{label}: — ({t('no decisive verdict', lang)})")
            continue
        ci = r.get("ci") or {}
        level = f"{float(ci.get('level') or 0.95):.0%}"
        out.append(
            f"{label}: {float(r['rate']):.0%} {t('of', lang)} {r['decisive']} {t('decisive verdicts', lang)} "
            f"({level} CI {float(ci.get('low', 0)):.0%}–{float(ci.get('high', 1)):.0%}, Wilson; "
            f"{t('sign test', lang)} p = {float(r.get('p_value') or 1):.3g}) · {t('ties', lang)} {r.get('ties', 0)}"
        )
    position = pair.get("position")
    if isinstance(position, dict):
        kinds = ", ".join(f"{t(label, lang)} {int(position.get(k) or 0)}" for k, label in POSITION if position.get(k))
        compared = int(position.get("consistent") or 0) + int(position.get("inconsistent") or 0)
        out.append(
            f"{t('both orders asked; position-inconsistent (a tie)', lang)}: {int(position.get('inconsistent') or 0)} / {compared}"
            + (f" ({kinds})" if kinds else "")
        )
    return out


def verdict_word(v: dict[str, Any], lang: str) -> str:
    if v.get("status") == "ok":
        if v.get("position"):
            return t("tie (orders disagree)", lang)
        return t({"a": "A better", "b": "B better"}.get(v.get("winner"), "tie"), lang)  # type: ignore[arg-type]
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
    found = pairs(report)
    out: list[str] = []
    for i, pair in enumerate(found):
        out += _markdown_pair(pair, i, len(found), lang, cell)
    return out


def _markdown_pair(pair: dict[str, Any], index: int, count: int, lang: str, cell: Any) -> list[str]:
    a, b = targets(pair)
    rows = verdicts(pair)
    counts = tally(pair)
    out = [
        f"### {cell(title(pair, index, count, lang))}",
        "",
        f"A: `{cell(a)}` · B: `{cell(b)}` · {t('judge', lang)}: {cell(judges(pair, lang))}",
        "",
        "| " + " | ".join(t(label, lang, context="pairwise") for _, label, _ in counts) + " |",
        "| " + " | ".join("---:" for _ in counts) + " |",
        "| " + " | ".join(str(n) for _, _, n in counts) + " |",
        "",
    ]
    if rates := rate_lines(pair, lang):
        out += [*(f"{cell(line)}  " for line in rates[:-1]), cell(rates[-1]), ""]
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
    found = pairs(report)
    if not found:
        return ""
    panels: dict[str, int] = {}  # sample id -> index of its (first) panel, `sample-{i}` in report.html
    for i, r in enumerate(report.get("results") or []):
        panels.setdefault(str(r.get("sample_id")), i)
    return "".join(_html_pair(pair, i, len(found), lang, panels) for i, pair in enumerate(found))


def _html_pair(pair: dict[str, Any], index: int, count: int, lang: str, panels: dict[str, int]) -> str:
    esc = html.escape
    a, b = targets(pair)
    counts = tally(pair)
    head = "".join(f"<th>{esc(t(label, lang, context='pairwise'))}</th>" for _, label, _ in counts)
    body = "".join(f'<td data-key="{key}">{n}</td>' for key, _, n in counts)
    anchor = "pairwise" if index == 0 else f"pairwise-{index + 1}"
    rates = "".join(f'<p class="meta pairwise-rate">{esc(line)}</p>' for line in rate_lines(pair, lang))
    out = (
        f'<h2 id="{anchor}">{esc(title(pair, index, count, lang))}</h2>'
        f'<p class="meta"><span>A: <code>{esc(a)}</code></span><span>B: <code>{esc(b)}</code></span>'
        f"<span>{esc(t('judge', lang))}: {esc(judges(pair, lang))}</span></p>"
        f'<table class="pairwise-tally"><thead><tr>{head}</tr></thead><tbody><tr>{body}</tr></tbody></table>{rates}'
    )
    rows = verdicts(pair)
    if not rows:
        return out
    keyed = _keyed(rows)
    cols = [t("sample", lang), *([t("key", lang)] if keyed else []), t("verdict", lang), t("reason", lang)]
    trs = []
    for v in rows:
        status = v.get("status")
        cls = HTML_BADGE.get(v.get("winner"), "skip") if status == "ok" else ("error" if status == "error" else "skip")  # type: ignore[arg-type]
        sid = str(v.get("sample_id"))
        name = f"<code>{esc(sid)}</code>"
        cells = [f'<td><a href="#sample-{panels[sid]}">{name}</a></td>' if sid in panels else f"<td>{name}</td>"]
        if keyed:
            cells.append(f'<td class="nw">{esc(str(v.get("key")))}</td>')
        cells.append(f'<td class="nw"><span class="badge {cls}">{esc(verdict_word(v, lang))}</span></td>')
        cells.append(f"<td>{esc(why(v))}{_votes(v, lang)}</td>")
        position = f' data-position="{esc(str(v["position"]))}"' if v.get("position") else ""
        trs.append(f'<tr class="verdict" data-status="{esc(str(status))}"{position}>' + "".join(cells) + "</tr>")
    thead = "".join(f"<th>{esc(c)}</th>" for c in cols)
    return out + f'<table class="pairwise"><thead><tr>{thead}</tr></thead><tbody>{"".join(trs)}</tbody></table>'


def _votes(v: dict[str, Any], lang: str) -> str:
    """An ensemble's votes, one line each under the reason, per order (A/B terms throughout)."""
    esc = html.escape
    words = {1: "A", 2: "B", 0: "tie"}
    groups: list[tuple[str, Any]] = [("", v.get("votes"))]  # a report from before both orders
    orders = v.get("orders") if isinstance(v.get("orders"), dict) else {}
    groups += [(t(label, lang) + ": ", (orders.get(key) or {}).get("votes")) for key, label in (("a_first", "A first"), ("b_first", "B first"))]
    items = "".join(
        f"<li>{esc(prefix)}<code>{esc(str(x.get('judge')))}</code>: {esc(words.get(x.get('preference'), '—'))} — {esc(str(x.get('reason') or ''))}</li>"  # type: ignore[arg-type]
        for prefix, found in groups
        if isinstance(found, list)
        for x in found
        if isinstance(x, dict)
    )
    return f'<ul class="votes">{items}</ul>' if items else ""


# ---------------------------------------------------------------- JUnit


def junit_properties(report: dict[str, Any]) -> list[tuple[str, str]]:
    """Per comparison (`pairwise:…`; with several treatments `pairwise[<treatment>]:…`): the
    targets, the judge, the tally, `inconsistent`, B's win rate and its interval per key, then one
    `…:verdict:<sample_id>` (`…:<sample_id>:<key>` for a Big Sky comparative key) = `a`, `b`,
    `tie`, `error` or `skipped` per verdict."""
    found = pairs(report)
    props: list[tuple[str, str]] = []
    for pair in found:
        prefix = "pairwise" if len(found) == 1 else f"pairwise[{pair.get('treatment')}]"
        props += _junit_pair(pair, prefix)
    return props


def _junit_pair(pair: dict[str, Any], prefix: str) -> list[tuple[str, str]]:
    a, b = targets(pair)
    summary = pair.get("summary") if isinstance(pair.get("summary"), dict) else {}
    props = [(f"{prefix}:target_a", a), (f"{prefix}:target_b", b), (f"{prefix}:judge", judges(pair, "en"))]
    props += [(f"{prefix}:{key}", str(n)) for key, _, n in [("compared", "", int(summary.get("compared") or 0)), *tally(pair)]]
    if isinstance(pair.get("position"), dict):
        props.append((f"{prefix}:inconsistent", str(int(pair["position"].get("inconsistent") or 0))))
    for r in pair.get("win_rate") or []:
        if not isinstance(r, dict) or r.get("rate") is None:
            continue
        name = f"{prefix}:win_rate" + (f":{r.get('key')}" if r.get("key") != DEFAULT_KEY else "")
        ci = r.get("ci") or {}
        props += [(name, str(r["rate"])), (f"{name}:low", str(ci.get("low"))), (f"{name}:high", str(ci.get("high")))]
    for v in verdicts(pair):
        name = f"{prefix}:verdict:{v.get('sample_id')}"
        if v.get("key") not in (None, DEFAULT_KEY):
            name += f":{v.get('key')}"
        props.append((name, str(v.get("winner") if v.get("status") == "ok" else v.get("status"))))
    return props
