"""The `--repeat N` section of every report format, from report.json's `repeats`: how many samples
passed every run, some (flaky) or none; pass@k and pass^k over the run for k = 1 … N with their
intervals; and each sample (flaky ones first) with its passes, composite spread, pass@k and pass^k.

A run without repeats has no section; a report written before pass@k existed shows the counts and
the samples without those figures.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from omk.report.i18n import t

if TYPE_CHECKING:  # a report without repeats never loads their records
    from omk.records.document import ReportDocument
    from omk.records.repeats import KMean, Repeats, RepeatSample

FLAKY = ' class="flaky"'
TERMINAL_ROWS = 200  # samples in the terminal's table (flaky ones come first); all are in the report


def _num(v: Any) -> str:
    return "—" if v is None else f"{v:.2f}"


def k_figure(m: KMean | None) -> str:
    """`0.83 [0.71, 0.94]`: a k's mean over the run with its 95% interval (— without one)."""
    if m is None:
        return "—"
    return _num(m.mean) + (f" [{m.ci.low:.2f}, {m.ci.high:.2f}]" if m.ci is not None else "")


def k_list(values: tuple[Any, ...]) -> str:
    """A sample's pass@k (or pass^k) for k = 1 … runs: `0.67 · 1.00 · 1.00`."""
    return " · ".join(_num(v) for v in values) if values else "—"


def counts_line(rep: Repeats, lang: str = "en") -> str:
    """One sentence on the spread: `3 runs per sample: 12 of 14 samples passed every run, …`."""
    return t("{n} runs per sample: {always} of {samples} samples passed every run, {flaky} flaky, {never} never passed", lang).format(
        n=rep.n, always=rep.always_passed, samples=rep.samples, flaky=rep.flaky, never=rep.never_passed
    )


def _k_rows(rep: Repeats) -> list[tuple[int, KMean | None, KMean | None]]:
    at = {m.k: m for m in rep.pass_at_k}
    hat = {m.k: m for m in rep.pass_hat_k}
    return [(k, at.get(k), hat.get(k)) for k in sorted(set(at) | set(hat))]


def _spread(s: RepeatSample) -> str:
    c = s.composite
    if c.mean is None:
        return "—"
    return _num(c.mean) + (f" ± {c.stddev:.2f}" if c.stddev is not None else "")


# ---------------------------------------------------------------- terminal


def print_terminal(rep: Repeats | None, console: Any, lang: str = "en") -> None:
    """The samples table (flaky first), the pass@k / pass^k table, and the counts line."""
    if rep is None:
        return
    from rich.text import Text

    from omk.io.textsafe import for_terminal
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    n = rep.n or 0
    table = Table(title=plain(t("Repeats ({n} runs per sample)", lang).format(n=n), style="table.title"), title_justify="left")
    for col in (t("sample", lang), t("passed", lang), t("composite mean", lang), t("stddev", lang), t("min", lang), t("max", lang), f"pass@{n}", f"pass^{n}"):
        table.add_column(col, justify="left" if col == t("sample", lang) else "right", no_wrap=col == t("sample", lang), overflow="ellipsis")
    for s in rep.per_sample[:TERMINAL_ROWS]:
        c = s.composite
        at = s.pass_at_k[-1] if s.pass_at_k else None
        hat = s.pass_hat_k[-1] if s.pass_hat_k else None
        mark = Text(for_terminal(s.sample_id), style="yellow" if s.flaky else "")
        table.add_row(mark, plain(f"{s.passed}/{s.runs}"), _num(c.mean), _num(c.stddev), _num(c.min), _num(c.max), _num(at), _num(hat))
    if len(rep.per_sample) > TERMINAL_ROWS:
        table.caption = t("{shown} of {total} samples shown (flaky ones first); all are in the report", lang).format(
            shown=TERMINAL_ROWS, total=len(rep.per_sample)
        )
    console.print(table)
    if rows := _k_rows(rep):
        ks = Table(title=t("pass@k and pass^k over the run (95% interval)", lang), title_justify="left")
        for col in ("k", "pass@k", "pass^k"):
            ks.add_column(col, justify="right")
        for k, at_k, hat_k in rows:
            ks.add_row(str(k), k_figure(at_k), k_figure(hat_k))
        console.print(ks)
    console.print(Text(counts_line(rep, lang)))


# ---------------------------------------------------------------- Markdown and HTML


def markdown_lines(rep: Repeats | None, lang: str, cell: Any) -> list[str]:
    """`cell` escapes one Markdown table cell (omk.report.markdown.cell)."""
    if rep is None:
        return []
    out = [f"### {t('Repeats', lang)}", "", cell(counts_line(rep, lang)), ""]
    if rows := _k_rows(rep):
        out += ["| k | pass@k | pass^k |", "| ---: | ---: | ---: |"]
        out += [f"| {k} | {k_figure(a)} | {k_figure(h)} |" for k, a, h in rows]
        out.append("")
    if rep.per_sample:  # folded: flaky samples first
        out += [
            f"<details><summary>{t('sample', lang)} ({len(rep.per_sample)})</summary>",
            "",
            f"| {t('sample', lang)} | {t('passed', lang)} | composite | pass@k (k = 1…{rep.n}) | pass^k (k = 1…{rep.n}) |",
            "| --- | ---: | ---: | --- | --- |",
        ]
        out += [
            f"| {cell(s.sample_id)}{' ⚠️' if s.flaky else ''} | {s.passed}/{s.runs} | {_spread(s)} | {k_list(s.pass_at_k)} | {k_list(s.pass_hat_k)} |"
            for s in rep.per_sample
        ]
        out += ["", "</details>", ""]
    return out


def html_section(rep: Repeats | None, lang: str) -> str:
    if rep is None:
        return ""
    esc = html.escape
    parts = [f'<h2>{esc(t("Repeats", lang))}</h2><p id="repeats">{esc(counts_line(rep, lang))}</p>']
    if rows := _k_rows(rep):
        body = "".join(f"<tr><td>{k}</td><td>{esc(k_figure(a))}</td><td>{esc(k_figure(h))}</td></tr>" for k, a, h in rows)
        parts.append(f'<table class="pass-k"><thead><tr><th>k</th><th>pass@k</th><th>pass^k</th></tr></thead><tbody>{body}</tbody></table>')
    if rep.per_sample:
        head = "".join(
            f"<th>{esc(h)}</th>"
            for h in (t("sample", lang), t("passed", lang), "composite", f"pass@k (k = 1…{rep.n})", f"pass^k (k = 1…{rep.n})")
        )
        body = "".join(
            f"<tr{FLAKY if s.flaky else ''}><td>{esc(s.sample_id)}</td><td>{s.passed}/{s.runs}</td>"
            f"<td>{esc(_spread(s))}</td><td>{esc(k_list(s.pass_at_k))}</td><td>{esc(k_list(s.pass_hat_k))}</td></tr>"
            for s in rep.per_sample
        )
        parts.append(f'<table class="repeats"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    return "".join(parts)


def junit_properties(report: ReportDocument) -> list[tuple[str, str]]:
    """`pass@k:<k>` and `pass^k:<k>` = the run's mean (and interval) for the suite's properties."""
    rep = report.repeats
    if rep is None:
        return []
    out = [("repeats:flaky", str(rep.flaky))]
    out += [(f"pass@k:{m.k}", k_figure(m)) for m in rep.pass_at_k]
    out += [(f"pass^k:{m.k}", k_figure(m)) for m in rep.pass_hat_k]
    return out
