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

from omk.records.document import ReportDocument
from omk.records.experiment_block import Pair, PairwiseVerdict
from omk.report.i18n import t

DEFAULT_KEY = "pairwise"  # the key of the one verdict a non-Big Sky sample gets
MD_REASON = 200  # characters of a reason in a Markdown cell (a job summary stays short)
MD_OPEN_ROWS = 20  # more verdicts than this are folded into <details> in Markdown
TALLY = (("a_better", "A better"), ("b_better", "B better"), ("ties", "ties"), ("errored", "errored"), ("skipped", "skipped"))
POSITION = (("first", "each order preferred the answer shown first"), ("second", "each order preferred the answer shown second"), ("partial", "one order called a tie"))


def judges(pair: Pair, lang: str) -> str:
    return ", ".join(pair.judges) if pair.judges else t("none", lang)


def tally(pair: Pair) -> list[tuple[str, str, int]]:
    """(summary key, English label, count) in display order."""
    return [(key, label, getattr(pair.tally, key)) for key, label in TALLY]


def title(pair: Pair, index: int, count: int, lang: str) -> str:
    head = f"{t('Pairwise', lang)}: A {t('vs', lang)} B"
    return f"{head} — {pair.treatment}" if count > 1 and pair.treatment else head


def rate_lines(pair: Pair, lang: str) -> list[str]:
    """B's win rate per comparison key, then how often the two orders disagreed (plain text)."""
    out = []
    for r in pair.win_rate:
        key = f" ({r.key})" if len(pair.win_rate) > 1 or r.key != DEFAULT_KEY else ""
        label = t("B's win rate", lang) + key
        if not r.decisive:
            out.append(f"{label}: — ({t('no decisive verdict', lang)})")
            continue
        level = f"{float(r.ci_level or 0.95):.0%}"
        low, high = 0 if r.ci_low is None else r.ci_low, 1 if r.ci_high is None else r.ci_high
        out.append(
            f"{label}: {float(r.rate or 0):.0%} {t('of', lang)} {r.decisive} {t('decisive verdicts', lang)} "
            f"({level} CI {float(low):.0%}–{float(high):.0%}, Wilson; "
            f"{t('sign test', lang)} p = {float(r.p_value or 1):.3g}) · {t('ties', lang)} {r.ties}"
        )
    position = pair.position
    if position is not None:
        kinds = ", ".join(f"{t(label, lang)} {position[k]}" for k, label in POSITION if position[k])
        compared = position["consistent"] + position["inconsistent"]
        out.append(
            f"{t('both orders asked; position-inconsistent (a tie)', lang)}: {position['inconsistent']} / {compared}"
            + (f" ({kinds})" if kinds else "")
        )
    return out


def verdict_word(v: PairwiseVerdict, lang: str) -> str:
    if v.status == "ok":
        if v.position:
            return t("tie (orders disagree)", lang)
        return t({"a": "A better", "b": "B better"}.get(v.winner or "", "tie"), lang)
    return t(str(v.status or "?"), lang, context="pairwise")


def _keyed(rows: tuple[PairwiseVerdict, ...]) -> bool:
    """Show the key column only when some verdict has a Big Sky comparative key."""
    return any(v.key not in (None, DEFAULT_KEY) for v in rows)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ---------------------------------------------------------------- Markdown


def markdown_lines(report: ReportDocument, lang: str, cell: Any) -> list[str]:
    """`cell` escapes one Markdown table cell (omk.report.markdown.cell)."""
    found = report.pairs
    out: list[str] = []
    for i, pair in enumerate(found):
        out += _markdown_pair(pair, i, len(found), lang, cell)
    return out


def _markdown_pair(pair: Pair, index: int, count: int, lang: str, cell: Any) -> list[str]:
    a, b = pair.targets
    rows = pair.verdicts
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
        cells = [cell(v.sample_id), *([cell(v.key)] if keyed else []), cell(verdict_word(v, lang))]
        table.append("| " + " | ".join([*cells, cell(_short(v.why, MD_REASON))]) + " |")
    if len(rows) > MD_OPEN_ROWS:  # a long list would push the rest of the job summary down
        return [*out, f"<details><summary>{t('Verdicts', lang)} ({len(rows)})</summary>", "", *table, "", "</details>", ""]
    return [*out, *table, ""]


# ---------------------------------------------------------------- HTML

HTML_BADGE = {"a": "pw-a", "b": "pw-b", "tie": "skip"}


def html_section(report: ReportDocument, lang: str) -> str:
    found = report.pairs
    if not found:
        return ""
    panels: dict[str, int] = {}  # sample id -> index of its (first) panel, `sample-{i}` in report.html
    for i, r in enumerate(report.results):
        panels.setdefault(r.sample_id, i)
    return "".join(_html_pair(pair, i, len(found), lang, panels) for i, pair in enumerate(found))


def _html_pair(pair: Pair, index: int, count: int, lang: str, panels: dict[str, int]) -> str:
    esc = html.escape
    a, b = pair.targets
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
    rows = pair.verdicts
    if not rows:
        return out
    keyed = _keyed(rows)
    cols = [t("sample", lang), *([t("key", lang)] if keyed else []), t("verdict", lang), t("reason", lang)]
    trs = []
    for v in rows:
        status = v.status
        cls = HTML_BADGE.get(v.winner or "", "skip") if status == "ok" else ("error" if status == "error" else "skip")
        sid = str(v.sample_id)
        name = f"<code>{esc(sid)}</code>"
        cells = [f'<td><a href="#sample-{panels[sid]}">{name}</a></td>' if sid in panels else f"<td>{name}</td>"]
        if keyed:
            cells.append(f'<td class="nw">{esc(str(v.key))}</td>')
        cells.append(f'<td class="nw"><span class="badge {cls}">{esc(verdict_word(v, lang))}</span></td>')
        cells.append(f"<td>{esc(v.why)}{_votes(v, lang)}</td>")
        position = f' data-position="{esc(str(v.position))}"' if v.position else ""
        trs.append(f'<tr class="verdict" data-status="{esc(str(status))}"{position}>' + "".join(cells) + "</tr>")
    thead = "".join(f"<th>{esc(c)}</th>" for c in cols)
    return out + f'<table class="pairwise"><thead><tr>{thead}</tr></thead><tbody>{"".join(trs)}</tbody></table>'


def _votes(v: PairwiseVerdict, lang: str) -> str:
    """An ensemble's votes, one line each under the reason, per order (A/B terms throughout);
    a report from before both orders has them on the verdict itself."""
    esc = html.escape
    words: dict[int | None, str] = {1: "A", 2: "B", 0: "tie"}
    prefixes = {"": "", "a_first": t("A first", lang) + ": ", "b_first": t("B first", lang) + ": "}
    items = "".join(
        f"<li>{esc(prefixes[order])}<code>{esc(str(x.judge))}</code>: {esc(words.get(x.preference, '—'))} — {esc(x.reason)}</li>"
        for order, found in v.votes
        for x in found
    )
    return f'<ul class="votes">{items}</ul>' if items else ""


# ---------------------------------------------------------------- JUnit


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """Per comparison (`pairwise:…`; with several treatments `pairwise[<treatment>]:…`): the
    targets, the judge, the tally, `inconsistent`, B's win rate and its interval per key, then one
    `…:verdict:<sample_id>` (`…:<sample_id>:<key>` for a Big Sky comparative key) = `a`, `b`,
    `tie`, `error` or `skipped` per verdict."""
    found = report.pairs
    props: list[tuple[str, str]] = []
    for pair in found:
        prefix = "pairwise" if len(found) == 1 else f"pairwise[{pair.treatment}]"
        props += _junit_pair(pair, prefix)
    return props


def _junit_pair(pair: Pair, prefix: str) -> list[tuple[str, str]]:
    a, b = pair.targets
    props = [(f"{prefix}:target_a", a), (f"{prefix}:target_b", b), (f"{prefix}:judge", judges(pair, "en"))]
    props += [(f"{prefix}:{key}", str(n)) for key, _, n in [("compared", "", pair.tally.compared), *tally(pair)]]
    if pair.position is not None:
        props.append((f"{prefix}:inconsistent", str(pair.position["inconsistent"])))
    for r in pair.win_rate:
        if r.rate is None:
            continue
        name = f"{prefix}:win_rate" + (f":{r.key}" if r.key != DEFAULT_KEY else "")
        props += [(name, str(r.rate)), (f"{name}:low", str(r.ci_low)), (f"{name}:high", str(r.ci_high))]
    for v in pair.verdicts:
        name = f"{prefix}:verdict:{v.sample_id}"
        if v.key not in (None, DEFAULT_KEY):
            name += f":{v.key}"
        props.append((name, str(v.winner if v.status == "ok" else v.status)))
    return props
