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
import json
import math
from dataclasses import dataclass, field
from statistics import fmean
from typing import TYPE_CHECKING, Any

from omk.core.errors import InputError
from omk.evolve.loop import EvolveState, mean

if TYPE_CHECKING:
    from omk.evolve.evaluate import EvolveOutcome

FORMAT = "omk-evolve/1"
NO_CHANGE = "NO CHANGE"
STOPPED = "STOPPED"


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


@dataclass(slots=True)
class Gap:
    """The selected skill's composite gain over the original on each split."""

    train: float | None
    selection: float | None
    test: float | None
    trivial: float

    @property
    def large(self) -> bool:
        if self.selection is None or self.test is None:
            return False
        shortfall = self.selection - self.test
        return shortfall > 2 * self.trivial and shortfall > self.selection / 2

    def to_json(self) -> dict[str, Any]:
        return {"train": _r(self.train), "selection": _r(self.selection), "test": _r(self.test), "large": self.large, "trivial": self.trivial}

    @classmethod
    def from_json(cls, data: Any, where: str) -> Gap:
        d = _dict(data, where)
        return cls(_num(d.get("train"), f"{where}.train"), _num(d.get("selection"), f"{where}.selection"), _num(d.get("test"), f"{where}.test"), _num(d.get("trivial"), f"{where}.trivial") or 0.1)


@dataclass(slots=True)
class EvolveReport:
    skill: str
    focus: str
    settings: dict[str, Any]
    split: dict[str, int]
    split_ids: dict[str, list[str]]
    candidates: list[dict[str, Any]]
    path: list[int]
    stop: str
    level: str  # the final level, or NO CHANGE when no candidate was accepted
    headline: str
    gap: Gap
    diff: str
    cost_usd: float
    cost_per_round: dict[int, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    standings: list[dict[str, Any]] = field(default_factory=list)  # per round: the best's selection mean and its interval

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "skill": self.skill, "focus": self.focus, "settings": self.settings, "split": self.split,
            "split_ids": self.split_ids, "candidates": self.candidates, "accepted_rounds": self.path, "stop": self.stop, "level": self.level,
            "headline": self.headline, "gap": self.gap.to_json(), "diff": self.diff, "cost_usd": round(self.cost_usd, 6),
            "cost_per_round": {str(k): round(v, 6) for k, v in sorted(self.cost_per_round.items())}, "notes": self.notes,
            "standings": self.standings,
        }  # fmt: skip


def _fail(where: str, what: str) -> InputError:
    return InputError(f"{where}: {what}; not an evolve report omk wrote")


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "expected an object")
    return value


def _num(value: Any, where: str) -> float | None:
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)):
        return value
    raise _fail(where, "expected a number")


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, "expected a text")
    return value


def _numbers(data: Any, keys: tuple[str, ...], where: str) -> dict[str, Any]:
    """`data` as an object whose `keys` are numbers or null (what the pages format as figures)."""
    d = _dict(data, where)
    for k in keys:
        _num(d.get(k), f"{where}.{k}")
    return d


def _candidate(data: Any, where: str) -> dict[str, Any]:
    d = _numbers(data, ("round", "index", "lines_changed", "train_mean", "selection_mean", "cost_usd"), where)
    _text(d.get("status"), f"{where}.status")
    if d.get("decision") is not None:
        _numbers(d["decision"], ("change", "low", "high"), f"{where}.decision")
    return d


def read_report(raw: bytes, where: str) -> EvolveReport:
    """An evolve report.json read back into its record; InputError (one line naming the file and
    the field) for anything omk did not write. The file is untrusted: every figure a page formats
    is checked to be a number, every text to be a text."""
    try:
        data = _dict(json.loads(raw), where)
    except ValueError as exc:
        raise _fail(where, f"not JSON ({exc})") from None
    if data.get("format") != FORMAT:
        raise _fail(f"{where}.format", f"expected {FORMAT!r}")
    split = {k: int(_num(v, f"{where}.split.{k}") or 0) for k, v in _dict(data.get("split"), f"{where}.split").items()}
    ids = {k: [_text(i, f"{where}.split_ids.{k}") for i in v] for k, v in _dict(data.get("split_ids") or {}, f"{where}.split_ids").items() if isinstance(v, list)}
    settings = _numbers(data.get("settings"), ("alpha", "tests", "seed"), f"{where}.settings")
    rows = data.get("candidates")
    if not isinstance(rows, list):
        raise _fail(f"{where}.candidates", "expected a list")
    standings = data.get("standings") or []
    if not isinstance(standings, list):
        raise _fail(f"{where}.standings", "expected a list")
    costs = _dict(data.get("cost_per_round") or {}, f"{where}.cost_per_round")
    return EvolveReport(
        _text(data.get("skill"), f"{where}.skill"), _text(data.get("focus"), f"{where}.focus"), settings, split, ids,
        [_candidate(c, f"{where}.candidates[{i}]") for i, c in enumerate(rows)],
        [int(_num(r, f"{where}.accepted_rounds") or 0) for r in data.get("accepted_rounds") or []],
        _text(data.get("stop"), f"{where}.stop"), _text(data.get("level"), f"{where}.level"), _text(data.get("headline"), f"{where}.headline"),
        Gap.from_json(data.get("gap"), f"{where}.gap"), _text(data.get("diff"), f"{where}.diff"), _num(data.get("cost_usd"), f"{where}.cost_usd") or 0.0,
        {int(k): _num(v, f"{where}.cost_per_round.{k}") or 0.0 for k, v in costs.items() if str(k).isdigit()},
        [_text(n, f"{where}.notes") for n in data.get("notes") or []],
        [_numbers(s, ("round", "mean", "low", "high"), f"{where}.standings[{i}]") for i, s in enumerate(standings)],
    )  # fmt: skip


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
    gap = Gap(_gain(state.best.train, state.original.train) if changed else 0.0, _gain(state.best.selection, state.original.selection) if changed else 0.0, test, trivial)
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
    final_cost = sum(r.summary.cost_usd or 0.0 for r in state.final.reports.values()) if state.final is not None else 0.0
    diff = "".join(difflib.unified_diff(state.original.text.splitlines(keepends=True), state.best.text.splitlines(keepends=True), "original/SKILL.md", "selected/SKILL.md"))
    settings = {
        "rounds": config.rounds, "candidates": config.candidates, "split": list(config.shares), "seed": config.seed,
        "alpha": config.alpha, "tests": config.tests, "trivial": config.trivial_for_measure, "edit_budget": config.edit_budget,
        "measure": config.measure,
    }  # fmt: skip
    return EvolveReport(
        config.skill.name, config.focus, settings, state.split.counts(), {n: list(state.split.of(n)) for n in ("train", "selection", "test")}, [t.to_json() for t in state.tried], list(state.path), state.stop,
        level, headline or "", gap, diff, state.ledger.spent_usd if state.ledger is not None else loop_cost + sum(per_round.values()) + final_cost,
        per_round, list(state.notes),
        [_standing(r, scores) for r, scores in state.standings],
    )  # fmt: skip


def _standing(round_no: int, scores: list[float]) -> dict[str, Any]:
    """The best skill's selection mean after a round, with its interval (omk's score interval)."""
    from omk.stats.bootstrap import score_interval

    ci = score_interval(scores) if len(scores) >= 2 else None
    return {
        "round": round_no, "mean": _r(fmean(scores)) if scores else None,
        "low": _r(ci.low) if ci else None, "high": _r(ci.high) if ci else None,
    }  # fmt: skip


def _fig(x: float | None, signed: bool = True) -> str:
    return "—" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")


def terminal_lines(report: EvolveReport) -> list[str]:
    """What `omk evolve` prints."""
    s = report.split
    lines = [
        f"omk evolve {report.skill} · focus {report.focus} · split train {s['train']} / selection {s['selection']} / test {s['test']} · "
        f"α {report.settings['alpha']:g} over {report.settings['tests']} candidates",
    ]
    for c in report.candidates:
        d = c.get("decision") or {}
        figures = f" {_fig(d.get('change'))} [{_fig(d.get('low'))}, {_fig(d.get('high'))}]" if d.get("change") is not None else ""
        lines.append(f"  round {c['round']} candidate {c['index']}: {c['status'].upper()}{figures} · {c['reason']}")
    lines.extend(f"  note: {note}" for note in report.notes)
    lines.append(f"stopped: {report.stop}")
    g = report.gap
    lines.append(f"gain over the original: train {_fig(g.train)} · selection {_fig(g.selection)} · test {_fig(g.test)}")
    lines.append(report.headline if report.headline.startswith(report.level) else f"{report.level} · {report.headline}")
    lines.append(f"cost ${report.cost_usd:.4f}")
    return lines


def markdown(report: EvolveReport) -> str:
    """The report as a Markdown page."""
    s, g = report.split, report.gap
    out = [
        f"# omk evolve: {report.skill}",
        "",
        f"**{report.level}**" + (f" · {report.headline[len(report.level) + 3 :]}" if report.headline.startswith(f"{report.level} · ") else f" · {report.headline}"),
        "",
        f"Focus `{report.focus}`; split train {s['train']} / selection {s['selection']} / test {s['test']} (seed {report.settings['seed']}); "
        f"each candidate tested at α {report.settings['alpha']:g} / {report.settings['tests']}; stopped: {report.stop}.",
        "",
        "| round | candidate | status | change | interval | lines changed | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in report.candidates:
        d = c.get("decision") or {}
        interval = f"[{_fig(d.get('low'))}, {_fig(d.get('high'))}]" if d else "—"
        reason = str(c["reason"]).replace("|", "\\|")
        out.append(f"| {c['round']} | {c['index']} | {c['status']} | {_fig(d.get('change'))} | {interval} | {c['lines_changed']} | {reason} |")
    out += [f"- {note}" for note in report.notes]
    out += ["", f"Gain over the original (composite): train {_fig(g.train)}, selection {_fig(g.selection)}, test {_fig(g.test)}.", ""]
    out += [f"Cost: ${report.cost_usd:.4f}" + "".join(f"; round {k} ${v:.4f}" for k, v in sorted(report.cost_per_round.items())), ""]
    if report.diff:
        out += ["## The selected skill against the original", "", "```diff", report.diff.rstrip("\n"), "```", ""]
    return "\n".join(out)
