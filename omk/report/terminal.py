"""The summary a person reads in the terminal after `omk eval`.

It fits an 80-column terminal: long sample ids and turn labels are cut with an ellipsis (never
folded over two rows), the score columns keep their width. A failing sample shows each failed
check's message and the start of the output it judged; a passing run prints no "Failures"
heading. Under `--repeat N` the counts are of runs, and say so (`14 samples × 3 runs`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import Any

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.text import Text

from omk.records.document import ReportDocument, Summary
from omk.records.result import SampleResult, TurnResult
from omk.report import (
    budget,
    capabilities,
    categories,
    drift,
    gold,
    intervals,
    reliability,
    triggering,
    unsupported,
)
from omk.report.i18n import counted, reason_text, shard_label, t
from omk.report.plain import PlainTable as Table
from omk.report.plain import plain
from omk.report.reasons import (
    cached_line,
    failure_lines,
    passed_but_failed,
    skipped_judge_line,
    turn_label,
    workspace_line,
)

TABLE_ROWS = 200  # a larger run's table shows this many results, those that did not pass first
FAILURES_SHOWN = 100  # and the reasons of this many; the rest are in the report files
OUTPUT_CELLS = 160  # how much of a failing output the terminal shows (cells, on one line)


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"


def _score_text(score: float | None, threshold: float | None) -> Text:
    if score is None:
        return Text("—", style="dim")
    if threshold is None:  # a report without its pass mark (edited by hand): no colour says pass or fail
        return plain(f"{score:.2f}")
    return plain(f"{score:.2f}", style="green" if score >= threshold else "red")


def _turn_mark(passed: bool | None) -> Text:
    if passed is None:
        return Text("·", style="dim")  # nothing graded on this turn, or it was not sent
    return Text("✓", style="green") if passed else Text("✗", style="red")


def for_terminal(text: Any) -> str:
    from omk.io.textsafe import for_terminal as escaped

    return escaped(str(text))


def print_summary(
    report: ReportDocument | Mapping[str, Any], console: Console, lang: str = "en", report_path: str = "", also: Sequence[str] = ()
) -> None:
    """The results table, the failures with their reasons, the categories and the totals; then
    report.json's path and every other file the run wrote (`also`: report.html, junit.xml…)."""
    report = ReportDocument.of(report)
    threshold = report.summary.threshold
    console.print(_results_table(report, lang, console.width))
    repeated = report.summary.repeat > 1
    _print_failures(report.results, threshold, console, lang, repeated)
    drift.print_terminal(report, console, lang)
    unsupported.print_terminal(report, console, lang)
    if (by_category := categories.terminal_table(report, lang)) is not None:
        console.print(by_category)
    if (by_capability := capabilities.terminal_table(report, lang)) is not None:
        console.print(by_capability)
    reliability.print_terminal(report.repeats, console, lang)
    for part in triggering.terminal_tables(report, lang):
        console.print(part)
    for part in gold.terminal_tables(report, lang):
        console.print(part)
    _print_totals(report.summary, console, lang)
    if report.shard is not None:
        console.print(shard_label(report.shard, lang), markup=False, highlight=False)
    if (line := budget.headline(report, lang)) is not None:
        console.print(for_terminal(line), markup=False, highlight=False)
    if report_path:
        console.print(plain(f"{t('report', lang)}: {for_terminal(report_path)}"))
    if also:
        console.print(plain(f"{t('also written', lang)}: {', '.join(for_terminal(p) for p in also)}"))


def _results_table(report: ReportDocument, lang: str, width: int = 120) -> Table:
    """One row per sample, and beneath a conversation one row per turn, in `width` cells."""
    threshold = report.summary.threshold
    table = Table(title=t("Results", lang), show_lines=False, expand=False)
    # The label column gives way first: cut with an ellipsis, never folded into ragged rows.
    others = [t("status", lang), "fact", "behavior", "judge", t("composite", lang), t("pass", lang)]
    fixed = [max(cell_len(name), 4 if name == others[-1] else 5) for name in others]  # a header and "5.00" stay whole
    room = width - sum(fixed) - 3 * (len(fixed) + 1) - 1  # each column: 2 cells of padding, 1 of border
    repeated = report.summary.repeat > 1
    shown = _table_rows(report)
    widest = max([0, *(cell_len(r.sample_id) + (4 if repeated else 0) for r in shown)])
    label_cells = max(10, min(room, max(widest, 48)))
    table.add_column(t("sample", lang), no_wrap=True, overflow="ellipsis", max_width=label_cells)
    for name, wide in zip(others, fixed, strict=True):
        justify: JustifyMethod = "left" if name == t("status", lang) else "center" if name == t("pass", lang) else "right"
        table.add_column(name, no_wrap=True, min_width=wide, justify=justify)
    if len(shown) < len(report.results):
        table.caption = t("{shown} of {total} results shown (those that did not pass first); all are in the report", lang).format(
            shown=len(shown), total=len(report.results)
        )
    for r in shown:
        sc = r.scores
        status = Text("ok") if r.status == "ok" else Text(t("error", lang), style="bold red")
        mark = Text("✓", style="green") if r.passed else Text("✗", style="red")
        run = f"#{r.repeat + 1} " if repeated else ""  # first: a cut id keeps its run number
        table.add_row(
            Text(run + for_terminal(r.sample_id), no_wrap=True, overflow="ellipsis"),  # never markup, never a raw escape
            status,
            _score_text(sc.fact, threshold),
            _score_text(sc.behavior, threshold),
            _score_text(sc.judge, threshold),
            _score_text(sc.composite if r.status == "ok" else None, threshold),
            mark,
        )
        for turn in r.turns:
            table.add_row(*_turn_row(turn, threshold, label_cells, lang))
    return table


def _table_rows(report: ReportDocument) -> list[SampleResult]:
    """The results the table shows: all of a run of up to `TABLE_ROWS`; of a larger one, those that
    did not pass (up to `TABLE_ROWS`) in run order, then passed ones until the table is full."""
    results = report.results
    if len(results) <= TABLE_ROWS:
        return list(results)
    shown = list(islice((r for r in results if not r.passed), TABLE_ROWS))
    return shown + list(islice((r for r in results if r.passed), TABLE_ROWS - len(shown)))


def _turn_row(turn: TurnResult, threshold: Any, label_cells: int, lang: str) -> list[Text]:
    ts = turn.scores
    done = turn.status == "ok"
    # one line per turn, cut to the width the sample ids take (at least 48 cells) by display
    # width: a Chinese character takes two cells, so a cut by characters wrapped
    label = plain(f"  ↳ {for_terminal(turn_label(turn, 200, lang))}", style="dim", no_wrap=True, overflow="ellipsis")
    label.truncate(label_cells, overflow="ellipsis")
    return [
        label,
        Text(t(str(turn.status), lang), style="dim" if done else "red"),
        _score_text(ts.fact, threshold),
        _score_text(ts.behavior, threshold),
        _score_text(ts.judge, threshold),
        _score_text(ts.composite if done and turn.passed is not None else None, threshold),
        _turn_mark(turn.passed),
    ]


IDS_SHOWN = 10  # sample ids listed under an error many samples share


Block = tuple[str, list[str], str | None, str | None]  # (who, why, the output judged, what it left in its workspace)


def _print_failures(results: Sequence[SampleResult], threshold: Any, console: Console, lang: str, repeated: bool = False) -> None:
    failed: dict[object, tuple[Block, int]] = {}  # by sample under --repeat (its failing runs counted), else by result
    noted: dict[object, tuple[Block, int]] = {}
    more = 0
    shared = _shared_errors(results)  # a first pass keeps only the errors and the ids they name
    runs = Counter(r.sample_id for r in results) if repeated else Counter()
    for i, r in enumerate(results):
        group = shared.get(r.error or "") if r.status == "error" else None
        if group is not None and group[0][0] != i:
            continue  # said once, with the first sample that had it
        key: object = r.sample_id if repeated and group is None else i
        if key not in failed and key not in noted and len(failed) + len(noted) >= FAILURES_SHOWN:
            more += 1 if not r.passed or passed_but_failed(r) else 0
            continue
        name = for_terminal(r.sample_id)
        if group is not None:
            named = list(dict.fromkeys(for_terminal(sid) for _, sid in group))
            ids = ", ".join(named[:IDS_SHOWN]) + (f" … (+{len(named) - IDS_SHOWN})" if len(named) > IDS_SHOWN else "")
            name = t("{n} samples, the same error: {ids}", lang).format(n=len(group), ids=ids)
        if r.status == "error":
            _add(failed, key, (name, [f"{t('error', lang)}: {r.error}"], None, None))
        elif not r.passed:
            # assertions, judge reasons, layers under the bar; then what the model said and the files it
            # left, as facts beside the reasons rather than one more failed check
            _add(failed, key, (name, failure_lines(r, threshold), _judged_output(r), workspace_line(r.trace.workspace, lang=lang)))
        elif lines := passed_but_failed(r):  # passed overall, but say what did fail
            _add(noted, key, (name, lines, None, None))
    for heading, details in ((t("Failures", lang), failed), (t("Passed, with failed checks", lang), noted)):
        if not details:
            continue
        console.print(Text(heading, style="bold"))
        for key, ((name, lines, output, where), count) in details.items():
            if isinstance(key, str):  # a sample's runs under --repeat: one block, its failing runs counted
                name += " · " + t("in {n} of {total} runs", lang).format(n=count, total=runs[key])
            console.print(plain(f"  {name}", style="bold"))
            for line in lines:  # a message of several lines (a tool_sequence table) stays indented
                console.print(plain(f"    - {for_terminal(reason_text(line, lang)).replace(chr(10), chr(10) + '      ')}"))
            if output is not None:
                console.print(_output_line(output, console, lang))
            if where is not None:
                console.print(plain(f"    {where}", style="dim"))
    if more:
        console.print(plain(t("… and {n} more that did not pass or had failed checks: see the report", lang).format(n=more), style="dim"))


def _add(blocks: dict[object, tuple[Block, int]], key: object, block: Block) -> None:
    """One more failing result for `key`: the first one's name and output, every distinct reason once."""
    if key not in blocks:
        blocks[key] = (block, 1)
        return
    (name, lines, output, where), count = blocks[key]
    lines += [line for line in block[1] if line not in lines]
    blocks[key] = ((name, lines, output, where), count + 1)


def _shared_errors(results: Iterable[SampleResult]) -> dict[str, list[tuple[int, str]]]:
    """Errors that more than one sample ended with, word for word, each with (place, sample id) of
    the results that had it: the terminal says each once, with the count and the sample ids (the
    report keeps every sample's own). Only errored results are remembered, by id."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for i, r in enumerate(results):
        if r.status == "error" and r.error:
            groups.setdefault(r.error, []).append((i, r.sample_id))
    return {error: group for error, group in groups.items() if len(group) > 1}


def _judged_output(result: SampleResult) -> str:
    """The output the failed checks judged: a conversation's first failing turn's, else the sample's."""
    for turn in result.turns:
        if turn.passed is False or turn.status == "error":
            return turn.output or ""
    return result.output or ""


def _output_line(output: str, console: Console, lang: str) -> Text:
    """`    output: The start of what the model said…` on one line, within the terminal's width."""
    flat = " ".join(for_terminal(output).split())
    label = f"    {t('output', lang)}: "
    text = Text(label, style="dim")
    text.append(flat or t("(no output)", lang), style="italic")
    width = min(OUTPUT_CELLS, max(console.width, 40)) if console.width else OUTPUT_CELLS
    text.truncate(width, overflow="ellipsis")
    text.no_wrap = True
    return text


def _print_totals(summary: Summary, console: Console, lang: str) -> None:
    repeat = summary.repeat
    if repeat > 1:  # the counts below are of runs: say so, and how many samples made them
        runs = f"{counted(summary.total // repeat, 'sample', 'samples', lang)} × {counted(repeat, 'run', 'runs', lang)}"
        head = (
            f"{runs} · {summary.passed}/{summary.total} {t('runs', lang)} {t('passed', lang)} · "
            f"{summary.failed} {t('failed', lang)} · {summary.errored} {t('errored', lang)}"
        )
    else:
        head = (
            f"{counted(summary.total, 'sample', 'samples', lang)} · {summary.passed} {t('passed', lang)} · "
            f"{summary.failed} {t('failed', lang)} · {summary.errored} {t('errored', lang)}"
        )
    def at(name: str) -> str:
        return intervals.layer(summary, name, lang)

    layers = f"composite {at('composite')} (fact {at('fact')}, behavior {at('behavior')}, judge {at('judge')})"
    console.print(Text(head, style="bold"))
    console.print(plain(layers if summary.threshold is None else f"{layers} · {t('threshold', lang)} {summary.threshold:g}"))
    for line in (intervals.pass_rate_line(summary, lang), intervals.variance_line(summary, lang)):
        if line:
            console.print(line)
    if summary.cost_usd is not None:
        console.print(plain(f"{t('cost', lang)}: ${summary.cost_usd:.4f}"))
    if summary.judge_cost_usd:
        console.print(plain(f"{t('judge cost', lang)}: ${summary.judge_cost_usd:.4f}"))
    if skipped := skipped_judge_line(summary, lang):
        console.print(Text(skipped, style="yellow"))
    if cached := cached_line(summary, lang):
        console.print(Text(cached, style="yellow"))
    verdict = t("gate passed", lang) if summary.gate_passed else t("gate failed", lang)
    console.print(Text(verdict, style="bold green" if summary.gate_passed else "bold red"))
