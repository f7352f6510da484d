"""`summary.md` of an experiment: ready to paste into a pull request.

The verdict and its recommendation come first, then the variants side by side, then each
treatment against the control (the paired change of the composite and of each layer with its
95% interval, wins / ties / losses, effect size, the smallest change the sample count can
detect, the pass-rate change with McNemar's test, cost and latency) and the samples that
regressed; long lists fold into `<details>`; the pairwise judge's verdicts, when it ran
(omk/report/pairwise.py). Each variant's failures (open) and a sample-by-variant
table close it. Every value from the run goes through `cell` (escaped for Markdown tables and
HTML: GitHub renders both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omk.records.document import ReportDocument
from omk.records.experiment_block import Case, Comparison, ExperimentBlock, PerSample
from omk.report import ablation, gold, i18n, pairwise, triggering
from omk.report import experiment_tables as ex
from omk.report.reasons import is_repeated, result_name

OPEN_ROWS = 10  # more regressed samples than this fold into <details>
MARK = {"PROGRESS": "🟢", "CAUTIOUS": "🟡", "REGRESS": "🔴", "NOISE": "⚪", "UNDERPOWERED": "🟠", "SOLO": "🔵"}
PASS = {True: "✅", False: "❌"}

Cell = Callable[[Any], str]


def render(report: ReportDocument, exp: ExperimentBlock, lang: str, cell: Cell) -> str:
    out = _head(report, exp, lang, cell)
    out += _variants(exp, lang, cell)
    out += ablation.markdown_lines(exp.ablation, lang, cell)  # --ablate: each part of the skill ranked
    for comp in exp.comparisons:
        out += _comparison(exp, comp, lang, cell)
    out += pairwise.markdown_lines(report, lang, cell)  # the pairwise judge's verdicts, when it ran
    out += triggering.markdown_lines(report, lang, cell)  # the control's triggering, each treatment's change
    out += gold.markdown_lines(report, lang, cell)  # the judge against people (the control's outputs)
    out += _failures(exp, lang, cell)
    out += _all_samples(exp, lang, cell)
    out += _footer(exp, cell, lang)
    return "\n".join(out)


def _mark(level: str) -> str:
    return f"{MARK[level]} " if level in MARK else ""


def _head(report: ReportDocument, exp: ExperimentBlock, lang: str, cell: Cell) -> list[str]:
    v = exp.verdict
    level = str(v.level)
    out = [
        f"## omk {i18n.t('experiment', lang)} · {cell(report.run_id)}",
        "",
        *([f"**{cell(i18n.shard_label(report.shard, lang))}**", ""] if report.shard is not None else []),
        f"### {_mark(level)}{cell(i18n.verdict_text(v.headline, lang))}",
        "",
        f"**{cell(i18n.verdict_text(v.recommendation, lang))}**",
        "",
    ]
    context = [i18n.verdict_line(line.strip(), lang) for line in v.lines[2:-1]]
    if context:
        out += [" · ".join(cell(line) for line in context), ""]
    require = exp.require
    if require is not None:
        met = f"✅ {i18n.t('met', lang)}" if require.passed else f"❌ {i18n.t('NOT met', lang)}"
        out += [f"`--require {cell(require.policy)}`: {met} — {cell(i18n.verdict_text(require.reason or '', lang))}", ""]
    if line := ex.cached_line(exp, lang):
        out += [cell(line), ""]
    return out


def _variants(exp: ExperimentBlock, lang: str, cell: Cell) -> list[str]:
    names = []
    for v in exp.variants:
        name = f"**{cell(v.name)}**"
        names.append(name + (f" ({i18n.t('control', lang)})" if v.role == "control" else ""))
    out = ["| | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for label, values in ex.variant_rows(exp, lang):
        if label == i18n.t("role", lang):
            continue  # the header says which is the control
        out.append(f"| {cell(label)} | " + " | ".join(cell(_gate_mark(x, lang)) for x in values) + " |")
    return [*out, ""]


def _gate_mark(value: str, lang: str = "en") -> str:
    if value == "pass":
        return f"✅ {i18n.t('pass', lang, 'gate')}"
    if value.startswith("fail"):
        return "❌ " + i18n.t("fail", lang, "gate") + value[len("fail") :]
    return value


def _comparison(exp: ExperimentBlock, comp: Comparison, lang: str, cell: Cell) -> list[str]:
    pair = exp.pair_verdict(comp)
    t, c = cell(comp.treatment), cell(comp.control)
    level = str(pair.level or "") if pair is not None else ""
    out = [
        f"### {t} vs {c} · {_mark(level)}{cell(level)}",
        "",
        f"| {i18n.t('measure', lang)} | Δ ({t} − {c}) | {i18n.t('95% CI', lang)} | {i18n.t('wins / ties / losses', lang)} "
        f"| {i18n.t('effect size d_z', lang)} | {i18n.t('detects ≥', lang)} (MDE) | n |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in ex.measure_rows(comp):
        mean = f"**{row.mean}**" if row.significant else row.mean
        out.append(
            f"| {cell(i18n.t(row.measure, lang))} | {mean} | {row.ci} | {row.wins_ties_losses} | {row.effect} | {row.mde} | {row.n} |"
        )
    out += [
        "",
        f"{cell(ex.pass_rate_text(comp, lang))} · {cell(ex.resources_text(comp, lang))}",
        "",
        cell(ex.coverage_text(comp, lang)),
        "",
    ]
    return out + _regressions(comp, lang, cell)


def _regressions(comp: Comparison, lang: str, cell: Cell) -> list[str]:
    found = comp.regressions
    title = f"{i18n.t('Regressed samples', lang)} ({len(found)})"
    if not found:
        return [f"**{title}**: {i18n.t('none', lang)}.", ""]
    scores = {str(s.sample_id): s for s in comp.per_sample}
    c, t = cell(comp.control), cell(comp.treatment)
    table = [f"| {i18n.t('sample', lang)} | {c} | {t} | Δ | {i18n.t('why', lang)} |", "| --- | ---: | ---: | ---: | --- |"]
    for r in found:
        s = scores.get(str(r.sample_id))
        table.append(
            f"| {cell(r.sample_id)} | {_side(s, 'control')} | {_side(s, 'treatment')} | "
            f"{ex.signed(r.delta)} | {cell(ex.regression_why(r))} |"
        )
    if len(found) > OPEN_ROWS:
        return [f"<details><summary>{title}</summary>", "", *table, "", "</details>", ""]
    return [f"**{title}**", "", *table, ""]


def _side(s: PerSample | None, side: str) -> str:
    if s is None:
        return "—"
    if s.errored(side):
        return "error"
    return f"{PASS[s.passed(side)]} {ex.num(s.score(side))}"


def _failures(exp: ExperimentBlock, lang: str, cell: Cell) -> list[str]:
    """Per variant, its failed and errored results with their reasons, open on arrival (a reader
    comes for them) and foldable."""
    out = []
    for name, results in ex.cases(exp).items():
        bad = [r for r in results if not r.passed]
        if not bad:
            continue
        repeated = is_repeated(results)
        out += [
            f"<details open><summary>{i18n.t('Failures', lang)}: {cell(name)} ({len(bad)})</summary>",
            "",
            f"| {i18n.t('sample', lang)} | composite | {i18n.t('why', lang)} |",
            "| --- | ---: | --- |",
        ]
        for r in bad:
            score = i18n.t("error", lang) if r.status == "error" else ex.num(r.composite)
            why = "; ".join(i18n.reason_text(m.strip(), lang) for m in r.messages[:6])
            out.append(f"| {cell(result_name(r, repeated))} | {score} | {cell(why)} |")
        out += ["", "</details>", ""]
    return out


def _all_samples(exp: ExperimentBlock, lang: str, cell: Cell) -> list[str]:
    """Every sample: each variant's outcome, then each treatment's Δ against the control."""
    per_variant = ex.cases(exp)
    names = list(per_variant)
    rows: dict[str, dict[str, list[Case]]] = {}
    for name, results in per_variant.items():
        for r in results:
            rows.setdefault(str(r.sample_id), {}).setdefault(name, []).append(r)
    deltas = {str(comp.treatment): {str(s.sample_id): s.delta for s in comp.per_sample} for comp in exp.comparisons}
    head = [i18n.t("sample", lang), *(cell(n) for n in names), *(f"Δ {cell(n)}" for n in deltas)]
    out = [
        f"<details><summary>{i18n.t('All samples', lang)} ({len(rows)})</summary>",
        "",
        "| " + " | ".join(head) + " |",
        "| --- |" + " :---: |" * len(names) + " ---: |" * len(deltas),
    ]
    for sid, by in rows.items():
        marks = [_outcome(by.get(n) or []) for n in names]
        out.append("| " + " | ".join([cell(sid), *marks, *(ex.signed(d.get(sid)) for d in deltas.values())]) + " |")
    return [*out, "", "</details>", ""]


def _outcome(results: list[Case]) -> str:
    """One sample on one variant: ✅ 4.50, ❌ 3.00, error; repeats as their passes (2/3 ✅)."""
    if not results:
        return "—"
    if len(results) > 1:
        passes = sum(1 for r in results if r.passed)
        return f"{passes}/{len(results)} ✅"
    r = results[0]
    if r.status == "error":
        return "error"
    return f"{PASS[r.passed]} {ex.num(r.composite)}"


def _footer(exp: ExperimentBlock, cell: Cell, lang: str = "en") -> list[str]:
    if not exp.comparisons:
        return []
    s = exp.settings
    method = i18n.t("paired bootstrap", lang) + (i18n.t(", {n} resamples", lang).format(n=f"{s.resamples:,}") if s.resamples else "")
    said = i18n.t(
        "Δ: treatment − control composite per sample (1–5 scale), averaged over the samples both scored; "
        "95% CI: {method}, seed {seed}; trivial ±{trivial}; **bold**: CI excludes 0. "
        "Each variant's full report is in <code>variants/&lt;name&gt;/</code>.",
        lang,
    )
    return [f"<sub>{said.format(method=cell(method), seed=cell(s.seed), trivial=cell(s.trivial))}</sub>", ""]
