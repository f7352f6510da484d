"""The ablation's ranking (`experiment.ablation`, from `omk eval --ablate SKILL_DIR`) for a person:
each part of the skill, largest contribution first, with its interval, its tokens, the triggering
changes (the skill's recall, and its false-trigger rate: near-miss probes firing), and whether it
is a candidate to cut. Shared by the terminal, the Markdown summary, the
HTML page and `junit.xml` (`junit_cases`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.records.experiment_block import Ablation, AblationPart
from omk.report.i18n import t

HEADER = ("part", "kind", "contribution [95% interval]", "tokens", "recall change", "false-trigger change", "verdict")
NUMBERS = range(2, 6)  # the columns of numbers, aligned right


def _num(value: float | None, sign: bool = True) -> str:
    return "—" if value is None else f"{value:+.2f}" if sign else f"{value:.2f}"


def _percent(change: float | None) -> str:
    return "—" if change is None else f"{change:+.0%}"


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
        verdict = " · ".join(x for x in (part.level or "—", note(part, lang)) if x)
        recall, false = _percent(part.trigger_change), _percent(part.false_trigger_change)
        found.append((part.name, t(part.kind, lang), _num(part.contribution) + interval, str(part.tokens), recall, false, verdict))
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

    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    table = Table(title=t("Ablation", lang), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, lang=lang)
    widest = min(20, max((len(p.name) for p in ablation.parts), default=4))
    drop = {5: 1, 4: 2}  # too narrow: the triggering changes go first, the false-trigger one before recall
    for i, col in enumerate(HEADER):  # the interval's header on a line of its own: the column stays narrow
        header = t(col, lang).replace(" [", "\n[")
        justify = "right" if i in NUMBERS else "left"
        table.add_column(header, justify=justify, no_wrap=i in (1, 2, 3), min_width=widest if i == 0 else None, drop=drop.get(i))
    for row in rows(ablation, lang):
        table.add_row(*row)
    console.print(plain(caption(ablation, lang)))  # wrapped between words at the terminal's width
    console.print(table)


def markdown_lines(ablation: Ablation | None, lang: str, cell: Callable[[Any], str]) -> list[str]:
    if ablation is None:
        return []
    out = [f"### {t('Ablation', lang)}", "", cell(caption(ablation, lang)), ""]
    out.append("| " + " | ".join(cell(t(h, lang)) for h in HEADER) + " |")
    out.append("| --- | --- |" + " ---: |" * len(NUMBERS) + " --- |")
    out += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows(ablation, lang)]
    return [*out, ""]


def html_section(ablation: Ablation | None, lang: str) -> str:
    """`report.html`'s ablation table (`section#ablation`, `table.ablation`; a candidate to cut's
    row has the class `cut`); every value escaped."""
    if ablation is None:
        return ""
    from html import escape as esc

    head = "".join(f'<th{" class=num" if j in NUMBERS else ""}>{esc(t(h, lang))}</th>' for j, h in enumerate(HEADER))
    body = "".join(
        f'<tr{" class=cut" if part.candidate else ""}>'
        + "".join(f'<td{" class=num" if j in NUMBERS else ""}>{esc(c)}</td>' for j, c in enumerate(row))
        + "</tr>"
        for part, row in zip(ablation.parts, rows(ablation, lang), strict=True)
    )
    return (
        f'<section id="ablation"><h3>{esc(t("Ablation", lang))}</h3><p>{esc(caption(ablation, lang))}</p>'
        f'<table class="ablation"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>'
    )


def _case_name(part: AblationPart, ablation: Ablation) -> str:
    """The part's name; its variant's beside it when another part has the same name."""
    same = sum(1 for p in ablation.parts if p.name == part.name)
    return part.name if same == 1 else f"{part.name} [{part.variant}]"


def junit_text(part: AblationPart, trivial: float | None) -> str:
    """One line saying what removing the part did, for a test case's `<system-out>`."""
    interval = "" if part.ci_low is None or part.ci_high is None else f" [{_num(part.ci_low)}, {_num(part.ci_high)}]"
    said = [
        f"{part.kind} removed in {part.variant}: composite lost {_num(part.contribution)}{interval} over {part.samples} paired samples",
        f"{part.tokens} tokens",
    ]
    if part.trigger_change is not None:
        said.append(f"recall change {part.trigger_change:+.0%}")
    if part.false_trigger_change is not None:
        said.append(f"false-trigger change {part.false_trigger_change:+.0%}")
    said.append(part.level or "no verdict")
    if part.candidate:
        said.append(f"candidate to cut: its removal's whole interval lies within ±{_num(trivial, sign=False)}")
    elif note(part):
        said.append(note(part))
    return " · ".join(said)


def junit_cases(ablation: Ablation) -> list[tuple[str, str, str]]:
    """(classname, name, text) of each part's test case, in the ranking's order. A ranking is not
    a pass or a fail (the run's exit code is 0 whatever it says), so every case passes; the
    classname says whether the part is a candidate to cut, so CI test views group those apart."""
    return [
        (f"ablation.{ablation.skill}.{'candidate-to-cut' if p.candidate else 'kept'}", _case_name(p, ablation), junit_text(p, ablation.trivial))
        for p in ablation.parts
    ]


def junit_properties(ablation: Ablation) -> list[tuple[str, str]]:
    """`ablation:skill`, `ablation:trivial`, `ablation:candidates_to_cut` (names, comma-separated),
    then `ablation:<rank>:<variant>` = the part's line, largest contribution first."""
    found = [("ablation:skill", ablation.skill), ("ablation:trivial", _num(ablation.trivial, sign=False))]
    found.append(("ablation:candidates_to_cut", ", ".join(p.name for p in ablation.parts if p.candidate)))
    found += [(f"ablation:{i}:{p.variant}", f"{p.name}: {junit_text(p, ablation.trivial)}") for i, p in enumerate(ablation.parts, 1)]
    return found
