"""The `experiment` block of report.json (omk/engine/variant_records.py) as the Markdown, HTML and JUnit
reports show it: what the three formats share — reading the block, the variants side by side,
each comparison's measures, each variant's per-sample outcomes — as plain text, unescaped.

Every function reads the typed block (omk/records/experiment_block.py), so a finished
experiment can be re-rendered with `omk report`. A report without the block yields nothing here. Sample ids and variant names
are untrusted text: each format escapes what it prints.
"""

from __future__ import annotations

from typing import Any

import msgspec

from omk.records.experiment_block import (
    Case,
    Change,
    Comparison,
    Delta,
    ExperimentBlock,
    PairVerdict,
    Regression,
    VariantRow,
)
from omk.report import intervals
from omk.report.i18n import t
from omk.stats.paired import no_spread

LAYERS = ("fact", "behavior", "judge")




def pair_verdict(exp: ExperimentBlock, comp: Comparison) -> PairVerdict | None:
    return exp.pair_verdict(comp)


# ---------------------------------------------------------------- numbers as text


def num(v: Any, digits: int = 2) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def signed(v: Any, digits: int = 2) -> str:
    return "—" if v is None else f"{v:+.{digits}f}"


def pct(v: Any) -> str:
    return "—" if v is None else f"{100 * v:.0f}%"


def p_value(p: Any) -> str:
    """A p-value people can read: 0.031, 0.0004, 7.6e-06; 1 for 1."""
    if p is None:
        return "—"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3g}"


def ci(delta: Delta | None) -> str:
    if delta is None or not delta.has_ci:
        return "—"
    return f"[{signed(delta.ci_low)}, {signed(delta.ci_high)}]"


def money(v: Any) -> str:
    return "—" if v is None else f"${v:.4f}"


def ms(v: Any) -> str:
    return "—" if v is None else f"{v:.0f} ms"


# ---------------------------------------------------------------- the variants side by side


def variant_rows(exp: ExperimentBlock, lang: str) -> list[tuple[str, list[str]]]:
    """(measure, one value per variant) rows: pass counts, scores, gate, errors, cost, latency."""
    vs = exp.variants

    def row(label: str, fn: Any) -> tuple[str, list[str]]:
        return t(label, lang), [fn(v) for v in vs]

    rows = [
        row("role", lambda v: t(str(v.role), lang)),
        row("passed", passed_text),
        row("composite", lambda v: variant_score(v, "composite", lang)),
    ]
    rows += [row(layer, lambda v, k=layer: variant_score(v, k, lang)) for layer in LAYERS if _has_layer(vs, layer)]
    rows += [
        row("layer gate", _gate),
        row("errored", lambda v: str(v.errored)),
        row("cost, total", lambda v: money(v.cost_usd)),  # the variant's whole cost (the comparison gives the per-sample change)
        row("latency / sample", lambda v: ms(v.latency_ms)),
    ]
    if any(v.tokens_in is not None for v in vs):
        rows.append(row("tokens in / out", lambda v: f"{_tok(v.tokens_in)} / {_tok(v.tokens_out)}"))
    if any(v.spread is not None for v in vs):
        rows.append(row("run-to-run spread", lambda v: "—" if v.spread is None else f"±{v.spread:.2f}"))
    return rows


def passed_text(v: VariantRow) -> str:
    """`5/24 (21% [9%, 40%])`: the variant's passes and pass rate with its Wilson interval."""
    if v.scores_ci is None or v.pass_rate_ci is None:  # before intervals, or under 2 samples
        return f"{v.passed}/{v.samples} ({pct(v.pass_rate)})"
    return f"{v.passed}/{v.samples} ({pct(v.pass_rate)} [{pct(v.pass_rate_ci.low)}, {pct(v.pass_rate_ci.high)}])"


def variant_score(v: VariantRow, layer: str, lang: str = "en") -> str:
    """A variant's mean score with its 95% interval (as it was before intervals, for older reports)."""
    mean = v.scores.layer(layer)
    if v.scores_ci is None:
        return num(mean)
    return intervals.score(mean, v.scores_ci.layer(layer), True, lang)


def _has_layer(vs: tuple[VariantRow, ...], layer: str) -> bool:
    return any(v.scores.layer(layer) is not None for v in vs)


def _tok(v: Any) -> str:
    return "—" if v is None else f"{v:,}"


def _gate(v: VariantRow) -> str:
    if v.gate_passed:
        return "pass"
    return "fail" + (f": {', '.join(v.gate_failing)}" if v.gate_failing else "")


# ---------------------------------------------------------------- one comparison


class MeasureRow(msgspec.Struct, frozen=True, gc=False):
    """One measure's paired change: the composite or a layer."""

    measure: str
    n: int
    mean: str
    ci: str
    significant: bool
    wins_ties_losses: str
    effect: str
    mde: str


def measure_rows(comp: Comparison) -> list[MeasureRow]:
    found = [("composite", comp.composite), *comp.layers]
    return [
        MeasureRow(
            measure=name,
            n=d.n,
            mean=signed(d.mean),
            ci=ci(d),
            significant=d.significant,
            wins_ties_losses=f"{d.wins} / {d.ties} / {d.losses}",
            effect=num(d.d_z),
            mde="exact" if no_spread(d.sd) else num(d.mde),
        )
        for name, d in found
        if d is not None
    ]


def pass_rate_text(comp: Comparison, lang: str) -> str:
    pr = comp.pass_rate
    points = "" if pr.change is None else f" ({100 * pr.change:+.0f} {t('pts', lang)})"
    return (
        f"{t('Pass rate', lang)} {pct(pr.control_rate)} → {pct(pr.treatment_rate)}{points}: "
        + t("{gained} gained, {lost} lost", lang).format(gained=pr.gained, lost=pr.lost)
        + f", McNemar p = {p_value(pr.p_value)}"
    )


def resources_text(comp: Comparison, lang: str = "en") -> str:
    """`cost +$0.0012 (+35.0% [28%, 41%]) · tokens +410 (…) · latency +50 ms (…) per sample`: each
    resource's change per sample, relative change and its 95% interval; tokens when reported."""
    cost, lat, tok = comp.cost_usd, comp.latency_ms, comp.tokens
    cost_delta = "—" if cost.delta is None else f"{'+' if cost.delta >= 0 else '−'}${abs(cost.delta):.4f}"
    lat_delta = "—" if lat.delta is None else f"{lat.delta:+.0f} ms"
    parts = [f"{t('cost', lang)} {cost_delta}{_relative(cost)}"]
    if tok.delta is not None:
        parts.append(f"{t('tokens', lang)} {tok.delta:+,.0f}{_relative(tok)}")
    parts.append(f"{t('latency', lang)} {lat_delta}{_relative(lat)}")
    return " · ".join(parts) + f" {t('per sample', lang)}"


def _relative(change: Change) -> str:
    """` (+35.0% [28%, 41%])`: the relative change and its interval, when there is one."""
    if change.relative is None:
        return ""
    r = change.relative_ci
    interval = f" [{100 * r.low:.0f}%, {100 * r.high:.0f}%]" if r is not None else ""
    return f" ({100 * change.relative:+.1f}%{interval})"


def coverage_text(comp: Comparison, lang: str = "en") -> str:
    """How many samples the comparison rests on, and what it leaves out."""
    n = comp.composite.n if comp.composite is not None else 0
    parts = [t("n={n} paired of {shared} shared samples", lang).format(n=n, shared=comp.samples)]
    if comp.errored_either:
        parts.append(
            f"{comp.errored_either} {t('errored', lang)} ({comp.control} {comp.errored_control}, {comp.treatment} {comp.errored_treatment})"
        )
    for count, who in ((comp.only_control, comp.control), (comp.only_treatment, comp.treatment)):
        if count:
            parts.append(t("{count} ran on {who} only", lang).format(count=count, who=who))
    if comp.spread_exceeded is not None:
        parts.append(t("the change exceeds run-to-run spread" if comp.spread_exceeded else "the change is within run-to-run spread", lang))
    return " · ".join(parts)


REASONS = {"score": "score down", "pass_to_fail": "pass → fail", "error": "errored"}


def regression_why(r: Regression) -> str:
    return ", ".join(REASONS.get(x, str(x)) for x in r.reasons)


# ---------------------------------------------------------------- every variant's results


def cached_line(exp: ExperimentBlock, lang: str) -> str | None:
    """`12 of 14 from the cache; --no-cache to call again` over every variant's results, when any
    answer came from the response cache; else None."""
    from omk.report.i18n import t

    every = [c for run in cases(exp).values() for c in run]
    cached = sum(1 for c in every if c.cached)
    if not cached:
        return None
    return t("{cached} of {total} from the cache; --no-cache to call again", lang).format(cached=cached, total=len(every))


def cases(exp: ExperimentBlock) -> dict[str, list[Case]]:
    """Per variant, one entry per result (sample × repeat), from `runs[name].results`, with why
    it failed (`messages`).

    A block written without those (an older omk) still has each comparison's per-sample
    outcomes; they give every variant's status and pass, without the reasons."""
    names = [v.name for v in exp.variants]
    found = {n: list(run.results) for n in names if (run := exp.runs.get(n)) is not None and run.results is not None}
    if len(found) == len(names):
        return found
    return _cases_from_comparisons(exp, names)


def _cases_from_comparisons(exp: ExperimentBlock, names: list[str]) -> dict[str, list[Case]]:
    out: dict[str, dict[str, Case]] = {n: {} for n in names}
    for comp in exp.comparisons:
        for s in comp.per_sample:
            for side in ("control", "treatment"):
                errored = s.errored(side)
                out.setdefault(str(getattr(comp, side)), {}).setdefault(
                    str(s.sample_id),
                    Case(
                        sample_id=s.sample_id,
                        repeat=0,
                        status="error" if errored else "ok",
                        passed=s.passed(side),
                        composite=s.score(side),
                        duration_ms=None,
                        messages=("errored (see the variant's report)",) if errored else (),
                    ),
                )
    return {n: list(v.values()) for n, v in out.items()}
