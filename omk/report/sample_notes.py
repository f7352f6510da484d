"""A report section that names, per sample, what the run noticed about it (mock drift, tool calls
the target does not offer): a heading, one line for each of the first `SHOWN` samples, and how
many more there are; printed in bold on the terminal and as a list in Markdown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.report.i18n import t

SHOWN = 5  # samples named; the others are counted


def section(heading: str, per_sample: dict[str, list[str]], lang: str = "en") -> list[str]:
    """The heading and a line per sample (`ID: first; second`), the first `SHOWN`; [] when none."""
    if not per_sample:
        return []
    out = [heading]
    out += [f"{sample_id}: {'; '.join(items)}" for sample_id, items in list(per_sample.items())[:SHOWN]]
    if len(per_sample) > SHOWN:
        out.append(t("… and {n} more: see report.html or report.json", lang).format(n=len(per_sample) - SHOWN))
    return out


def print_section(shown: list[str], console: Any) -> None:
    """The section on the terminal: the heading in bold yellow, each line indented."""
    if not shown:
        return
    from rich.text import Text

    from omk.io.textsafe import for_terminal
    from omk.report.plain import plain

    console.print(Text(for_terminal(shown[0]), style="bold yellow"))
    for line in shown[1:]:
        console.print(plain(f"  {for_terminal(line)}"))


def markdown_section(shown: list[str], cell: Callable[[Any], str]) -> list[str]:
    """The section in Markdown: a level-3 heading and a list."""
    if not shown:
        return []
    return [f"### {cell(shown[0])}", "", *(f"- {cell(line)}" for line in shown[1:]), ""]
