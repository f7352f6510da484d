"""Tool calls the agent made that its target does not offer, for a person: a model that calls
`Skill` under `codex:`, or a tool the CLI has switched off, gets the CLI's own refusal, and the
sample may still pass. The trace keeps such a call with `outcome: unsupported`
(omk.records.ToolCall); this names them per sample, in the terminal, `summary.md` and
report.html ("the agent called Skill, which codex: does not offer"). Likewise a mock with
`run: true` the target could not honour (only claude: and codex: run a real tool): its return
answered, and the trace's note says so (omk/runner/retry.py `noted_run_mocks`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.domain.toolnames import UNSUPPORTED_NOTE, target_kind
from omk.records import SampleResult
from omk.records.document import ReportDocument
from omk.report.i18n import RUN_NOT_HONOURED_PATTERN, counted, note, t
from omk.report.sample_notes import markdown_section, print_section, section


def tools_called(result: SampleResult) -> list[str]:
    """The tools a result called that its target did not offer, each once, in call order (a
    conversation's turns included)."""
    calls = [*result.trace.tool_calls, *(c for turn in result.turns for c in turn.trace.tool_calls)]
    return list(dict.fromkeys(c.tool for c in calls if c.outcome == "unsupported"))


def sentence(tool: str, target: str | None, lang: str = "en") -> str:
    return t(UNSUPPORTED_NOTE, lang).format(tool=tool, target=target_kind(target))


def found(report: ReportDocument) -> dict[str, list[str]]:
    """Each sample with unsupported calls (its repeats together), in run order, with its tools."""
    out: dict[str, list[str]] = {}
    for result in report.results:
        tools = tools_called(result)
        if tools:
            have = out.setdefault(result.sample_id, [])
            have += [tool for tool in tools if tool not in have]
    return out


def lines(report: ReportDocument, lang: str = "en") -> list[str]:
    """The heading, a line per sample (the first `SHOWN`), and how many more; [] when none."""
    samples = found(report)
    target = report.target.name
    heading = t("Unsupported tool calls: {samples} called tools the target does not offer", lang)
    per_sample = {sid: [sentence(tool, target, lang) for tool in tools] for sid, tools in samples.items()}
    return section(heading.format(samples=counted(len(samples), "sample", "samples", lang)), per_sample, lang)


def run_lines(report: ReportDocument, lang: str = "en") -> list[str]:
    """The samples whose `run: true` mocks answered with their return, as `lines` says its own."""
    per_sample: dict[str, list[str]] = {}
    for result in report.results:
        notes = [*result.trace.notes, *(n for turn in result.turns for n in turn.trace.notes)]
        for said in (note(n, lang) for n in notes if RUN_NOT_HONOURED_PATTERN.fullmatch(n)):
            have = per_sample.setdefault(result.sample_id, [])
            if said not in have:
                have.append(said)
    heading = t("Mocks with run: true that the target could not run: {samples}", lang)
    return section(heading.format(samples=counted(len(per_sample), "sample", "samples", lang)), per_sample, lang)


def print_terminal(report: ReportDocument, console: Any, lang: str = "en") -> None:
    print_section(lines(report, lang), console)
    print_section(run_lines(report, lang), console)


def markdown_lines(report: ReportDocument, lang: str, cell: Callable[[Any], str]) -> list[str]:
    return markdown_section(lines(report, lang), cell) + markdown_section(run_lines(report, lang), cell)
