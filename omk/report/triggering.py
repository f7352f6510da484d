"""The triggering report in every format, from report.json's `triggering` block (and an
experiment's `experiment.triggering`): per skill, recall and false-trigger rate with their
intervals and the samples that went wrong; the routing matrix when several skills are installed.

Reports without the block (no `skill_used` in the samples, or written by an older omk) show
nothing here.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from omk.records.document import ReportDocument
from omk.records.triggering import NONE, NOT_INSTALLED, Rate, SkillTriggering, TriggerChange, Triggering
from omk.report.i18n import t

HEADERS = ("skill", "recall", "false triggers", "precision", "missed", "fired when it must not")
CHANGE_HEADERS = ("variant", "skill", "rate", "control", "treatment", "change", "lost / gained", "McNemar p")
RATE_NAMES = {"recall": "recall", "false_trigger_rate": "false triggers"}
LISTED = 8  # sample ids shown per cell; the block lists more


def rate_text(r: Rate) -> str:
    """`4/5 80% [38%, 96%]`, or `—` when there were no cases."""
    if not r.n or r.value is None:
        return "—"
    interval = f" [{r.low:.0%}, {r.high:.0%}]" if r.low is not None and r.high is not None else ""
    return f"{r.k}/{r.n} {r.value:.0%}{interval}"


def _ids(ids: Sequence[str]) -> str:
    if not ids:
        return "—"
    shown = ", ".join(ids[:LISTED])
    return shown + (f" … +{len(ids) - LISTED}" if len(ids) > LISTED else "")


def _name(s: SkillTriggering, lang: str) -> str:
    return s.skill if s.installed is not False else f"{s.skill} ({t('not installed', lang)})"


def skill_rows(trig: Triggering, lang: str = "en") -> list[list[str]]:
    return [
        [_name(s, lang), rate_text(s.recall), rate_text(s.false_triggers), rate_text(s.precision), _ids(s.missed), _ids(s.false_triggered)]
        for s in trig.skills
    ]


def notes(trig: Triggering, lang: str = "en") -> list[str]:
    """What a reader should know about the rates: skills without negative controls, dead skills,
    and the skills called that the run does not install (named, per expected skill)."""
    found = [f"{s.skill}: {t(w, lang)}" for s in trig.skills for w in s.warnings]
    for r in trig.routing:
        if r.not_installed:
            names = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in r.not_installed.items())
            found.append(f"{r.expected}: {t('called a skill that is not installed', lang)}: {names}")
    return found


def routing_rows(trig: Triggering, lang: str = "en") -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the routing matrix; no rows when there is no matrix."""
    if not trig.routing:
        return [], []
    columns = trig.columns
    header = [t("expected \\ fired", lang), *(t(c, lang) if c in (NONE, NOT_INSTALLED) else c for c in columns)]
    rows = [[f"{r.expected} ({r.cases})", *(str(r.fired.get(c, 0) or "·") for c in columns)] for r in trig.routing]
    return header, rows


def change_rows(changes: Sequence[TriggerChange], lang: str = "en") -> list[list[str]]:
    def pct(k: int, n: int) -> str:
        return f"{k}/{n} {k / n:.0%}" if n else "—"

    return [
        [
            c.treatment, c.skill, t(RATE_NAMES.get(c.rate, c.rate), lang), pct(c.control_fired, c.n),
            pct(c.treatment_fired, c.n), f"{c.change:+.0%}" if c.change is not None else "—", f"{c.lost} / {c.gained}",
            f"{c.p_value:.3g}",
        ]
        for c in changes
    ]


def _level(trig: Triggering) -> str:
    return f"{trig.level:.0%}"


# --- the formats ------------------------------------------------------------------------------


def _changes(report: ReportDocument) -> tuple[TriggerChange, ...]:
    return report.experiment.triggering if report.experiment is not None else ()


def terminal_tables(report: ReportDocument, lang: str = "en") -> list[Any]:
    """Rich tables (and note lines) to print, none when the report has no triggering block."""
    return terminal_parts(report.triggering, _changes(report), lang)


def terminal_parts(trig: Triggering | None, changes: Sequence[TriggerChange], lang: str = "en", label: str = "") -> list[Any]:
    """The tables of one run's block and of an experiment's changes; `label` names the run in
    the title (an experiment's variant)."""
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    out: list[Any] = []
    if trig is not None:
        title = f"{t('Triggering', lang)}{f' · {label}' if label else ''} ({t('Wilson interval', lang)} {_level(trig)})"
        table = Table(title=title, title_justify="left", lang=lang)
        for i, h in enumerate(HEADERS):  # the sample lists give way first: the failures name them too
            table.add_column(t(h, lang), justify="left" if i in (0, 4, 5) else "right", drop={5: 1, 4: 2}.get(i))
        for row in skill_rows(trig, lang):
            table.add_row(*(plain(c) for c in row))
        out.append(table)
        out += [plain(line, style="yellow") for line in notes(trig, lang)]
        header, rows = routing_rows(trig, lang)
        if rows:
            matrix = Table(title=t("Routing: which skill fired", lang), title_justify="left")
            for i, h in enumerate(header):
                matrix.add_column(h, justify="left" if i == 0 else "right")
            for row in rows:
                matrix.add_row(*(plain(c) for c in row))
            out.append(matrix)
    return out + _change_table(changes, lang)


def _change_table(changes: Sequence[TriggerChange], lang: str) -> list[Any]:
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    if not changes:
        return []
    table = Table(title=t("Trigger rates, treatment against control", lang), title_justify="left")
    for h in CHANGE_HEADERS:
        table.add_column(t(h, lang))
    for row in change_rows(changes, lang):
        table.add_row(*(plain(c) for c in row))
    return [table]


def markdown_lines(report: ReportDocument, lang: str, cell: Callable[[Any], str]) -> list[str]:
    out: list[str] = []
    trig = report.triggering
    if trig is not None:
        out += [f"### {t('Triggering', lang)}", "", f"{t('Wilson interval', lang)} {_level(trig)}.", ""]
        out += _md_table([t(h, lang) for h in HEADERS], skill_rows(trig, lang), cell)
        out += [f"- {cell(line)}" for line in notes(trig, lang)] + ([""] if notes(trig, lang) else [])
        header, rows = routing_rows(trig, lang)
        if rows:
            out += [f"#### {t('Routing: which skill fired', lang)}", ""] + _md_table(header, rows, cell)
    if changes := _changes(report):
        out += [f"### {t('Trigger rates, treatment against control', lang)}", ""]
        out += _md_table([t(h, lang) for h in CHANGE_HEADERS], change_rows(changes, lang), cell)
    return out


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], cell: Callable[[Any], str]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def html_section(report: ReportDocument, lang: str) -> str:
    trig, changes = report.triggering, _changes(report)
    if trig is None and not changes:
        return ""
    esc = html.escape
    parts = ['<section id="triggering">']
    if trig is not None:
        parts.append(f"<h2>{esc(t('Triggering', lang))}</h2><p>{esc(t('Wilson interval', lang))} {_level(trig)}</p>")
        parts.append(_html_table("trigger-skills", [t(h, lang) for h in HEADERS], skill_rows(trig, lang), numeric=(1, 2, 3)))
        parts += [f'<p class="warn">{esc(line)}</p>' for line in notes(trig, lang)]
        header, rows = routing_rows(trig, lang)
        if rows:
            parts.append(f"<h3>{esc(t('Routing: which skill fired', lang))}</h3>")
            parts.append(_html_table("routing", header, rows, numeric=range(1, len(header)), marks=_routing_marks(trig)))
    if changes:
        parts.append(f"<h3>{esc(t('Trigger rates, treatment against control', lang))}</h3>")
        rows = change_rows(changes, lang)
        parts.append(_html_table("trigger-changes", [t(h, lang) for h in CHANGE_HEADERS], rows, numeric=range(3, 8)))
    return "".join(parts) + "</section>"


def _routing_marks(trig: Triggering) -> list[list[str]]:
    """Per routing cell, what its count means: `right` (the expected skill fired), `other` (a
    collision: another skill fired), `silent` (nothing fired), or nothing when the count is 0."""
    columns = trig.columns
    marks = []
    for r in trig.routing:
        row = [""]
        for c in columns:
            kind = "right" if c == r.expected else "silent" if c == NONE else "missing" if c == NOT_INSTALLED else "other"
            row.append(f"route-{kind}" if r.fired.get(c, 0) else "")
        marks.append(row)
    return marks


def _html_table(
    css: str, header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (), marks: Sequence[Sequence[str]] = ()
) -> str:
    """A table whose `numeric` columns line up on the right; `marks` adds a class per cell."""
    esc = html.escape

    def cls(i: int, j: int) -> str:
        names = " ".join(n for n in ("num" if j in numeric else "", marks[i][j] if i < len(marks) else "") if n)
        return f' class="{names}"' if names else ""

    num = ' class="num"'
    head = "".join(f"<th{num if j in numeric else ''}>{esc(h)}</th>" for j, h in enumerate(header))
    body = "".join("<tr>" + "".join(f"<td{cls(i, j)}>{esc(c)}</td>" for j, c in enumerate(row)) + "</tr>" for i, row in enumerate(rows))
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """`trigger:<skill>:recall` = `k/n [low, high]`, the false-trigger rate, and the routing
    matrix as `routing:<expected>` = `skill=n,…`."""
    trig = report.triggering
    found: list[tuple[str, str]] = []
    if trig is not None:
        for s in trig.skills:
            found += [(f"trigger:{s.skill}:recall", rate_text(s.recall)), (f"trigger:{s.skill}:false_trigger_rate", rate_text(s.false_triggers))]
            if s.missed:
                found.append((f"trigger:{s.skill}:missed", ",".join(s.missed)))
            if s.false_triggered:
                found.append((f"trigger:{s.skill}:false_triggered", ",".join(s.false_triggered)))
        found += [(f"routing:{r.expected}", ",".join(f"{k}={n}" for k, n in r.fired.items())) for r in trig.routing]
        found += [(f"routing:{r.expected}:not_installed", ",".join(f"{k}={n}" for k, n in r.not_installed.items())) for r in trig.routing if r.not_installed]
    for c in _changes(report):
        found.append((f"trigger_change:{c.treatment}:{c.skill}:{c.rate}", f"{c.control_fired}/{c.n} -> {c.treatment_fired}/{c.n} p={c.p_value:.3g}"))
    return found
