"""The loop: split the samples, ask the improver for candidates, refuse the ones that break the
rules before paying for them, evaluate the rest on the selection split, keep one only when the
acceptance rule says it is better (omk.evolve.acceptance), and at the end compare the selected
skill with the original on the test split through the experiment engine.

The skill is never edited in place: the original, every candidate and the selected skill are
folders under the output folder, each under the skill's own folder name (what `skill_used` names).
Stops: every train sample passes, the last round, or two rounds in a row with nothing accepted.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any

from omk.core.errors import ConfigError
from omk.domain.skillset import SKILL_FILE
from omk.evolve import acceptance, candidates, splits
from omk.evolve.candidates import DEFAULT_EDIT_BUDGET
from omk.evolve.evaluate import EvolveOutcome, evaluate, prepare
from omk.evolve.improver import Rejected, build_request, parse_answer
from omk.evolve.leakage import LeakGuard
from omk.evolve.ledger import Ledger, fingerprint

if TYPE_CHECKING:
    from omk.engine.experiment import ExperimentOutcome
    from omk.engine.options import EvalOptions
    from omk.engine.run_report import Report
    from omk.samples.model import Sample

Ask = Callable[[str], tuple[str, float]]  # the improver: a request in, its answer and its cost out


@dataclass(slots=True)
class EvolveConfig:
    skill: Path
    options: EvalOptions  # samples, target, judge, repeat… as `omk eval` takes them
    cwd: Path
    out: Path
    focus: str = "both"
    rounds: int = 3
    candidates: int = 4
    shares: tuple[float, float, float] = splits.DEFAULT_SHARES
    seed: int = 0
    alpha: float = 0.05
    trivial: float | None = None  # None: 0.1 for the composite, 0.05 for triggering
    edit_budget: float = DEFAULT_EDIT_BUDGET
    budget_usd: float | None = None  # no new paid step once this much is spent (the ledger's total)

    @property
    def tests(self) -> int:
        return self.rounds * self.candidates

    @property
    def measure(self) -> str:
        return "triggering" if self.focus == "description" else "composite"

    @property
    def trivial_for_measure(self) -> float:
        return acceptance.DEFAULT_TRIVIAL[self.measure] if self.trivial is None else self.trivial


@dataclass(slots=True)
class Tried:
    """One candidate of one round: refused before evaluation, rejected, or accepted."""

    round: int
    index: int
    status: str  # "refused", "rejected" or "accepted"
    reason: str
    lines_changed: int
    text: str = ""  # the candidate's SKILL.md
    decision: acceptance.Decision | None = None
    train_mean: float | None = None
    selection_mean: float | None = None
    cost_usd: float = 0.0  # the runs of this candidate (selection, and train when accepted)


@dataclass(slots=True)
class Standing:
    """A skill folder and its outcomes on train and selection."""

    folder: Path
    text: str
    train: dict[str, EvolveOutcome]
    selection: dict[str, EvolveOutcome]


@dataclass(slots=True)
class EvolveState:
    config: EvolveConfig
    samples: dict[str, Sample]
    split: splits.EvolveSplit
    guard: LeakGuard
    original: Standing
    best: Standing
    tried: list[Tried] = field(default_factory=list)
    path: list[int] = field(default_factory=list)  # rounds whose candidate was accepted
    stop: str = ""
    notes: list[str] = field(default_factory=list)  # what the run says besides its figures
    standings: list[tuple[int, list[float]]] = field(default_factory=list)  # after each round (0: the original): the best's selection composites
    final: ExperimentOutcome | None = None
    ledger: Ledger | None = None
    stopped: bool = False  # the budget stopped the loop

    def subset(self, name: str) -> list[Sample]:
        return [self.samples[i] for i in self.split.of(name)]


def mean(outcomes: dict[str, EvolveOutcome]) -> float | None:
    scores = [o.composite for o in outcomes.values() if o.composite is not None]
    return fmean(scores) if scores else None


def copy_skill(source: Path, folder: Path, text: str | None = None) -> Path:
    """`source` copied to `folder/<its name>`, with SKILL.md replaced by `text` when given."""
    target = folder / source.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)
    if text is not None:
        (target / SKILL_FILE).write_text(text, encoding="utf-8")
    return target


def start(config: EvolveConfig) -> EvolveState:
    """Load and split the samples, copy the original skill, open the ledger (a stopped loop's
    `state.json` in the output folder is read back)."""
    skill = config.skill
    if not (skill / SKILL_FILE).is_file():
        raise ConfigError(f"omk evolve {skill}: not a skill folder (no {SKILL_FILE} in it)")
    text = (skill / SKILL_FILE).read_text(encoding="utf-8-sig")
    if isinstance(candidates.read_doc(text), str):
        raise ConfigError(f"omk evolve {skill / SKILL_FILE}: {candidates.read_doc(text)}")
    loaded = prepare(config.options, config.cwd, None, skill).samples
    split = splits.split_samples(loaded, config.shares, config.seed, config.alpha, config.tests)
    samples = {s.sample_id: s for s in loaded}
    if config.focus == "description" and all(splits.sample_kind(samples[i]) == "task" for i in split.selection):
        raise ConfigError("omk evolve --focus description: no trigger probe (a sample with `skill_used`) in the selection split to compare descriptions on")
    guard = LeakGuard(_texts([samples[i] for i in split.selection + split.test]))
    folder = copy_skill(skill, config.out / "original")
    state = EvolveState(config, samples, split, guard, Standing(folder, text, {}, {}), Standing(folder, text, {}, {}))
    state.ledger = Ledger.open(config.out, fingerprint(_settings(config), text, list(samples)), config.budget_usd)
    return state


def _settings(config: EvolveConfig) -> dict[str, Any]:
    """What must be the same for a loop to resume from a ledger."""
    o = config.options
    return {
        "focus": config.focus, "rounds": config.rounds, "candidates": config.candidates, "shares": list(config.shares),
        "seed": config.seed, "alpha": config.alpha, "trivial": config.trivial, "edit_budget": config.edit_budget,
        "target": o.target, "judge": o.judge, "repeat": o.repeat,
    }  # fmt: skip


def begin(state: EvolveState) -> None:
    """The original skill on train and selection."""
    folder, text = state.original.folder, state.original.text
    state.original.train = run_split(state, "train", folder, text)
    state.guard.allow(_texts(state.subset("train")) + _outcome_texts(state.original.train))
    state.original.selection = run_split(state, "selection", folder, text)
    state.guard.add(_outcome_texts(state.original.selection))
    state.best = dataclasses.replace(state.original)


def run_split(state: EvolveState, name: str, folder: Path, text: str) -> dict[str, EvolveOutcome]:
    """The skill's outcomes on a split: from the ledger when this skill ran on it before (a resumed
    loop), else run now, once the budget allows, and recorded. The budget is checked before each
    call: when it runs out within the split, the samples that ran are recorded, what they cost is
    counted, and BudgetStop ends the loop (a resumed loop runs only the samples left)."""
    from omk.evolve.ledger import BudgetStop

    ledger = state.ledger
    assert ledger is not None
    key = f"{candidates.digest(text)}:{name}"
    known = ledger.outcomes.get(key, {})
    ids = state.split.of(name)
    todo = [state.samples[i] for i in ids if i not in known]
    if todo:
        ledger.check()
        done = evaluate(state.config.options, state.config.cwd, todo, folder, ledger.remaining)
        known = {**known, **done.outcomes}
        ledger.outcomes[key] = known
        ledger.spend(done.cost_usd)
        if not done.complete:
            raise BudgetStop
    return {i: known[i] for i in ids}


def _texts(samples: list[Sample]) -> list[str]:
    texts = []
    for s in samples:
        texts.append(s.prompt)
        texts.extend(t.prompt for t in s.turns)
    return texts


def _outcome_texts(outcomes: dict[str, EvolveOutcome]) -> list[str]:
    return [text for o in outcomes.values() for text in (o.output, *o.notes)]


def run_round(state: EvolveState, round_no: int, ask: Ask) -> bool:
    """One round; True when a candidate was accepted."""
    config = state.config
    rejected = [Rejected(t.text, t.reason) for t in state.tried if t.status != "accepted" and t.text]
    train = [(state.samples[i].prompt, state.best.train[i]) for i in state.split.train]
    request = build_request(
        round_no=round_no, rounds=config.rounds, k=config.candidates, focus=config.focus, edit_budget=config.edit_budget,
        skill_text=state.best.text, train=train, rejected=rejected,
    )  # fmt: skip
    offered = parse_answer(_answer(state, round_no, request, ask), config.candidates)
    accepted: list[tuple[Tried, Standing]] = []
    for index, text in enumerate(offered, 1):
        tried, standing = _try(state, round_no, index, text)
        state.tried.append(tried)
        if standing is not None:
            accepted.append((tried, standing))
    if len(offered) < config.candidates:
        state.notes.append(f"round {round_no}: the improver gave {len(offered)} of {config.candidates} candidates")
    if not accepted:
        return False
    winner, standing = max(accepted, key=lambda pair: _low(pair[0]))
    for tried, _ in accepted:
        if tried is not winner:
            tried.status, tried.reason = "rejected", f"significant, but another candidate of the round had a higher lower bound ({tried.reason})"
    state.best = standing
    state.path.append(round_no)
    return True


def _answer(state: EvolveState, round_no: int, request: str, ask: Ask) -> str:
    """The improver's answer of this round: the ledger's (a resumed loop), else asked now, once the
    request passed the leakage guard and the budget allows."""
    ledger = state.ledger
    assert ledger is not None
    state.guard.check(request)
    if round_no in ledger.answers:
        return ledger.answers[round_no]
    ledger.check()
    from omk.llm.retry import CallFailure

    try:
        answer, cost = ask(request)
    except CallFailure as failure:  # the round offers nothing; a resumed loop asks again
        state.notes.append(f"round {round_no}: the improver failed: {failure}")
        return ""
    ledger.answers[round_no] = answer
    ledger.spend(cost)
    return answer


def _low(tried: Tried) -> float:
    return tried.decision.low if tried.decision is not None and tried.decision.low is not None else float("-inf")


def _try(state: EvolveState, round_no: int, index: int, text: str) -> tuple[Tried, Standing | None]:
    """Refuse the candidate, or evaluate it on selection and decide; an accepted one is also run on
    train (what the next round's request shows)."""
    config = state.config
    seen = {candidates.digest(t.text) for t in state.tried}
    changed = candidates.lines_changed(state.best.text, text)
    why = candidates.refusal(text, state.best.text, focus=config.focus, edit_budget=config.edit_budget, seen=seen)
    if why is not None:
        return Tried(round_no, index, "refused", why, changed, text), None
    folder = copy_skill(config.skill, config.out / "candidates" / f"r{round_no}-c{index}", text)
    selection = run_split(state, "selection", folder, text)
    state.guard.add(_outcome_texts(selection))
    decision = _decide(state, selection)
    status = "accepted" if decision.accepted else "rejected"
    train = run_split(state, "train", folder, text) if decision.accepted else {}
    state.guard.allow(_outcome_texts(train))
    cost = sum(o.cost_usd for o in [*selection.values(), *train.values()])
    tried = Tried(round_no, index, status, decision.reason, changed, text, decision, mean(train) if train else None, mean(selection), cost)
    return tried, (Standing(folder, text, train, selection) if decision.accepted else None)


def _decide(state: EvolveState, selection: dict[str, EvolveOutcome]) -> acceptance.Decision:
    config, ids = state.config, state.split.selection
    best = state.best.selection
    if config.measure == "triggering":
        pairs = [(b, c) for i in ids for b, c in zip(best[i].probes, selection[i].probes, strict=False)]
        return acceptance.compare_rates(pairs, alpha=config.alpha, tests=config.tests, trivial=config.trivial_for_measure)
    return acceptance.compare_scores(
        [best[i].composite for i in ids], [selection[i].composite for i in ids], alpha=config.alpha, tests=config.tests, trivial=config.trivial_for_measure
    )


def run_loop(state: EvolveState, ask: Ask) -> None:
    """The rounds, until a stop."""
    idle = 0
    state.standings.append((0, _composites(state.best.selection)))
    for round_no in range(1, state.config.rounds + 1):
        if state.best.train and all(o.passed for o in state.best.train.values()):
            state.stop = "every train sample passes"
            return
        idle = 0 if run_round(state, round_no, ask) else idle + 1
        state.standings.append((round_no, _composites(state.best.selection)))
        if idle >= 2:
            state.stop = "two rounds in a row with nothing accepted"
            return
    state.stop = f"the last round ({state.config.rounds})"


def final_cost(report: Report) -> float:
    """What one arm of the final check cost, by the rule of `evaluate.spent`: the target's uncached
    answers (the summary's cost) and the judge's calls (its own tally)."""
    return (report.summary.cost_usd or 0.0) + (report.summary.judge_cost_usd or 0.0)


def _composites(outcomes: dict[str, EvolveOutcome]) -> list[float]:
    return [o.composite for o in outcomes.values() if o.composite is not None]


def final_check(state: EvolveState) -> None:
    """The selected skill against the original on the test split, paired, through the experiment
    engine; run only when a candidate was accepted (the test split is run exactly twice then, once
    for each skill, and never otherwise)."""
    from omk.engine.experiment import prepare_experiment, run_experiment
    from omk.engine.inputs import sample_paths
    from omk.engine.variants import Variant

    if state.best.folder == state.original.folder:
        return
    config = state.config
    variants = [Variant("original", "control", skill=str(state.original.folder)), Variant("selected", "treatment", skill=str(state.best.folder))]
    ledger = state.ledger
    assert ledger is not None
    ledger.check()
    remaining, given = ledger.remaining, config.options.budget_usd
    limit = remaining if given is None else (given if remaining is None else min(given, remaining))
    options = dataclasses.replace(config.options, out=str(config.out / "final"), control=None, treatment=None, ablate=None, budget_usd=limit)
    trivial = acceptance.TRIVIAL_COMPOSITE if config.trivial is None or config.measure == "triggering" else config.trivial
    experiment = prepare_experiment(options, variants, cwd=config.cwd, seed=config.seed, trivial=trivial, samples=state.subset("test"), paths=sample_paths(options, config.cwd))
    state.final = run_experiment(experiment)
    ledger.spend(sum(final_cost(r) for r in state.final.reports.values()))
    if any(r.budget is not None and r.budget.stopped for r in state.final.reports.values()):
        from omk.evolve.ledger import BudgetStop

        raise BudgetStop  # the final check is run again, whole, by a resumed loop
