"""The summary a person reads in the terminal after `omk eval`."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from omk.report import categories
from omk.report.i18n import t
from omk.report.reasons import failure_lines, passed_but_failed, skipped_judge_line, turn_label


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"


def _score_text(score: float | None, threshold: float) -> Text:
    if score is None:
        return Text("—", style="dim")
    return Text(f"{score:.2f}", style="green" if score >= threshold else "red")


def _turn_mark(passed: bool | None) -> Text:
    if passed is None:
        return Text("·", style="dim")  # nothing graded on this turn, or it was not sent
    return Text("✓", style="green") if passed else Text("✗", style="red")


def for_terminal(text: Any) -> str:
    from omk.textsafe import for_terminal as escaped

    return escaped(str(text))


def print_summary(report: dict[str, Any], console: Console, lang: str = "en", report_path: str = "") -> None:
    threshold = report["summary"]["threshold"]
    console.print(_results_table(report, lang))
    _print_failures(report["results"], threshold, console, lang)
    if (by_category := categories.terminal_table(report, lang)) is not None:
        console.print(by_category)
    _print_totals(report["summary"], console, lang)
    if report_path:
        console.print(f"{t('report', lang)}: {report_path}")


def _results_table(report: dict[str, Any], lang: str) -> Table:
    """One row per sample, and beneath a conversation one row per turn."""
    threshold = report["summary"]["threshold"]
    table = Table(title=t("Results", lang), show_lines=False, expand=False)
    table.add_column(t("sample", lang), overflow="fold")
    table.add_column(t("status", lang))
    table.add_column("fact", justify="right")
    table.add_column("behavior", justify="right")
    table.add_column("judge", justify="right")
    table.add_column(t("composite", lang), justify="right")
    table.add_column(t("pass", lang), justify="center")
    label_cells = max([48, *(cell_len(r["sample_id"]) for r in report["results"])])
    for r in report["results"]:
        sc = r["scores"]
        status = Text("ok") if r["status"] == "ok" else Text(t("error", lang), style="bold red")
        mark = Text("✓", style="green") if r["passed"] else Text("✗", style="red")
        table.add_row(
            Text(for_terminal(r["sample_id"])),  # never markup, never a raw escape sequence
            status,
            _score_text(sc["fact"], threshold),
            _score_text(sc["behavior"], threshold),
            _score_text(sc["judge"], threshold),
            _score_text(sc["composite"] if r["status"] == "ok" else None, threshold),
            mark,
        )
        for turn in r.get("turns") or []:
            table.add_row(*_turn_row(turn, threshold, label_cells, lang))
    return table


def _turn_row(turn: dict[str, Any], threshold: float, label_cells: int, lang: str) -> list[Text]:
    ts = turn["scores"]
    done = turn["status"] == "ok"
    # one line per turn, cut to the width the sample ids take (at least 48 cells) by display
    # width: a Chinese character takes two cells, so a cut by characters wrapped
    label = Text(f"  ↳ {for_terminal(turn_label(turn, 200, lang))}", style="dim", no_wrap=True, overflow="ellipsis")
    label.truncate(label_cells, overflow="ellipsis")
    return [
        label,
        Text(t(turn["status"], lang), style="dim" if done else "red"),
        _score_text(ts["fact"], threshold),
        _score_text(ts["behavior"], threshold),
        _score_text(ts["judge"], threshold),
        _score_text(ts["composite"] if done and turn["passed"] is not None else None, threshold),
        _turn_mark(turn["passed"]),
    ]


def _print_failures(results: list[dict[str, Any]], threshold: float, console: Console, lang: str) -> None:
    details = []
    for r in results:
        if r["status"] == "error":
            lines = [f"{t('error', lang)}: {r['error']}"]
        elif not r["passed"]:
            lines = failure_lines(r, threshold)  # assertions, judge reasons, layers under the bar
        else:
            lines = passed_but_failed(r)  # passed overall, but say what did fail
        if lines:
            details.append((r["sample_id"], lines))
    if details:
        console.print(Text(t("Failures", lang), style="bold"))
        for sid, lines in details:
            console.print(Text(f"  {for_terminal(sid)}", style="bold"))
            for line in lines:
                console.print(Text(f"    - {for_terminal(line)}"))


def _print_totals(summary: dict[str, Any], console: Console, lang: str) -> None:
    s = summary["scores"]
    head = (
        f"{summary['total']} {t('samples', lang)} · {summary['passed']} {t('passed', lang)} · "
        f"{summary['failed']} {t('failed', lang)} · {summary['errored']} {t('errored', lang)}"
    )
    layers = f"composite {_fmt(s['composite'])} (fact {_fmt(s['fact'])}, behavior {_fmt(s['behavior'])}, judge {_fmt(s['judge'])})"
    console.print(Text(head, style="bold"))
    console.print(f"{layers} · {t('threshold', lang)} {summary['threshold']:g}")
    if summary.get("cost_usd") is not None:
        console.print(f"{t('cost', lang)}: ${summary['cost_usd']:.4f}")
    if summary.get("judge_cost_usd"):
        console.print(f"{t('judge cost', lang)}: ${summary['judge_cost_usd']:.4f}")
    if skipped := skipped_judge_line(summary, lang):
        console.print(Text(skipped, style="yellow"))
    verdict = t("gate passed", lang) if summary["gate_passed"] else t("gate failed", lang)
    console.print(Text(verdict, style="bold green" if summary["gate_passed"] else "bold red"))
