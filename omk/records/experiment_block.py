"""The `experiment` block of report.json, typed (docs/experiments.md, docs/report-format.md): the
variants, each treatment's paired comparison with the control, the verdict, `--require`, every
variant's results, and the pairwise judge's verdicts (also the top-level `pairwise` block of a
report written before two-target runs became experiments). Parsed with omk/report/fields.py:
missing fields take their defaults, wrong types are an `InputError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omk.errors import InputError
from omk.records.document import Bounds, LayerBounds, LayerMeans, RunTarget
from omk.records.fields import Fields, Number
from omk.records.triggering import TriggerChange
from omk.stats.paired import Regression as Regression
from omk.stats.verdict import Level
from omk.stats.verdict import PairVerdict as PairVerdict
from omk.stats.verdict import Verdict as Verdict
from omk.stats.winrate import WinRate

# ---------------------------------------------------------------- the variants and the verdict


@dataclass(frozen=True, slots=True)
class VariantRow:
    name: str
    role: str | None
    passed: int
    samples: int
    pass_rate: Number | None
    scores: LayerMeans
    gate_passed: bool
    gate_failing: tuple[str, ...]
    errored: int
    cost_usd: Number | None
    latency_ms: Number | None
    tokens_in: int | None
    tokens_out: int | None
    spread: Number | None
    scores_ci: LayerBounds | None = None  # None in a report from before intervals
    pass_rate_ci: Bounds | None = None

    @classmethod
    def from_json(cls, f: Fields) -> VariantRow:
        gate = f.obj("gate") or Fields({}, f.origin)
        tokens = f.obj("tokens") or Fields({}, f.origin)
        return cls(
            name=str(f.raw("name")),
            role=f.str("role"),
            passed=f.int("passed"),
            samples=f.int("samples"),
            pass_rate=f.num("pass_rate"),
            scores=LayerMeans.from_json(f.obj("scores")),
            gate_passed=gate.bool("passed"),
            gate_failing=tuple(str(x) for x in gate.list("failing")),
            errored=f.int("errored"),
            cost_usd=f.num("cost_usd"),
            latency_ms=f.num("latency_ms"),
            tokens_in=tokens.int("input", None),
            tokens_out=tokens.int("output", None),
            spread=f.num("spread"),
            scores_ci=LayerBounds.from_json(f.obj("scores_ci")),
            pass_rate_ci=Bounds.from_json(f.obj("pass_rate_ci")),
        )


def _level(f: Fields) -> Level:
    value = f.str("level", "")
    try:
        return Level(value)
    except ValueError:
        raise f.fail("level", " or ".join(repr(m.value) for m in Level)) from None


def pair_verdict_from_json(f: Fields) -> PairVerdict:
    """One treatment's verdict against the control, as the block writes it."""
    return PairVerdict(
        f.str("control", ""), f.str("treatment", ""), _level(f), f.str("reason", ""), f.str("headline", ""), f.str("recommendation", "")
    )


def verdict_from_json(f: Fields) -> Verdict:
    """The experiment's verdict, as the block writes it (`omk verdict` reads it back)."""
    pairs = tuple(pair_verdict_from_json(p) for p in f.objs("pairs"))
    return Verdict(_level(f), f.str("headline", ""), f.str("recommendation", ""), pairs, f.strs("lines"))


@dataclass(frozen=True, slots=True)
class Require:
    """`--require POLICY`: whether the verdict met it, and why."""

    policy: str | None
    passed: bool
    reason: str | None


# ---------------------------------------------------------------- one comparison


@dataclass(frozen=True, slots=True)
class Delta:
    """The paired change of the composite or of a layer."""

    n: int
    mean: Number | None
    ci_low: Number | None
    ci_high: Number | None
    has_ci: bool
    significant: bool
    wins: int
    ties: int
    losses: int
    d_z: Number | None
    mde: Number | None

    @classmethod
    def from_json(cls, f: Fields | None) -> Delta | None:
        if f is None:
            return None
        ci = f.obj("ci")
        low, high = (ci.num("low"), ci.num("high")) if ci else (None, None)
        return cls(
            f.int("n"), f.num("mean"), low, high, ci is not None, f.bool("significant"),
            f.int("wins"), f.int("ties"), f.int("losses"), f.num("d_z"), f.num("mde"),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class PassRate:
    control_rate: Number | None = None
    treatment_rate: Number | None = None
    change: Number | None = None
    gained: int = 0
    lost: int = 0
    p_value: Number | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A resource's change per sample (cost, latency, tokens): absolute and relative, each with its
    paired bootstrap interval (None in a block written before resources had intervals)."""

    delta: Number | None = None
    relative: Number | None = None
    n: int = 0
    control: Number | None = None
    treatment: Number | None = None
    ci: Bounds | None = None
    relative_ci: Bounds | None = None

    @classmethod
    def from_json(cls, f: Fields | None) -> Change:
        if f is None:
            return cls()
        return cls(
            f.num("delta"), f.num("relative"), f.int("n"), f.num("control"), f.num("treatment"),
            Bounds.from_json(f.obj("ci")), Bounds.from_json(f.obj("relative_ci")),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class PerSample:
    """One shared sample: both sides' composites, pass and error, and the change."""

    sample_id: str | None
    control: Number | None
    treatment: Number | None
    delta: Number | None
    control_passed: bool
    treatment_passed: bool
    control_errored: bool
    treatment_errored: bool

    @classmethod
    def from_json(cls, f: Fields) -> PerSample:
        sides = [f.bool(f"{side}_{what}") for what in ("passed", "errored") for side in ("control", "treatment")]
        return cls(f.str("sample_id"), f.num("control"), f.num("treatment"), f.num("delta"), *sides)

    def passed(self, side: str) -> bool:
        return self.control_passed if side == "control" else self.treatment_passed

    def errored(self, side: str) -> bool:
        return self.control_errored if side == "control" else self.treatment_errored

    def score(self, side: str) -> Number | None:
        return self.control if side == "control" else self.treatment


@dataclass(frozen=True, slots=True)
class Comparison:
    """One treatment against the control."""

    control: str | None
    treatment: str | None
    samples: int
    composite: Delta | None
    layers: tuple[tuple[str, Delta], ...]
    pass_rate: PassRate
    cost_usd: Change
    latency_ms: Change
    tokens: Change
    errored_either: int
    errored_control: int
    errored_treatment: int
    only_control: int
    only_treatment: int
    spread_exceeded: bool | None
    regressions: tuple[Regression, ...]
    per_sample: tuple[PerSample, ...]

    @classmethod
    def from_json(cls, f: Fields) -> Comparison:
        layers = f.obj("layers") or Fields({}, f.origin)
        pr = f.obj("pass_rate") or Fields({}, f.origin)
        err = f.obj("errored") or Fields({}, f.origin)
        spread = f.obj("spread") or Fields({}, f.origin)
        return cls(
            control=f.str("control"),
            treatment=f.str("treatment"),
            samples=f.int("samples"),
            composite=Delta.from_json(f.obj("composite")),
            layers=tuple((k, d) for k in ("fact", "behavior", "judge") if (d := Delta.from_json(layers.obj(k))) is not None),
            pass_rate=PassRate(pr.num("control_rate"), pr.num("treatment_rate"), pr.num("change"), pr.int("gained"), pr.int("lost"), pr.num("p_value")),
            cost_usd=Change.from_json(f.obj("cost_usd")),
            latency_ms=Change.from_json(f.obj("latency_ms")),
            tokens=Change.from_json(f.obj("tokens")),
            errored_either=err.int("either"),
            errored_control=err.int("control"),
            errored_treatment=err.int("treatment"),
            only_control=len(f.list("only_control")),
            only_treatment=len(f.list("only_treatment")),
            spread_exceeded=spread.bool("exceeded", None),
            regressions=tuple(Regression(r.str("sample_id", ""), r.num("delta"), r.strs("reasons")) for r in f.objs("regressions")),
            per_sample=tuple(PerSample.from_json(s) for s in f.objs("per_sample")),
        )


# ---------------------------------------------------------------- every variant's results


@dataclass(frozen=True, slots=True)
class Case:
    """One result of one variant (`runs[name].results[]`): why it failed in `messages`."""

    sample_id: str | None
    repeat: int
    status: str | None
    passed: bool
    composite: Number | None
    duration_ms: Number | None
    messages: tuple[str, ...]

    @classmethod
    def from_json(cls, f: Fields) -> Case:
        return cls(
            f.str("sample_id"), f.int("repeat"), f.str("status"), f.bool("passed"), f.num("composite"),
            f.num("duration_ms"), tuple(str(m) for m in f.list("messages")),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Run:
    """A variant's run: its folder (relative to the report), its target, its results."""

    report: str | None
    target: RunTarget
    results: tuple[Case, ...] | None  # None in a block written before the results were added


@dataclass(frozen=True, slots=True)
class ComparisonSettings:
    """How the comparisons were computed: bootstrap resamples, seed, the trivial change, and the
    largest cost increase allowed (percent; None when not set)."""

    resamples: int | None = None
    seed: Any = None
    trivial: Number | None = None
    max_cost_increase: Number | None = None


# ---------------------------------------------------------------- the pairwise judge


@dataclass(frozen=True, slots=True)
class Vote:
    """One judge of an ensemble: its preference (1 = A, 2 = B, 0 = tie) and its reason."""

    judge: Any
    preference: int | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "preference": self.preference, "reason": self.reason}

    @classmethod
    def from_json(cls, f: Fields) -> Vote:
        return cls(f.raw("judge"), f.int("preference", None), str(f.raw("reason") or ""))


WINNERS = {1: "a", 2: "b", 0: "tie"}  # a preference (1 = A better, 2 = B better, 0 = tie) as a winner
SCORES = {1: {"a": 1, "b": 0}, 2: {"a": 0, "b": 1}, 0: {"a": 0, "b": 0}}


@dataclass(frozen=True, slots=True)
class PairwiseOrder:
    """What the judge said with one answer shown first, in A/B terms; an ensemble's `votes`
    (written only when there are several)."""

    winner: str | None
    reason: str | None
    votes: tuple[Vote, ...] = ()

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"winner": self.winner, "reason": self.reason}
        if self.votes:
            found["votes"] = [v.to_json() for v in self.votes]
        return found

    @classmethod
    def from_json(cls, f: Fields | None) -> PairwiseOrder | None:
        if f is None:
            return None
        return cls(f.str("winner"), f.str("reason"), tuple(Vote.from_json(v) for v in f.objs("votes")))


@dataclass(frozen=True, slots=True)
class PairwiseVerdict:
    """One sample's (and comparison key's) verdict: `preference` and `winner` are the combined
    verdict of both orders, `a_first` and `b_first` what each order said."""

    sample_id: str | None
    key: str | None
    status: str | None
    winner: str | None
    position: str | None  # which side each order preferred, when they disagreed
    reason: str | None
    error: str | None
    votes: tuple[tuple[str, tuple[Vote, ...]], ...]  # (order: "", "a_first", "b_first"; its votes)
    preference: int | None = None
    a_first: PairwiseOrder | None = None
    b_first: PairwiseOrder | None = None

    @classmethod
    def of(
        cls,
        sample_id: str,
        key: str,
        status: str,
        *,
        preference: int | None = None,
        reason: str = "",
        error: str | None = None,
        orders: tuple[PairwiseOrder, PairwiseOrder] | None = None,
        position: str | None = None,
    ) -> PairwiseVerdict:
        """A verdict as the pairwise judge gives it (`orders`: A shown first, then B)."""
        a_first, b_first = orders or (None, None)
        votes = tuple((k, o.votes) for k, o in (("a_first", a_first), ("b_first", b_first)) if o is not None and o.votes)
        winner = WINNERS.get(preference) if preference is not None else None
        return cls(sample_id, key, status, winner, position, reason, error, votes, preference, a_first, b_first)

    def to_json(self) -> dict[str, Any]:
        orders = None
        if self.a_first is not None and self.b_first is not None:
            orders = {"a_first": self.a_first.to_json(), "b_first": self.b_first.to_json()}
        scores = SCORES.get(self.preference) if self.preference is not None else None
        return {
            "sample_id": self.sample_id,
            "key": self.key,
            "status": self.status,
            "preference": self.preference,
            "winner": self.winner,
            "scores": dict(scores) if scores is not None else None,
            "reason": self.reason,
            "error": self.error,
            "orders": orders,
            "position": self.position,
        }

    @classmethod
    def from_json(cls, f: Fields) -> PairwiseVerdict:
        orders = f.obj("orders") or Fields({}, f.origin)
        groups = [("", f)] + [(key, order) for key in ("a_first", "b_first") if (order := orders.obj(key)) is not None]
        votes = tuple((key, tuple(Vote.from_json(v) for v in g.objs("votes"))) for key, g in groups if isinstance(g.data.get("votes"), list))
        a_first, b_first = PairwiseOrder.from_json(orders.obj("a_first")), PairwiseOrder.from_json(orders.obj("b_first"))
        return cls(
            f.str("sample_id"), f.str("key"), f.str("status"), f.str("winner"), f.str("position"), f.str("reason"), f.str("error"),
            votes, f.int("preference", None), a_first, b_first,
        )  # fmt: skip

    @property
    def why(self) -> str:
        """The judge's reason for the verdict, or why there is none."""
        return (self.reason or "") if self.status == "ok" else (self.error or "")


@dataclass(frozen=True, slots=True)
class WinRateRow:
    key: str | None
    rate: Number | None
    decisive: int
    ci_level: Number | None
    ci_low: Number | None
    ci_high: Number | None
    p_value: Number | None
    ties: int
    a_better: int = 0
    b_better: int = 0
    tie_rate: Number | None = None
    ci_method: str | None = None

    @classmethod
    def of(cls, rate: WinRate) -> WinRateRow:
        """The row of a win rate just computed (`omk.stats.winrate.WinRate`, which rounds it)."""
        return cls.from_json(Fields(rate.to_dict(), "win_rate"))

    def to_json(self) -> dict[str, Any]:
        ci = None
        if self.ci_low is not None:
            ci = {"low": self.ci_low, "high": self.ci_high, "level": self.ci_level, "method": self.ci_method}
        return {
            "key": self.key,
            "b_better": self.b_better,
            "a_better": self.a_better,
            "ties": self.ties,
            "decisive": self.decisive,
            "rate": self.rate,
            "ci": ci,
            "p_value": self.p_value,
            "tie_rate": self.tie_rate,
        }

    @classmethod
    def from_json(cls, f: Fields) -> WinRateRow:
        ci = f.obj("ci") or Fields({}, f.origin)
        return cls(
            f.str("key"), f.num("rate"), f.int("decisive"), ci.num("level"), ci.num("low"), ci.num("high"), f.num("p_value"), f.int("ties"),
            f.int("a_better"), f.int("b_better"), f.num("tie_rate"), ci.str("method"),
        )  # fmt: skip


TALLY_KEYS = ("a_better", "b_better", "ties", "errored", "skipped")


@dataclass(frozen=True, slots=True)
class Tally:
    """How the pairwise verdicts on one treatment came out (`summary` of a pair)."""

    a_better: int = 0
    b_better: int = 0
    ties: int = 0
    errored: int = 0
    skipped: int = 0
    compared: int = 0

    @classmethod
    def of(cls, verdicts: Sequence[PairwiseVerdict]) -> Tally:
        ok = [v for v in verdicts if v.status == "ok"]
        return cls(
            a_better=sum(1 for v in ok if v.winner == "a"),
            b_better=sum(1 for v in ok if v.winner == "b"),
            ties=sum(1 for v in ok if v.winner == "tie"),
            errored=sum(1 for v in verdicts if v.status == "error"),
            skipped=sum(1 for v in verdicts if v.status == "skipped"),
            compared=len(ok),
        )

    def to_json(self) -> dict[str, int]:
        return {"compared": self.compared, **{k: getattr(self, k) for k in TALLY_KEYS}}

    @classmethod
    def from_json(cls, f: Fields) -> Tally:
        return cls(*(f.int(k) for k in (*TALLY_KEYS, "compared")))


POSITION_KEYS = ("consistent", "inconsistent", "first", "second", "partial")


def positions(verdicts: Sequence[PairwiseVerdict]) -> dict[str, int]:
    """How often the two orders agreed, and how they disagreed: each order preferring the answer
    shown first, the one shown second, or one order calling a tie (`first`, `second`, `partial`)."""
    ok = [v for v in verdicts if v.status == "ok"]
    found = {"consistent": sum(1 for v in ok if v.position is None)}
    found["inconsistent"] = len(ok) - found["consistent"]
    found.update({kind: sum(1 for v in ok if v.position == kind) for kind in POSITION_KEYS[2:]})
    return found


@dataclass(frozen=True, slots=True)
class Pair:
    """The pairwise judge's verdicts on one treatment against the control."""

    control: str | None
    treatment: str | None
    targets: tuple[str, str]  # A's and B's specs, "?" where the block does not say
    judges: tuple[str, ...]
    tally: Tally
    position: Mapping[str, int] | None  # POSITION_KEYS; None in a report from before both orders
    win_rate: tuple[WinRateRow, ...]
    verdicts: tuple[PairwiseVerdict, ...]
    described: tuple[Any, Any] = (None, None)  # A's and B's targets as the block writes them
    reports: tuple[str | None, str | None] = (None, None)  # their run folders (None: in memory)

    def to_json(self) -> dict[str, Any]:
        return {
            "control": self.control,
            "treatment": self.treatment,
            "targets": list(self.described),
            "reports": list(self.reports),
            "summary": self.tally.to_json(),
            "position": dict(self.position) if self.position is not None else None,
            "win_rate": [r.to_json() for r in self.win_rate],
            "verdicts": [v.to_json() for v in self.verdicts],
        }

    @classmethod
    def from_json(cls, f: Fields, judge: Any) -> Pair:
        raw = [*f.list("targets")[:2], None, None][:2]
        reports = [r if isinstance(r, str) else None for r in [*f.list("reports")[:2], None, None][:2]]
        names = [(x.get("spec") or x.get("kind") if isinstance(x, Mapping) else x) for x in f.list("targets")[:2]]
        names += [None] * (2 - len(names))
        summary = f.obj("summary") or Fields({}, f.origin)
        position = f.obj("position")
        return cls(
            control=f.str("control"),
            treatment=f.str("treatment"),
            targets=(str(names[0] or "?"), str(names[1] or "?")),
            judges=tuple(map(str, judge)) if isinstance(judge, list) else (),
            tally=Tally.from_json(summary),
            position={k: position.int(k) for k in POSITION_KEYS} if position is not None else None,
            win_rate=tuple(WinRateRow.from_json(r) for r in f.objs("win_rate")),
            verdicts=tuple(PairwiseVerdict.from_json(v) for v in f.objs("verdicts")),
            described=(raw[0], raw[1]),
            reports=(reports[0], reports[1]),
        )


@dataclass(frozen=True, slots=True)
class PairwiseBlock:
    """The pairwise judge's block (`experiment.pairwise`): its judges, what they cost, the rule
    that turns two orders into one verdict, and a comparison per treatment."""

    judge: tuple[str, ...] | None  # None: no judge, every verdict skipped
    judge_cost_usd: Number | None
    rule: str
    pairs: tuple[Pair, ...]
    orders: str = "both"
    repeat: int = 0  # the repeat whose answers are compared

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": list(self.judge) if self.judge is not None else None,
            "orders": self.orders,
            "rule": self.rule,
            "repeat": self.repeat,
            "judge_cost_usd": self.judge_cost_usd,
            "pairs": [p.to_json() for p in self.pairs],
        }

    @classmethod
    def from_json(cls, f: Fields) -> PairwiseBlock:
        """The block as omk writes it: its comparisons a list, each with its list of verdicts
        (an InputError naming the field otherwise)."""
        if not isinstance(f.data.get("pairs"), list):
            raise f.fail("pairs", "a list of comparisons")
        pairs = f.objs("pairs")
        for pair in pairs:
            if not isinstance(pair.data.get("verdicts"), list):
                raise pair.fail("verdicts", "a list of verdicts")
        judge = f.strs("judge") if f.data.get("judge") is not None else None
        return cls(
            judge=judge,
            judge_cost_usd=f.num("judge_cost_usd"),
            rule=f.str("rule", ""),
            pairs=tuple(Pair.from_json(p, None if judge is None else list(judge)) for p in pairs),
            orders=f.str("orders", "both"),
            repeat=f.int("repeat"),
        )


    @classmethod
    def of_report(cls, report: Fields) -> PairwiseBlock | None:
        """A report's `experiment.pairwise` block; None when it has none."""
        experiment = report.obj("experiment")
        block = experiment.obj("pairwise") if experiment is not None else None
        return cls.from_json(block) if block is not None else None


def pairs_of(block: Fields | None) -> tuple[Pair, ...]:
    """The comparisons of an `experiment.pairwise` block, each with the block's judge."""
    if block is None:
        return ()
    judge = block.raw("judge")
    return tuple(Pair.from_json(p, judge) for p in block.objs("pairs"))


def report_pairs(report: Fields) -> tuple[Pair, ...]:
    """Every comparison of the pairwise judge: `experiment.pairwise`, else the top-level
    `pairwise` block of a report written before two-target runs became experiments."""
    experiment = report.obj("experiment")
    block = experiment.obj("pairwise") if experiment is not None else None
    if block is not None and isinstance(block.data.get("pairs"), list):
        return pairs_of(block)
    legacy = report.obj("pairwise")
    return (Pair.from_json(legacy, legacy.raw("judge")),) if legacy is not None else ()


# ---------------------------------------------------------------- an ablation (--ablate)


@dataclass(frozen=True, slots=True)
class AblationPart:
    """One part of the skill and what removing it did: `contribution` is the composite lost
    (control minus treatment, paired), `ci_low`/`ci_high` its 95% interval; `candidate` when the
    whole interval lies within ±trivial (NOISE or UNDERPOWERED is not that)."""

    variant: str
    kind: str  # "section" of SKILL.md or "reference" file
    name: str
    tokens: int
    contribution: Number | None
    ci_low: Number | None
    ci_high: Number | None
    level: str | None  # the treatment's verdict against the whole skill
    candidate: bool
    trigger_change: Number | None = None  # the change of the skill's recall when removed
    samples: int = 0  # paired samples behind the contribution
    false_trigger_change: Number | None = None  # the change of its false-trigger rate (near misses firing)

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant, "kind": self.kind, "name": self.name, "tokens": self.tokens,
            "contribution": self.contribution, "ci": {"low": self.ci_low, "high": self.ci_high},
            "level": self.level, "candidate_to_cut": self.candidate, "trigger_change": self.trigger_change,
            "samples": self.samples, "false_trigger_change": self.false_trigger_change,
        }  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields) -> AblationPart:
        ci = f.obj("ci") or Fields({}, f.origin)
        return cls(
            f.str("variant", ""), f.str("kind", ""), f.str("name", ""), f.int("tokens"), f.num("contribution"),
            ci.num("low"), ci.num("high"), f.str("level"), f.bool("candidate_to_cut"), f.num("trigger_change"), f.int("samples"),
            f.num("false_trigger_change"),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Ablation:
    """`experiment.ablation`: the skill's parts ranked by what removing each one cost."""

    skill: str
    trivial: Number | None
    parts: tuple[AblationPart, ...]

    def to_json(self) -> dict[str, Any]:
        return {"skill": self.skill, "trivial": self.trivial, "parts": [p.to_json() for p in self.parts]}

    @classmethod
    def from_json(cls, f: Fields | None) -> Ablation | None:
        if f is None:
            return None
        return cls(f.str("skill", ""), f.num("trivial"), tuple(AblationPart.from_json(p) for p in f.objs("parts")))


# ---------------------------------------------------------------- the block


@dataclass(frozen=True, slots=True)
class ExperimentBlock:
    control: str | None
    settings: ComparisonSettings
    variants: tuple[VariantRow, ...]
    comparisons: tuple[Comparison, ...]
    verdict: Verdict
    require: Require | None
    runs: Mapping[str, Run]
    pairs: tuple[Pair, ...] = ()  # the pairwise judge's comparisons (`pairwise.pairs`)
    seed: Any = None
    triggering: tuple[TriggerChange, ...] = ()  # the paired change of each skill's trigger rates
    ablation: Ablation | None = None  # `--ablate`: each part of the skill ranked by its contribution
    data: Mapping[str, Any] = field(default_factory=dict)  # the block as written

    def to_json(self) -> Mapping[str, Any]:
        return self.data

    @classmethod
    def read(cls, data: Mapping[str, Any], origin: str = "experiment") -> ExperimentBlock:
        """A block built in this process (or read from a file) as a record."""
        block = cls.from_json(Fields(data, origin))
        if block is None:
            raise InputError(f"{origin}: verdict: missing; is this an experiment block?")
        return block

    @classmethod
    def from_json(cls, f: Fields | None) -> ExperimentBlock | None:
        """The block; None when the report has none (or one without a verdict)."""
        verdict = f.obj("verdict") if f is not None else None
        if f is None or verdict is None:
            return None
        s = f.obj("settings") or Fields({}, f.origin)
        req = f.obj("require")
        return cls(
            control=f.str("control"),
            settings=ComparisonSettings(s.int("resamples", None), s.raw("seed"), s.num("trivial"), s.num("max_cost_increase")),
            variants=tuple(VariantRow.from_json(v) for v in f.objs("variants")),
            comparisons=tuple(Comparison.from_json(c) for c in f.objs("comparisons")),
            verdict=verdict_from_json(verdict),
            require=Require(req.str("policy"), req.bool("passed"), req.str("reason")) if req is not None else None,
            runs=_runs(f.obj("runs")),
            pairs=pairs_of(f.obj("pairwise")),
            seed=f.raw("seed"),
            data=f.data,
            triggering=tuple(TriggerChange.from_json(t) for t in f.objs("triggering")),
            ablation=Ablation.from_json(f.obj("ablation")),
        )

    def pair_verdict(self, comp: Comparison) -> PairVerdict | None:
        for p in self.verdict.pairs:
            if p.treatment == comp.treatment and p.control == comp.control:
                return p
        return None


def _runs(f: Fields | None) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    if f is None:
        return runs
    for name in f.data:
        run = f.obj(name)
        if run is None:
            continue
        results = tuple(Case.from_json(r) for r in run.objs("results")) if isinstance(run.data.get("results"), list) else None
        runs[str(name)] = Run(run.str("report"), RunTarget.from_json(run.obj("target")), results)
    return runs
