"""`summary.md` of an experiment: ready to paste into a pull request.

The verdict and its recommendation come first, then the variants side by side, then each
treatment against the control (the paired change of the composite and of each layer with its
95% interval, wins / ties / losses, effect size, the smallest change the sample count can
detect, the pass-rate change with McNemar's test, cost and latency) and the samples that
regressed; long lists fold into `<details>`; the pairwise judge's verdicts, when it ran
(omk/report/pairwise.py). Each variant's failures and a sample-by-variant
table close it. Every value from the run goes through `cell` (escaped for Markdown tables and
HTML: GitHub renders both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.report import _legacy_experiment as ex
from omk.report import _legacy_pairwise as pairwise
from omk.report._legacy_reasons import is_repeated, result_name

OPEN_ROWS = 10  # more regressed samples than this fold into <details>
MARK = {"PROGRESS": "🟢", "CAUTIOUS": "🟡", "REGRESS": "🔴", "NOISE": "⚪", "UNDERPOWERED": "🟠", "SOLO": "🔵"}
PASS = {True: "✅", False: "❌"}

Cell = Callable[[Any], str]


def render(report: dict[str, Any], exp: dict[str, Any], lang: str, cell: Cell) -> str:
    out = _head(report, exp, lang, cell)
    out += _variants(exp, lang, cell)
    for comp in ex.comparisons(exp):
        out += _comparison(exp, comp, lang, cell)
    out += pairwise.markdown_lines(report, lang, cell)  # the pairwise judge's verdicts, when it ran
    out += _failures(exp, lang, cell)
    out += _all_samples(exp, lang, cell)
    out += _footer(exp, cell)
    return "\n".join(out)


def _mark(level: str) -> str:
    return f"{MARK[level]} " if level in MARK else ""


def _head(report: dict[str, Any], exp: dict[str, Any], lang: str, cell: Cell) -> list[str]:
    v = exp["verdict"]
    level = str(v.get("level"))
    out = [
        f"## omk {ex.tx('experiment', lang)} · {cell(report.get('run_id'))}",
        "",
        f"### {_mark(level)}{cell(v.get('headline'))}",
        "",
        f"**{cell(v.get('recommendation'))}**",
        "",
    ]
    context = [line.strip() for line in (v.get("lines") or [])[2:-1]]
    if context:
        out += [" · ".join(cell(line) for line in context), ""]
    require = exp.get("require")
    if isinstance(require, dict):
        met = "✅ met" if require.get("passed") else "❌ NOT met"
        out += [f"`--require {cell(require.get('policy'))}`: {met} — {cell(require.get('reason'))}", ""]
    return out


def _variants(exp: dict[str, Any], lang: str, cell: Cell) -> list[str]:
    names = []
    for v in ex.variants(exp):
        name = f"**{cell(v.get('name'))}**"
        names.append(name + (f" ({ex.tx('control', lang)})" if v.get("role") == "control" else ""))
    out = ["| | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for label, values in ex.variant_rows(exp, lang):
        if label == ex.tx("role", lang):
            continue  # the header says which is the control
        out.append(f"| {cell(label)} | " + " | ".join(cell(_gate_mark(x)) for x in values) + " |")
    return [*out, ""]


def _gate_mark(value: str) -> str:
    if value == "pass":
        return "✅ pass"
    return "❌ " + value if value.startswith("fail") else value


def _comparison(exp: dict[str, Any], comp: dict[str, Any], lang: str, cell: Cell) -> list[str]:
    pair = ex.pair_verdict(exp, comp)
    t, c = cell(comp.get("treatment")), cell(comp.get("control"))
    level = str(pair.get("level") or "")
    out = [
        f"### {t} vs {c} · {_mark(level)}{cell(level)}",
        "",
        f"| {ex.tx('measure', lang)} | Δ ({t} − {c}) | {ex.tx('95% CI', lang)} | {ex.tx('wins / ties / losses', lang)} "
        f"| {ex.tx('effect size d_z', lang)} | {ex.tx('detects ≥', lang)} (MDE) | n |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in ex.measure_rows(comp):
        mean = f"**{row.mean}**" if row.significant else row.mean
        out.append(
            f"| {cell(ex.tx(row.measure, lang))} | {mean} | {row.ci} | {row.wins_ties_losses} | {row.effect} | {row.mde} | {row.n} |"
        )
    out += [
        "",
        f"{cell(ex.pass_rate_text(comp, lang))} · {cell(ex.resources_text(comp))}",
        "",
        cell(ex.coverage_text(comp)),
        "",
    ]
    return out + _regressions(comp, lang, cell)


def _regressions(comp: dict[str, Any], lang: str, cell: Cell) -> list[str]:
    found = ex.regressions(comp)
    title = f"{ex.tx('Regressed samples', lang)} ({len(found)})"
    if not found:
        return [f"**{title}**: {ex.tx('none', lang)}.", ""]
    scores = {str(s.get("sample_id")): s for s in ex.per_sample(comp)}
    c, t = cell(comp.get("control")), cell(comp.get("treatment"))
    table = [f"| {ex.tx('sample', lang)} | {c} | {t} | Δ | {ex.tx('why', lang)} |", "| --- | ---: | ---: | ---: | --- |"]
    for r in found:
        s = scores.get(str(r.get("sample_id")), {})
        table.append(
            f"| {cell(r.get('sample_id'))} | {_side(s, 'control')} | {_side(s, 'treatment')} | "
            f"{ex.signed(r.get('delta'))} | {cell(ex.regression_why(r))} |"
        )
    if len(found) > OPEN_ROWS:
        return [f"<details><summary>{title}</summary>", "", *table, "", "</details>", ""]
    return [f"**{title}**", "", *table, ""]


def _side(s: dict[str, Any], side: str) -> str:
    if not s:
        return "—"
    if s.get(f"{side}_errored"):
        return "error"
    return f"{PASS[bool(s.get(f'{side}_passed'))]} {ex.num(s.get(side))}"


def _failures(exp: dict[str, Any], lang: str, cell: Cell) -> list[str]:
    """Per variant, its failed and errored results with their reasons, folded."""
    out = []
    for name, results in ex.cases(exp).items():
        bad = [r for r in results if not r.get("passed")]
        if not bad:
            continue
        repeated = is_repeated(results)
        out += [
            f"<details><summary>{ex.tx('Failures', lang)}: {cell(name)} ({len(bad)})</summary>",
            "",
            f"| {ex.tx('sample', lang)} | composite | {ex.tx('why', lang)} |",
            "| --- | ---: | --- |",
        ]
        for r in bad:
            score = "error" if r.get("status") == "error" else ex.num(r.get("composite"))
            why = "; ".join(str(m).strip() for m in (r.get("messages") or [])[:6])
            out.append(f"| {cell(result_name(r, repeated))} | {score} | {cell(why)} |")
        out += ["", "</details>", ""]
    return out


def _all_samples(exp: dict[str, Any], lang: str, cell: Cell) -> list[str]:
    """Every sample: each variant's outcome, then each treatment's Δ against the control."""
    per_variant = ex.cases(exp)
    names = list(per_variant)
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, results in per_variant.items():
        for r in results:
            rows.setdefault(str(r.get("sample_id")), {}).setdefault(name, []).append(r)
    deltas = {str(comp.get("treatment")): {str(s.get("sample_id")): s.get("delta") for s in ex.per_sample(comp)} for comp in ex.comparisons(exp)}
    head = [ex.tx("sample", lang), *(cell(n) for n in names), *(f"Δ {cell(n)}" for n in deltas)]
    out = [
        f"<details><summary>{ex.tx('All samples', lang)} ({len(rows)})</summary>",
        "",
        "| " + " | ".join(head) + " |",
        "| --- |" + " :---: |" * len(names) + " ---: |" * len(deltas),
    ]
    for sid, by in rows.items():
        marks = [_outcome(by.get(n) or []) for n in names]
        out.append("| " + " | ".join([cell(sid), *marks, *(ex.signed(d.get(sid)) for d in deltas.values())]) + " |")
    return [*out, "", "</details>", ""]


def _outcome(results: list[dict[str, Any]]) -> str:
    """One sample on one variant: ✅ 4.50, ❌ 3.00, error; repeats as their passes (2/3 ✅)."""
    if not results:
        return "—"
    if len(results) > 1:
        passes = sum(1 for r in results if r.get("passed"))
        return f"{passes}/{len(results)} ✅"
    r = results[0]
    if r.get("status") == "error":
        return "error"
    return f"{PASS[bool(r.get('passed'))]} {ex.num(r.get('composite'))}"


def _footer(exp: dict[str, Any], cell: Cell) -> list[str]:
    if not ex.comparisons(exp):
        return []
    s = exp.get("settings") or {}
    method = "paired bootstrap" + (f", {s['resamples']:,} resamples" if s.get("resamples") else "")
    return [
        f"<sub>Δ: treatment − control composite per sample (1–5 scale), averaged over the samples both scored; "
        f"95% CI: {cell(method)}, seed {cell(s.get('seed'))}; trivial ±{cell(s.get('trivial'))}; **bold**: CI excludes 0. "
        "Each variant's full report is in <code>variants/&lt;name&gt;/</code>.</sub>",
        "",
    ]
