"""The judges checked against people in every format, from report.json's `gold` block (or
`omk gold check`): per judge and item, α with its interval, bias, and the worst disagreements;
κ and the confusion table for pass/fail; the people's own α; the flagged judges. Reports
without the block show nothing here."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from omk.records.document import ReportDocument
from omk.records.gold import GoldCheck, ItemAgreement, JudgeAgreement, PassAgreement
from omk.report.i18n import t

HEADERS = ("judge", "item", "samples", "α", "95% interval", "bias", "largest disagreements")
PASS_HEADERS = ("judge", "samples", "κ", "both pass", "judge pass, people fail", "judge fail, people pass", "both fail")


def _n(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(i: ItemAgreement) -> str:
    return f"[{i.ci.low:.2f}, {i.ci.high:.2f}]" if i.ci else "—"


def _worst(i: ItemAgreement) -> str:
    return ", ".join(f"{d.sample_id} ({_n(float(d.judge))} vs {_n(float(d.people))})" for d in i.disagreements[:3]) or "—"


def _name(j: JudgeAgreement) -> str:
    return j.judge + (" ⚑" if j.flagged else "")


def item_rows(check: GoldCheck) -> list[list[str]]:
    return [
        [_name(j), i.item, str(i.samples), _n(i.alpha), _ci(i), f"{i.bias:+.2f}" if i.bias is not None else "—", _worst(i)]
        for j in check.judges
        for i in j.items
    ]


def _pass_row(j: JudgeAgreement, p: PassAgreement) -> list[str]:
    return [j.judge, str(p.samples), _n(p.kappa), str(p.both_pass), str(p.judge_pass_people_fail), str(p.judge_fail_people_pass), str(p.both_fail)]


def pass_rows(check: GoldCheck) -> list[list[str]]:
    return [_pass_row(j, j.passes) for j in check.judges if j.passes is not None]


def note_lines(check: GoldCheck, lang: str = "en") -> list[str]:
    """The people's own α, unmatched labels and the flagged judges, one line each."""
    out = [
        f"{t('people among themselves', lang)} · {p.item}: α={_n(p.alpha)}"
        + (f" [{p.ci.low:.2f}, {p.ci.high:.2f}]" if p.ci else "")
        + f" ({p.samples} {t('samples', lang)}, {p.raters} {t('raters', lang)})"
        for p in check.people
    ]
    if check.unmatched:
        out.append(f"{t('labels for samples the run does not have', lang)}: {', '.join(check.unmatched[:8])}")
    out += [f"⚑ {j.judge}: {t('below the bar against people', lang)} — {'; '.join(j.reasons)}" for j in check.flagged]
    return out


def title(check: GoldCheck, lang: str = "en") -> str:
    return f"{t('Judge against people', lang)} ({t(check.level, lang, 'alpha')} α, {check.labelled} {t('samples', lang)}, {check.labels} {t('labels', lang)})"


def text_lines(check: GoldCheck, lang: str = "en") -> list[str]:
    """Plain lines for `omk gold check`."""
    out = [title(check, lang)]
    for j in check.judges:
        out.append(f"  {_name(j)}")
        for i in j.items:
            bias = f"{i.bias:+.2f}" if i.bias is not None else "—"
            out.append(f"    {i.item}: α={_n(i.alpha)} {_ci(i)} {t('bias', lang)}={bias} n={i.samples} · {_worst(i)}")
        if j.passes is not None:
            p = j.passes
            out.append(
                f"    {t('pass/fail', lang)}: κ={_n(p.kappa)} n={p.samples} · "
                + t("both pass {both}, judge only {judge}, people only {people}, both fail {neither}", lang).format(
                    both=p.both_pass, judge=p.judge_pass_people_fail, people=p.judge_fail_people_pass, neither=p.both_fail
                )
            )
    return out + [f"  {line}" for line in note_lines(check, lang)]


def terminal_tables(report: ReportDocument, lang: str = "en") -> list[Any]:
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    check = report.gold
    if check is None:
        return []
    table = Table(title=title(check, lang), title_justify="left")
    for h in HEADERS:
        table.add_column(t(h, lang))
    for row in item_rows(check):
        table.add_row(*(plain(c) for c in row))
    out: list[Any] = [table]
    if rows := pass_rows(check):
        passes = Table(title=t("Pass/fail against people", lang), title_justify="left")
        for h in PASS_HEADERS:
            passes.add_column(t(h, lang))
        for row in rows:
            passes.add_row(*(plain(c) for c in row))
        out.append(passes)
    return out + [plain(line, style="yellow") for line in note_lines(check, lang)]


def _md_table(header: list[str], rows: list[list[str]], cell: Callable[[Any], str]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return [*lines, *("| " + " | ".join(cell(c) for c in row) + " |" for row in rows), ""]


def markdown_lines(report: ReportDocument, lang: str, cell: Callable[[Any], str]) -> list[str]:
    check = report.gold
    if check is None:
        return []
    out = [f"### {title(check, lang)}", ""] + _md_table([t(h, lang) for h in HEADERS], item_rows(check), cell)
    if rows := pass_rows(check):
        out += [f"#### {t('Pass/fail against people', lang)}", ""] + _md_table([t(h, lang) for h in PASS_HEADERS], rows, cell)
    notes = note_lines(check, lang)
    return out + [f"- {cell(line)}" for line in notes] + ([""] if notes else [])


def _html_table(css: str, header: list[str], rows: list[list[str]]) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def html_section(report: ReportDocument, lang: str) -> str:
    check = report.gold
    if check is None:
        return ""
    esc = html.escape
    parts = ['<section id="gold">', f"<h2>{esc(title(check, lang))}</h2>"]
    parts.append(_html_table("gold-items", [t(h, lang) for h in HEADERS], item_rows(check)))
    if rows := pass_rows(check):
        parts.append(f"<h3>{esc(t('Pass/fail against people', lang))}</h3>")
        parts.append(_html_table("gold-pass", [t(h, lang) for h in PASS_HEADERS], rows))
    parts += [f'<p class="warn">{esc(line)}</p>' for line in note_lines(check, lang)]
    return "".join(parts) + "</section>"


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """`gold:<judge>:<item>` = `alpha=0.72 [0.55, 0.85] bias=+0.20 n=30`, the κ, the flags."""
    check = report.gold
    if check is None:
        return []
    found = []
    for j in check.judges:
        for i in j.items:
            found.append((f"gold:{j.judge}:{i.item}", f"alpha={_n(i.alpha)} {_ci(i)} bias={_n(i.bias)} n={i.samples}"))
        if j.passes is not None:
            found.append((f"gold:{j.judge}:pass", f"kappa={_n(j.passes.kappa)} n={j.passes.samples}"))
        if j.flagged:
            found.append((f"gold:{j.judge}:flagged", "; ".join(j.reasons)))
    return found
