"""The evolve report: typed records (report.json's shape), the terminal lines and the Markdown page.

The final level is the test split's verdict (PROGRESS, NOISE, REGRESS, UNDERPOWERED, as for any
experiment), made CAUTIOUS when the gap between what the loop saw and what the test split shows is
large: the selected skill's gain on the test split falls short of its gain on the selection split
by more than twice the trivial difference and by more than half of that gain. Overfitting (the
selection split, used to choose among many candidates, flatters the winner) is then the likely
reason. All three gains are composite means (selected − original), so they compare.
"""

from __future__ import annotations

import difflib
from statistics import fmean
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError
from omk.evolve.loop import EvolveState, final_cost, mean
from omk.records.wire import decode

if TYPE_CHECKING:
    from omk.evolve.acceptance import Decision
    from omk.evolve.evaluate import EvolveOutcome
    from omk.evolve.loop import Tried

FORMAT = "omk-evolve/1"
NO_CHANGE = "NO CHANGE"
STOPPED = "STOPPED"
NOT_OURS = "; not an evolve report omk wrote"


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


class Gap(msgspec.Struct):
    """The selected skill's composite gain over the original on each split; `large` is worked out
    from them (a value read back is worked out again, never taken as written)."""

    train: float | None
    selection: float | None
    test: float | None
    trivial: float = 0.1
    large: bool = False

    def __post_init__(self) -> None:
        self.large = self.selection is not None and self.test is not None and self._short(self.selection - self.test, self.selection)

    def _short(self, shortfall: float, gain: float) -> bool:
        return shortfall > 2 * self.trivial and shortfall > gain / 2


class DecisionRow(msgspec.Struct, frozen=True):
    """A candidate's comparison with the best on the selection split (omk.evolve.acceptance)."""

    measure: str
    n: int
    change: float | None
    low: float | None
    high: float | None
    level: float | None
    p_value: float | None
    tests: int
    trivial: float
    accepted: bool
    reason: str


class CandidateRow(msgspec.Struct, frozen=True):
    """One candidate of one round: refused, rejected or accepted, with its figures and cost."""

    round: int
    index: int
    status: str
    reason: str
    lines_changed: int
    train_mean: float | None = None
    selection_mean: float | None = None
    cost_usd: float = 0.0
    decision: DecisionRow | None = None


class StandingRow(msgspec.Struct, frozen=True):
    """The best skill's selection mean after a round (0: the original), with its interval."""

    round: int
    mean: float | None = None
    low: float | None = None
    high: float | None = None


class EvolveSettings(msgspec.Struct, frozen=True):
    rounds: int
    candidates: int
    split: tuple[float, float, float]
    seed: int
    alpha: float
    tests: int
    trivial: float
    edit_budget: float
    measure: str


class SplitCounts(msgspec.Struct, frozen=True):
    train: int
    selection: int
    test: int


class SplitIds(msgspec.Struct, frozen=True):
    train: tuple[str, ...] = ()
    selection: tuple[str, ...] = ()
    test: tuple[str, ...] = ()


class EvolveReport(msgspec.Struct, frozen=True):
    """report.json, written and read back through this record (its fields in the file's order)."""

    skill: str
    focus: str
    settings: EvolveSettings
    split: SplitCounts
    split_ids: SplitIds
    candidates: tuple[CandidateRow, ...]
    accepted_rounds: tuple[int, ...]
    stop: str
    level: str  # the final level, or NO CHANGE when no candidate was accepted
    headline: str
    gap: Gap
    diff: str
    cost_usd: float
    cost_per_round: dict[int, float] = {}
    notes: tuple[str, ...] = ()
    standings: tuple[StandingRow, ...] = ()  # per round: the best's selection mean and its interval
    format: str = FORMAT

    def to_json(self) -> dict[str, Any]:
        data = msgspec.to_builtins(self, str_keys=True)
        return {"format": data.pop("format"), **data}


def read_report(raw: bytes, where: str) -> EvolveReport:
    """An evolve report.json read back into its record; InputError (one line naming the file and
    the field) for anything omk did not write. The file is untrusted: every field is checked to
    have its record's type (a figure a page formats is a number, a text is a text)."""
    report = decode(raw, EvolveReport, where, NOT_OURS)
    if report.format != FORMAT:
        raise InputError(f"{where}: format: expected {FORMAT!r}{NOT_OURS}")
    return report


def _decision(d: Decision) -> DecisionRow:
    return DecisionRow(d.measure, d.n, _r(d.change, 6), _r(d.low, 6), _r(d.high, 6), _r(d.level, 6), _r(d.p_value, 6), d.tests, d.trivial, d.accepted, d.reason)


def _candidate(t: Tried) -> CandidateRow:
    decision = _decision(t.decision) if t.decision is not None else None
    return CandidateRow(t.round, t.index, t.status, t.reason, t.lines_changed, t.train_mean, t.selection_mean, t.cost_usd, decision)


def _gain(selected: dict[str, EvolveOutcome], original: dict[str, EvolveOutcome]) -> float | None:
    a, b = mean(selected), mean(original)
    return None if a is None or b is None else a - b


def build_report(state: EvolveState) -> EvolveReport:
    config = state.config
    trivial = config.trivial if config.trivial is not None and config.measure == "composite" else 0.1
    test = level = headline = None
    if state.final is not None:
        comparison = state.final.block.comparisons[0] if state.final.block.comparisons else None
        test = float(comparison.composite.mean) if comparison and comparison.composite and comparison.composite.mean is not None else None
        level, headline = str(state.final.block.verdict.level), state.final.block.verdict.headline
    changed = state.best.folder != state.original.folder
    train, selection = (_gain(state.best.train, state.original.train), _gain(state.best.selection, state.original.selection)) if changed else (0.0, 0.0)
    gap = Gap(_r(train), _r(selection), _r(test), trivial)
    if state.stopped:
        level, headline = STOPPED, state.stop
    elif level is None:
        level, headline = NO_CHANGE, "no candidate beat the original on the selection split; the test split was not run"
    elif gap.large and level == "PROGRESS":
        level = "CAUTIOUS"
        headline = f"{headline} · the gain on the test split is far below the gain on the selection split: overfitting is the likely reason"
    per_round: dict[int, float] = {}
    for t in state.tried:
        per_round[t.round] = per_round.get(t.round, 0.0) + t.cost_usd
    loop_cost = sum(o.cost_usd for o in [*state.original.train.values(), *state.original.selection.values()])
    final = sum(final_cost(r) for r in state.final.reports.values()) if state.final is not None else 0.0
    diff = "".join(difflib.unified_diff(state.original.text.splitlines(keepends=True), state.best.text.splitlines(keepends=True), "original/SKILL.md", "selected/SKILL.md"))
    settings = EvolveSettings(
        config.rounds, config.candidates, config.shares, config.seed, config.alpha, config.tests, config.trivial_for_measure, config.edit_budget, config.measure
    )
    split = state.split
    spent = state.ledger.spent_usd if state.ledger is not None else loop_cost + sum(per_round.values()) + final
    return EvolveReport(
        config.skill.name, config.focus, settings, SplitCounts(**split.counts()), SplitIds(split.train, split.selection, split.test),
        tuple(_candidate(t) for t in state.tried), tuple(state.path), state.stop, level, headline or "", gap, diff, round(spent, 6),
        {k: round(v, 6) for k, v in sorted(per_round.items())}, tuple(state.notes), tuple(_standing(r, scores) for r, scores in state.standings),
    )  # fmt: skip


def _standing(round_no: int, scores: list[float]) -> StandingRow:
    """The best skill's selection mean after a round, with its interval (omk's score interval)."""
    from omk.stats.bootstrap import score_interval

    ci = score_interval(scores) if len(scores) >= 2 else None
    return StandingRow(round_no, _r(fmean(scores)) if scores else None, _r(ci.low) if ci else None, _r(ci.high) if ci else None)


def _fig(x: float | None, signed: bool = True) -> str:
    return "—" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")


def terminal_lines(report: EvolveReport, lang: str = "en") -> list[str]:
    """What `omk evolve` prints, in `lang`."""
    from omk.report.i18n_evolve import evolve_text, t

    s, settings = report.split, report.settings
    lines = [
        t("omk evolve {skill} · focus {focus} · split train {train} / selection {selection} / test {test} · α {alpha} over {tests} candidates", lang).format(
            skill=report.skill, focus=report.focus, train=s.train, selection=s.selection, test=s.test, alpha=f"{settings.alpha:g}", tests=settings.tests
        ),
    ]
    for c in report.candidates:
        d = c.decision
        figures = f" {_fig(d.change)} [{_fig(d.low)}, {_fig(d.high)}]" if d is not None and d.change is not None else ""
        status = t(c.status, lang) if lang == "zh" else c.status.upper()
        lines.append(t("  round {round} candidate {index}: {status}{figures} · {reason}", lang).format(round=c.round, index=c.index, status=status, figures=figures, reason=evolve_text(c.reason, lang)))
    lines.extend(t("  note: {note}", lang).format(note=evolve_text(note, lang)) for note in report.notes)
    lines.append(t("stopped: {stop}", lang).format(stop=evolve_text(report.stop, lang)))
    g = report.gap
    lines.append(t("gain over the original: train {train} · selection {selection} · test {test}", lang).format(train=_fig(g.train), selection=_fig(g.selection), test=_fig(g.test)))
    lines.append(evolve_text(_level_line(report), lang))
    lines.append(t("cost ${cost}", lang).format(cost=f"{report.cost_usd:.4f}"))
    return lines


def _level_line(report: EvolveReport) -> str:
    """The final level and its headline, the level said once."""
    return report.headline if report.headline.startswith(report.level) else f"{report.level} · {report.headline}"


def markdown(report: EvolveReport, lang: str = "en") -> str:
    """The report as a Markdown page, in `lang`."""
    from omk.report.i18n_evolve import evolve_text, t

    s, g = report.split, report.gap
    level, rest = level_and_rest(report)
    head = [t(h, lang) for h in ("round", "candidate", "status", "change", "interval", "lines changed", "why")]
    out = [
        "# " + t("omk evolve: {skill}", lang).format(skill=report.skill),
        "",
        f"**{evolve_text(level, lang)}** · {evolve_text(rest, lang)}",
        "",
        t("Focus `{focus}`; split train {train} / selection {selection} / test {test} (seed {seed}); each candidate tested at α {alpha} / {tests}; stopped: {stop}.", lang).format(
            focus=report.focus, train=s.train, selection=s.selection, test=s.test, seed=report.settings.seed, alpha=f"{report.settings.alpha:g}",
            tests=report.settings.tests, stop=evolve_text(report.stop, lang),
        ),
        "",
        "| " + " | ".join(head) + " |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for c in report.candidates:
        d = c.decision
        interval = f"[{_fig(d.low)}, {_fig(d.high)}]" if d is not None else "—"
        reason = evolve_text(c.reason, lang).replace("|", "\\|")
        out.append(f"| {c.round} | {c.index} | {t(c.status, lang)} | {_fig(d.change if d is not None else None)} | {interval} | {c.lines_changed} | {reason} |")
    out += [f"- {evolve_text(note, lang)}" for note in report.notes]
    gain = t("Gain over the original (composite): train {train}, selection {selection}, test {test}.", lang)
    out += ["", gain.format(train=_fig(g.train), selection=_fig(g.selection), test=_fig(g.test)), ""]
    rounds = "".join(t("; round {round} ${cost}", lang).format(round=k, cost=f"{v:.4f}") for k, v in sorted(report.cost_per_round.items()))
    out += [t("Cost: ${cost}", lang).format(cost=f"{report.cost_usd:.4f}") + rounds, ""]
    if report.diff:
        out += ["## " + t("The selected skill against the original", lang), "", "```diff", report.diff.rstrip("\n"), "```", ""]
    return "\n".join(out)


def level_and_rest(report: EvolveReport) -> tuple[str, str]:
    """The final level, and the headline without it (a verdict's headline starts with its level)."""
    prefix = f"{report.level} · "
    return report.level, report.headline[len(prefix) :] if report.headline.startswith(prefix) else report.headline
