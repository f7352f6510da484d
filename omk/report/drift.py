"""Mock drift for a person, from the results' trace notes: a sample recorded from a run
(`omk sample --from-run`) whose agent now makes a tool call no recorded mock answers. Under
`mocksStrict` the sample fails and its failure says so; without it the run passes, and this list
(terminal and `summary.md`; report.html shows each note in its sample's panel) is where it shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.records.document import ReportDocument
from omk.report.i18n import counted, note, t
from omk.report.sample_notes import markdown_section, print_section, section

DRIFT_PREFIX = "mock drift: "


def drifted(report: ReportDocument) -> dict[str, list[str]]:
    """Each sample with drift (its repeats together), in run order, with its distinct notes."""
    found: dict[str, list[str]] = {}
    for result in report.results:
        notes = [n for n in result.trace.notes if n.startswith(DRIFT_PREFIX)]
        if notes:
            have = found.setdefault(result.sample_id, [])
            have += [n for n in notes if n not in have]
    return found


def heading(count: int, lang: str) -> str:
    samples = counted(count, "recorded sample", "recorded samples", lang)
    return t("Mock drift: {samples} made calls the recording never had", lang).format(samples=samples)


def lines(report: ReportDocument, lang: str = "en") -> list[str]:
    """The heading, a line per drifted sample (the first `SHOWN`), and how many more; [] when none."""
    found = drifted(report)
    per_sample = {sample_id: [note(n, lang) for n in notes] for sample_id, notes in found.items()}
    return section(heading(len(found), lang), per_sample, lang)


def print_terminal(report: ReportDocument, console: Any, lang: str = "en") -> None:
    print_section(lines(report, lang), console)


def markdown_lines(report: ReportDocument, lang: str, cell: Callable[[Any], str]) -> list[str]:
    return markdown_section(lines(report, lang), cell)
