"""The verdict: one level per treatment against the control, rolled up into one, with a headline
and a one-line recommendation, in the original omk's tiers and format.

A pair's level, decided in this order (Δ is the mean composite difference treatment − control
over the samples both arms scored, CI its paired bootstrap interval, `trivial` the smallest
difference worth acting on; a difference of exactly `trivial` is not trivial):

1. no sample ran on both arms → UNDERPOWERED;
2. the CI lies below 0 and Δ ≤ −trivial → REGRESS;
3. the pass rate fell and McNemar's exact test says so (p < α) → CAUTIOUS, whatever the
   composite says: more samples fail their gate, which the mean can hide;
4. more than `max_error_rate` of the shared samples errored on either arm → UNDERPOWERED (the
   scores that remain may not be representative; fix the errors and rerun);
5. with `max_cost_increase` set: the treatment's mean cost per sample (over the samples both
   arms report a cost for) is more than that percentage above the control's → CAUTIOUS, whatever
   the composite says: a gain has to be worth its price, and the caller said what it may cost;
6. fewer than 2 samples scored on both arms (no interval) → UNDERPOWERED;
7. the CI contains 0 → UNDERPOWERED below `min_samples` (20) scored pairs, NOISE from there;
8. the CI lies below 0 but Δ > −trivial → CAUTIOUS ("practically tiny regression");
9. the CI lies above 0: the treatment fails the layer gate → CAUTIOUS ("broke layer gate");
   Δ < trivial → CAUTIOUS ("practically tiny"); the control fails the gate → PROGRESS
   ("recovers from broken control"); otherwise PROGRESS ("clean win").
10. a PROGRESS judged by a judge that people's labels flag (its α against them below 0.667, or
   its interval reaching below) → CAUTIOUS ("judge-untrusted"), as the original downgrades a
   verdict when its judges disagree.

Where this differs from the original, and why:

- The interval is paired (the original resampled each arm on its own) and there is always one:
  the original's "no CI" branch (a verdict from Δ alone) is gone.
- A certain but trivial regression is CAUTIOUS, not REGRESS: `trivial` means the same in both
  directions. A regression of `trivial` or more whose CI excludes 0 is REGRESS.
- The original called an insignificant result UNDERPOWERED below 20 samples or while a
  "saturation" heuristic (whether the running mean had stopped moving) was not confident, and
  NOISE otherwise. The saturation heuristic is dropped: whether adding samples would help is
  what the minimum detectable effect says, and the report carries it with every comparison.
- Pass-rate drops (McNemar) and errors take part in the decision; the original looked only at
  the composite.

The roll-up is the worst pair in the original's order REGRESS > CAUTIOUS > UNDERPOWERED >
NOISE > PROGRESS; its headline names the pair that set it (when every pair is PROGRESS, the one
with the largest gain). With a single variant the verdict is SOLO and reports the layer gate.

`require` turns the verdict into a pass or fail for CI. `progress`: every pair is PROGRESS.
`no-regress`: no pair shows a regression (REGRESS, or a significant pass-rate drop) and every
pair could be judged (no too-many-errors, no pair without samples or an interval). An
UNDERPOWERED or NOISE pair passes `no-regress`: it means no regression was *detected*, and the
comparison's minimum detectable effect says how large a regression could have gone unseen.
With a single variant both policies pass exactly when the layer gate passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from statistics import median
from typing import Any

import msgspec

from omk.stats.comparison import PairedComparison
from omk.stats.data import LAYERS, AnalysisSettings
from omk.stats.paired import EPS, NO_SPREAD, MeasureDelta, no_spread, samples_needed
from omk.stats.summary import VariantSummary


class Level(StrEnum):
    PROGRESS = "PROGRESS"
    CAUTIOUS = "CAUTIOUS"
    REGRESS = "REGRESS"
    NOISE = "NOISE"
    UNDERPOWERED = "UNDERPOWERED"
    SOLO = "SOLO"


SEVERITY = {Level.PROGRESS: 0, Level.NOISE: 1, Level.UNDERPOWERED: 2, Level.CAUTIOUS: 3, Level.REGRESS: 4}

ACTIONS = {
    Level.PROGRESS: ("ship", "SHIP"),
    Level.CAUTIOUS: ("investigate", "INVESTIGATE"),
    Level.REGRESS: ("do-not-ship", "DO NOT SHIP"),
    Level.NOISE: ("no-call", "NO CALL"),
    Level.UNDERPOWERED: ("need-more-data", "INSUFFICIENT DATA"),
    Level.SOLO: ("add-control", "ADD A CONTROL"),
}

POLICIES = ("progress", "no-regress")
_NO_REGRESS_FAILS = frozenset({"regression", "pass-rate-drop", "too-many-errors", "no-overlap", "no-ci"})


def num(x: float) -> str:
    """A number as the original prints it: rounded to 2 places, no trailing zeros (0.2, 3.5, 1)."""
    text = f"{round(x, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


class PairVerdict(msgspec.Struct, frozen=True, gc=False):
    control: str
    treatment: str
    level: Level
    reason: str  # a stable code: clean-win, recovers, broke-gate, tiny-gain, tiny-loss, regression, …
    headline: str  # the pair headline: "Δ=+0.33 CI=[0.2, 0.5] · clean win"
    recommendation: str

    def to_json(self) -> dict[str, Any]:
        return {
            "control": self.control,
            "treatment": self.treatment,
            "level": self.level.value,
            "reason": self.reason,
            "headline": self.headline,
            "action": ACTIONS[self.level][0],
            "recommendation": self.recommendation,
        }


def _classify(
    comp: PairedComparison, control: VariantSummary, treatment: VariantSummary, s: AnalysisSettings
) -> tuple[Level, str]:
    d, pr = comp.composite, comp.pass_rate
    below = d.ci is not None and d.ci.excludes_zero and d.ci.high < 0.0
    above = d.ci is not None and d.ci.excludes_zero and d.ci.low > 0.0
    if comp.samples == 0:
        return Level.UNDERPOWERED, "no-overlap"
    if below and d.mean is not None and d.mean <= -s.trivial + EPS:
        return Level.REGRESS, "regression"
    if pr.p_value < s.alpha and pr.lost > pr.gained:
        return Level.CAUTIOUS, "pass-rate-drop"
    if comp.error_rate > s.max_error_rate + EPS:
        return Level.UNDERPOWERED, "too-many-errors"
    if cost_exceeded(comp, s):
        return Level.CAUTIOUS, "cost-increase"
    if d.ci is None or d.mean is None:
        return Level.UNDERPOWERED, "no-ci"
    if not (below or above):
        return (Level.UNDERPOWERED, "few-samples") if d.n < s.min_samples else (Level.NOISE, "no-difference")
    if below:
        return Level.CAUTIOUS, "tiny-loss"
    if not treatment.gate_passed:
        return Level.CAUTIOUS, "broke-gate"
    if d.mean < s.trivial - EPS:
        return Level.CAUTIOUS, "tiny-gain"
    if not control.gate_passed:
        return Level.PROGRESS, "recovers"
    return Level.PROGRESS, "clean-win"


def cost_exceeded(comp: PairedComparison, s: AnalysisSettings) -> bool:
    """Whether the treatment's cost per sample rose more than `max_cost_increase` percent."""
    rel = comp.cost_usd.relative
    return s.max_cost_increase is not None and rel is not None and rel > s.max_cost_increase / 100.0 + EPS


def change_text(m: MeasureDelta, what: str) -> str:
    """`+35% tokens [28%, 41%]`: a resource's relative change per sample with its interval."""
    if m.relative is None:
        return f"{what} n/a"
    ci = f" [{100 * m.relative_ci.low:.0f}%, {100 * m.relative_ci.high:.0f}%]" if m.relative_ci else ""
    return f"{100 * m.relative:+.0f}% {what}{ci}"


def _reason_text(reason: str, comp: PairedComparison, control: VariantSummary, s: AnalysisSettings) -> str:
    d, pr = comp.composite, comp.pass_rate
    if reason == "cost-increase":
        return f"{change_text(comp.cost_usd, 'cost')} > {num(s.max_cost_increase or 0)}% allowed"
    if reason == "broke-gate":
        return "broke layer gate" if control.gate_passed else "fails layer gate, as control does"
    if reason == "pass-rate-drop":
        return f"pass rate {pct(pr.control_rate)} → {pct(pr.treatment_rate)}, McNemar p={pr.p_value:.3g}"
    if reason == "too-many-errors":
        return f"{comp.errored_either} of {comp.samples} samples errored"
    if reason == "few-samples":
        return f"CI spans 0, n={d.n} < {s.min_samples}"
    if reason == "no-difference" and d.ci is not None and -s.trivial <= d.ci.low and d.ci.high <= s.trivial:
        return f"CI spans 0, within ±{num(s.trivial)}"
    return {
        "clean-win": "clean win",
        "recovers": "recovers from broken control",
        "tiny-gain": "practically tiny",
        "tiny-loss": "practically tiny regression",
        "regression": "significant regression",
        "no-difference": "CI spans 0",
        "no-overlap": "no sample ran on both arms",
        "no-ci": f"no CI, n={d.n}",
    }[reason]


def _pair_headline(reason_text: str, comp: PairedComparison) -> str:
    d = comp.composite
    if d.mean is None:
        return reason_text
    ci = f" CI=[{num(d.ci.low)}, {num(d.ci.high)}]" if d.ci else ""
    return f"Δ={d.mean:+.2f}{ci} · {reason_text}"


def _recommendation(level: Level, reason: str, comp: PairedComparison, s: AnalysisSettings) -> str:
    d, pr, t, c = comp.composite, comp.pass_rate, comp.treatment, comp.control
    word = ACTIONS[level][1]
    if level is Level.PROGRESS:
        return f"{word} — {t} beats {c} by {d.mean:+.2f} on the composite, its 95% CI above 0."
    if level is Level.REGRESS:
        return f"{word} — {t} scores {abs(d.mean or 0):.2f} below {c}; {len(comp.regressions)} samples regressed."
    if level is Level.NOISE:
        mde = f"; this set detects differences of {d.mde:.2f} or more" if d.mde is not None else ""
        mde = f"; {NO_SPREAD}" if no_spread(d.sd) else mde
        return f"{word} — no difference between {t} and {c} was detected{mde}."
    if level is Level.UNDERPOWERED:
        return f"{word} — {_underpowered_advice(reason, comp, s)}."
    detail = {
        "cost-increase": f"{t} costs {100 * (comp.cost_usd.relative or 0):.0f}% more per sample than {c}, "
        f"more than the {num(s.max_cost_increase or 0)}% allowed (--max-cost-increase)",
        "pass-rate-drop": f"the pass rate fell from {pct(pr.control_rate)} to {pct(pr.treatment_rate)} "
        f"({pr.lost} samples lost, {pr.gained} gained)",
        "broke-gate": f"{t} scores higher but a layer is below the gate",
        "tiny-gain": f"the gain is real but smaller than the trivial threshold {num(s.trivial)}",
        "tiny-loss": f"{t} is slightly worse, by less than the trivial threshold {num(s.trivial)}",
    }[reason]
    return f"{word} — {detail}."


def _underpowered_advice(reason: str, comp: PairedComparison, s: AnalysisSettings) -> str:
    d = comp.composite
    if reason == "no-overlap":
        return f"no sample ran on both {comp.control} and {comp.treatment}"
    if reason == "too-many-errors":
        return (
            f"{comp.errored_either} of {comp.samples} samples errored "
            f"({comp.control} {comp.errored_control}, {comp.treatment} {comp.errored_treatment}); fix them and rerun"
        )
    if no_spread(d.sd):
        return f"{d.n} samples scored on both arms; {NO_SPREAD}"
    effect = max(abs(d.mean or 0.0), s.trivial)
    need = samples_needed(d.sd, effect, s.alpha, s.power) if d.sd is not None else None
    if need is None:
        return f"only {d.n} samples scored on both arms; add samples"
    return f"{d.n} samples scored on both arms; about {need} would detect a difference of {effect:.2f}"


def decide_pair(
    comp: PairedComparison, control: VariantSummary, treatment: VariantSummary, settings: AnalysisSettings
) -> PairVerdict:
    level, reason = _classify(comp, control, treatment, settings)
    text = _reason_text(reason, comp, control, settings)
    return PairVerdict(
        control=comp.control,
        treatment=comp.treatment,
        level=level,
        reason=reason,
        headline=_pair_headline(text, comp),
        recommendation=_recommendation(level, reason, comp, settings),
    )


class Verdict(msgspec.Struct, frozen=True, gc=False):
    level: Level
    headline: str  # "<LEVEL> · <t> vs <c>: <pair headline>", or the SOLO headline
    recommendation: str  # "SHIP — …", "INVESTIGATE — …", …
    pairs: tuple[PairVerdict, ...]
    lines: tuple[str, ...]  # the printable block (`omk verdict`), at most 7 lines

    @property
    def action(self) -> str:
        return ACTIONS[self.level][0]

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level.value,
            "headline": self.headline,
            "action": self.action,
            "recommendation": self.recommendation,
            "pairs": [p.to_json() for p in self.pairs],
            "lines": list(self.lines),
        }


def _solo(variants: Sequence[VariantSummary], settings: AnalysisSettings) -> Verdict:
    only = variants[0] if variants else None
    passed = only is not None and only.gate_passed
    gate = f"PASS @ threshold {num(settings.threshold)}" if passed else "FAIL — see ci output"
    headline = f"SOLO · single variant, three-layer gate {gate}"
    recommendation = "ADD A CONTROL — one variant only: run a control next to it to learn whether it is better."
    lines = ("Verdict: SOLO", f"  {headline}", *_context_lines(variants, [], settings), f"  {recommendation}")
    return Verdict(Level.SOLO, headline, recommendation, (), lines)


def _headline_pair(pairs: Sequence[PairVerdict], comparisons: Sequence[PairedComparison]) -> int:
    worst = max(SEVERITY[p.level] for p in pairs)
    candidates = [i for i, p in enumerate(pairs) if SEVERITY[p.level] == worst]
    if pairs[candidates[0]].level is Level.PROGRESS:
        return max(candidates, key=lambda i: comparisons[i].composite.mean or 0.0)
    return candidates[0]


def untrusted_judge(pair: PairVerdict, doubts: Sequence[str]) -> PairVerdict:
    """A PROGRESS decided by a judge that people's labels do not back (`doubts`: why, one line per
    judge) is CAUTIOUS: the gain may be the judge's, not the treatment's."""
    if pair.level is not Level.PROGRESS or not doubts:
        return pair
    why = "; ".join(doubts)
    return PairVerdict(
        control=pair.control,
        treatment=pair.treatment,
        level=Level.CAUTIOUS,
        reason="judge-untrusted",
        headline=f"{pair.headline} · judge disagrees with people ({why})",
        recommendation=f"{ACTIONS[Level.CAUTIOUS][1]} — {pair.treatment} scores higher, but the judge does not agree "
        f"with people's labels ({why}); fix the judge or its rubric, then rerun.",
    )


def decide(
    variants: Sequence[VariantSummary],
    comparisons: Sequence[PairedComparison],
    settings: AnalysisSettings,
    judge_doubts: Sequence[str] = (),
) -> Verdict:
    """The rolled-up verdict over every treatment-versus-control comparison. `judge_doubts`: why
    the judge is not trusted against people's labels (omk.gold); each PROGRESS becomes CAUTIOUS."""
    if not comparisons:
        return _solo(variants, settings)
    by_name = {v.name: v for v in variants}
    pairs = tuple(
        untrusted_judge(decide_pair(comp, by_name[comp.control], by_name[comp.treatment], settings), judge_doubts)
        for comp in comparisons
    )
    top = pairs[_headline_pair(pairs, comparisons)]
    headline = f"{top.level.value} · {top.treatment} vs {top.control}: {top.headline}"
    lines = (
        f"Verdict: {top.level.value}",
        f"  {headline}",
        *_context_lines(variants, comparisons, settings),
        f"  {top.recommendation}",
    )
    return Verdict(top.level, headline, top.recommendation, pairs, lines)


def _context_lines(
    variants: Sequence[VariantSummary], comparisons: Sequence[PairedComparison], settings: AnalysisSettings
) -> list[str]:
    lines = []
    winners = _layer_winners(variants, settings)
    if winners and len(variants) > 1:
        lines.append(f"  Layer winners: {winners}")
    lines.append(f"  Sample size: {_sample_size(variants, comparisons, settings.power)}")
    lines.append(f"  Stability: {_stability(variants)}")
    if resources := _resources(comparisons):
        lines.append(f"  Resources: {resources}")
    return lines


def _resources(comparisons: Sequence[PairedComparison]) -> str:
    """Per treatment: `+0.41 composite for +35% tokens [28%, 41%], +20% cost [..], +5% latency [..]`."""
    parts = []
    for comp in comparisons:
        changes = [
            change_text(m, what)
            for m, what in ((comp.tokens, "tokens"), (comp.cost_usd, "cost"), (comp.latency_ms, "latency"))
            if m.relative is not None
        ]
        if not changes:
            continue
        score = f"{comp.composite.mean:+.2f} composite" if comp.composite.mean is not None else "composite n/a"
        parts.append((f"{comp.treatment}: " if len(comparisons) > 1 else "") + f"{score} for {', '.join(changes)}")
    return "; ".join(parts)


def _layer_winners(variants: Sequence[VariantSummary], settings: AnalysisSettings) -> str:
    parts = []
    for layer in LAYERS:
        scored = [(score, v.name) for v in variants if (score := v.scores.get(layer)) is not None]
        if len(scored) < 2:
            continue
        best = max(s for s, _ in scored)
        leaders = [name for s, name in scored if s >= best - settings.tie - EPS]
        parts.append(f"{layer} {leaders[0] if len(leaders) == 1 else 'tie'} ({num(best)})")
    return " · ".join(parts)


def _sample_size(
    variants: Sequence[VariantSummary], comparisons: Sequence[PairedComparison], power: float
) -> str:
    if not comparisons:
        return f"n={variants[0].samples if variants else 0} (one variant)"
    parts = []
    for comp in comparisons:
        d = comp.composite
        text = f"n={d.n} paired"
        if len(comparisons) > 1:
            text = f"{comp.treatment}: {text}"
        left_out = comp.samples - d.n + len(comp.only_control) + len(comp.only_treatment)
        if left_out:
            text += f" ({left_out} left out: {comp.errored_either} errored)"
        if d.mde is not None:
            text += f", detects ≥ {d.mde:.2f} at {100 * power:.0f}% power"
        parts.append(text)
    return "; ".join(parts)


def _stability(variants: Sequence[VariantSummary]) -> str:
    cvs = [v.run_cv for v in variants if v.run_cv is not None]
    runs = max((len(v.run_means) for v in variants), default=0)
    if not cvs:
        return "not measured (rerun with --repeat 2 or more)"
    cv = median(cvs)
    word = "stable" if cv < 0.05 else "medium" if cv < 0.15 else "unstable"
    spreads = [f"{v.name} ±{v.spread:.2f}" for v in variants if v.spread is not None]
    extra = f"; run-to-run spread {', '.join(spreads)}" if spreads else ""
    return f"CV={100 * cv:.1f}% ({word}, runs={runs}{extra})"


class PolicyResult(msgspec.Struct, frozen=True, gc=False):
    policy: str
    passed: bool
    reason: str

def evaluate_policy(verdict: Verdict, policy: str) -> PolicyResult:
    """`progress` or `no-regress` → pass or fail (the exit code of a CI run); see the module text."""
    if policy not in POLICIES:
        raise ValueError(f"unknown require policy {policy!r}; expected one of {', '.join(POLICIES)}")
    if verdict.level is Level.SOLO:
        ok = "PASS" in verdict.headline
        return PolicyResult(policy, ok, "single variant: the layer gate " + ("passed" if ok else "failed"))
    if policy == "progress":
        failing = [p for p in verdict.pairs if p.level is not Level.PROGRESS]
    else:
        failing = [p for p in verdict.pairs if p.level is Level.REGRESS or p.reason in _NO_REGRESS_FAILS]
    if not failing:
        what = "every treatment shows progress" if policy == "progress" else "no regression detected"
        return PolicyResult(policy, True, what)
    named = ", ".join(f"{p.treatment} {p.level.value} ({p.reason})" for p in failing)
    return PolicyResult(policy, False, f"{policy} not met: {named}")
