"""The ablation's ranking (`experiment.ablation`, from `omk eval --ablate SKILL_DIR`) for a person:
each part of the skill, largest contribution first, with its interval, its tokens, the triggering
change, and whether it is a candidate to cut. Shared by the terminal and the Markdown summary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.records.experiment_block import Ablation, AblationPart
from omk.report.i18n import t

HEADER = ("part", "kind", "contribution [95% interval]", "tokens", "trigger change", "verdict")


def _num(value: float | None, sign: bool = True) -> str:
    return "—" if value is None else f"{value:+.2f}" if sign else f"{value:.2f}"


def note(part: AblationPart, lang: str = "en") -> str:
    """What to make of removing the part: a candidate to cut, or not (yet) evidence of no effect."""
    if part.candidate:
        return t("candidate to cut", lang)
    if part.level in ("NOISE", "UNDERPOWERED"):
        return t("not shown to be without effect", lang)
    return ""


def rows(ablation: Ablation, lang: str = "en") -> list[tuple[str, ...]]:
    """One row per part, in the ranking's order (the header is `HEADER`)."""
    found: list[tuple[str, ...]] = []
    for part in ablation.parts:
        interval = "" if part.ci_low is None or part.ci_high is None else f" [{_num(part.ci_low)}, {_num(part.ci_high)}]"
        trigger = "—" if part.trigger_change is None else f"{part.trigger_change:+.0%}"
        verdict = " · ".join(x for x in (part.level or "—", note(part, lang)) if x)
        found.append((part.name, t(part.kind, lang), _num(part.contribution) + interval, str(part.tokens), trigger, verdict))
    return found


def caption(ablation: Ablation, lang: str = "en") -> str:
    trivial = _num(ablation.trivial, sign=False)
    return t(
        "What each part of {skill} is worth: the composite lost when it is removed (paired, largest first); "
        "a candidate to cut is a part whose removal's whole interval lies within ±{trivial}",
        lang,
    ).format(skill=ablation.skill, trivial=trivial)


def print_table(ablation: Ablation, console: Any, lang: str = "en") -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=t("Ablation", lang), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    widest = min(28, max((len(p.name) for p in ablation.parts), default=4))
    for i, col in enumerate(HEADER):  # the interval's header on a line of its own: the column stays narrow
        header = t(col, lang).replace(" [", "\n[")
        table.add_column(header, overflow="fold", justify="right" if 2 <= i <= 4 else "left", no_wrap=i in (1, 2, 3), min_width=widest if i == 0 else None)
    for row in rows(ablation, lang):
        table.add_row(*row)
    console.print(caption(ablation, lang), markup=False, highlight=False, soft_wrap=True)
    console.print(table)


def markdown_lines(ablation: Ablation | None, lang: str, cell: Callable[[Any], str]) -> list[str]:
    if ablation is None:
        return []
    out = [f"### {t('Ablation', lang)}", "", cell(caption(ablation, lang)), ""]
    out.append("| " + " | ".join(cell(t(h, lang)) for h in HEADER) + " |")
    out.append("| --- | --- |" + " ---: |" * 3 + " --- |")
    out += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows(ablation, lang)]
    return [*out, ""]


def html_section(ablation: Ablation | None, lang: str) -> str:
    """`report.html`'s ablation table (`section#ablation`, `table.ablation`; a candidate to cut's
    row has the class `cut`); every value escaped."""
    if ablation is None:
        return ""
    from html import escape as esc

    head = "".join(f'<th{" class=num" if 2 <= j <= 4 else ""}>{esc(t(h, lang))}</th>' for j, h in enumerate(HEADER))
    body = "".join(
        f'<tr{" class=cut" if part.candidate else ""}>'
        + "".join(f'<td{" class=num" if 2 <= j <= 4 else ""}>{esc(c)}</td>' for j, c in enumerate(row))
        + "</tr>"
        for part, row in zip(ablation.parts, rows(ablation, lang), strict=True)
    )
    return (
        f'<section id="ablation"><h3>{esc(t("Ablation", lang))}</h3><p>{esc(caption(ablation, lang))}</p>'
        f'<table class="ablation"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>'
    )
