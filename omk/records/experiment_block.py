"""The `experiment` block of report.json, typed (docs/experiments.md, docs/report-format.md): the
variants, each treatment's paired comparison with the control, the verdict, `--require`, every
variant's results, and the pairwise judge's verdicts (also the top-level `pairwise` block of a
report written before two-target runs became experiments). Parsed with omk/records/fields.py:
missing fields take their defaults, wrong types are an `InputError` naming the field.

The block is written and read through these records alone: the analysis (omk.stats) is turned
into them (`ExperimentBlock.of`, each record's `of`), and `to_json` writes them. A record read
from a block written by an older omk remembers the keys that block lacked (`absent`) and writes
them out again, so a block read and written back is the block as it was.

Why these records keep their own `to_json` and `from_json`, read field by field through
omk/records/fields.py, where every other record omk writes is on msgspec's typed decoding and
encoding (omk.records.wire):

- A block read and written back must be the block as it was (`omk verdict --json` prints a block
  read from report.json), and a block written by an older omk lacks keys added since. Eight
  records (`VariantRow`, `Delta`, `PassRate`, `Change`, `Comparison`, `Run`, `ComparisonSettings`,
  `ExperimentBlock`) remember which of their 90 keys the block lacked (`absent`, found by
  `_absent`, left out by `_present`). On msgspec each of those fields would be `X | UnsetType`,
  and every reader of the block (the terminal, Markdown, HTML and JUnit formats, `omk verdict`,
  the ablation ranking, `omk merge`, `omk view`) would have to tell `UNSET` from a value; or each
  record would need a second record of its written layout beside it. Either is longer than this
  reader.
- The written layout is not the fields: `VariantRow` writes its gate and its tokens as objects of
  their own (`gate`, `tokens`), `Comparison` groups its layers, errored counts and spread,
  `Tally` writes `compared` first, `PairwiseOrder` writes an ensemble's `votes` only when it has
  some, and the verdict is the analysis' own record (omk.stats), read back by `verdict_from_json`.

Read typed already: the shared intervals and means (`Bounds`, `LayerBounds`, `LayerMeans`), the
target (`RunTarget`) and the triggering changes (`TriggerChange`). Every reader takes a missing or
null field as its default and keeps a number as written (an integer stays one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from omk.core.errors import InputError
from omk.records.fields import Fields
from omk.records.parts import Bounds, LayerBounds, LayerMeans, RunTarget
from omk.records.triggering import TriggerChange
from omk.records.wire import HINT, JsonRecord, Number, convert
from omk.stats.paired import Regression as Regression
from omk.stats.pairwise_rate import WinRate
from omk.stats.verdict import Level
from omk.stats.verdict import PairVerdict as PairVerdict
from omk.stats.verdict import Verdict as Verdict

if TYPE_CHECKING:
    from omk.stats import AnalysisSettings, ExperimentAnalysis, PairedComparison, VariantSummary
    from omk.stats.bootstrap import Interval
    from omk.stats.paired import DeltaStats, MeasureDelta, PassRateChange, SampleDelta
    from omk.stats.verdict import PolicyResult
    from omk.stats.winrate import Proportion

R = TypeVar("R", bound=JsonRecord)
LAYER_NAMES = ("fact", "behavior", "judge")
NO_KEYS: frozenset[str] = frozenset()


def _r(x: float | None, places: int = 4) -> Number | None:
    return round(x, places) if x is not None else None


def _typed(kind: type[R], f: Fields | None) -> R | None:
    """A record of the block read by msgspec (omk.records.wire), from an object of the block; None
    when there is none."""
    return None if f is None else kind.read(f.data, f.origin, f.path)


def _absent(f: Fields, keys: Iterable[str]) -> frozenset[str]:
    """The keys of `keys` a block written by an older omk lacks."""
    return frozenset(k for k in keys if k not in f.data) or NO_KEYS


def _present(found: dict[str, Any], absent: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k not in absent} if absent else found


def _bounds(ci: Interval | None, places: int = 4) -> Bounds | None:
    """A bootstrap interval as the block keeps it, its ends rounded to `places`."""
    if ci is None:
        return None
    return Bounds(round(ci.low, places), round(ci.high, places), ci.level, ci.method, ci.resamples, ci.seed)


def _wilson(ci: Proportion | None) -> Bounds | None:
    return Bounds(round(ci.low, 4), round(ci.high, 4), ci.level, ci.method) if ci is not None else None


def _bounds_json(b: Bounds | None) -> dict[str, Any] | None:
    return b.to_json() if b is not None else None


def _wilson_json(b: Bounds | None) -> dict[str, Any] | None:
    """A Wilson interval: its ends, level and method (no resamples, no seed)."""
    return {"low": b.low, "high": b.high, "level": b.level, "method": b.method} if b is not None else None


# ---------------------------------------------------------------- the variants and the verdict

VARIANT_KEYS = (
    "name", "role", "samples", "errored", "errored_runs", "repeats", "passed", "pass_rate", "scores", "gate",
    "cost_usd", "latency_ms", "tokens", "run_means", "run_cv", "spread", "scores_ci", "pass_rate_ci",
)  # fmt: skip


class VariantRow(msgspec.Struct, frozen=True, gc=False):
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
    errored_runs: int = 0  # errored repeats, all samples
    repeats: int = 0  # the most repeats any sample has
    run_means: tuple[Number, ...] = ()  # the composite's mean over the samples, per repeat
    run_cv: Number | None = None  # the run means' coefficient of variation
    absent: frozenset[str] = NO_KEYS  # keys of VARIANT_KEYS the block read lacks

    @classmethod
    def of(cls, s: VariantSummary) -> VariantRow:
        """The row of a variant just summarised (`omk.stats.VariantSummary`), rounded as written."""
        cis = LayerBounds(*(_bounds(s.scores_ci.get(k)) for k in (*LAYER_NAMES, "composite"))) if s.scores_ci else None
        return cls(
            s.name, s.role, s.passed, s.samples, _r(s.pass_rate), LayerMeans(*(_r(s.scores.get(k)) for k in (*LAYER_NAMES, "composite"))),
            s.gate_passed, s.gate_failures, s.errored, _r(s.cost_usd, 6), _r(s.latency_ms, 1), s.input_tokens, s.output_tokens,
            _r(s.spread), cis, _wilson(s.pass_rate_ci), s.errored_runs, s.repeats, tuple(round(m, 4) for m in s.run_means), _r(s.run_cv),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return _present({
            "name": self.name, "role": self.role, "samples": self.samples, "errored": self.errored,
            "errored_runs": self.errored_runs, "repeats": self.repeats, "passed": self.passed, "pass_rate": self.pass_rate,
            "scores": self.scores.to_json(), "gate": {"passed": self.gate_passed, "failing": list(self.gate_failing)},
            "cost_usd": self.cost_usd, "latency_ms": self.latency_ms, "tokens": {"input": self.tokens_in, "output": self.tokens_out},
            "run_means": list(self.run_means), "run_cv": self.run_cv, "spread": self.spread,
            "scores_ci": self.scores_ci.to_json() if self.scores_ci is not None else None,
            "pass_rate_ci": _wilson_json(self.pass_rate_ci),
        }, self.absent)  # fmt: skip

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
            scores=_typed(LayerMeans, f.obj("scores")) or LayerMeans(),
            gate_passed=gate.bool("passed"),
            gate_failing=tuple(str(x) for x in gate.list("failing")),
            errored=f.int("errored"),
            cost_usd=f.num("cost_usd"),
            latency_ms=f.num("latency_ms"),
            tokens_in=tokens.int("input", None),
            tokens_out=tokens.int("output", None),
            spread=f.num("spread"),
            scores_ci=_typed(LayerBounds, f.obj("scores_ci")),
            pass_rate_ci=_typed(Bounds, f.obj("pass_rate_ci")),
            errored_runs=f.int("errored_runs"),
            repeats=f.int("repeats"),
            run_means=tuple(_nums(f, "run_means")),
            run_cv=f.num("run_cv"),
            absent=_absent(f, VARIANT_KEYS),
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


class Require(msgspec.Struct, frozen=True, gc=False):
    """`--require POLICY`: whether the verdict met it, and why."""

    policy: str | None
    passed: bool
    reason: str | None

    @classmethod
    def of(cls, result: PolicyResult) -> Require:
        return cls(result.policy, result.passed, result.reason)

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "passed": self.passed, "reason": self.reason}

    @classmethod
    def from_json(cls, f: Fields | None) -> Require | None:
        return cls(f.str("policy"), f.bool("passed"), f.str("reason")) if f is not None else None


# ---------------------------------------------------------------- one comparison

DELTA_KEYS = ("n", "missing", "mean", "sd", "ci", "significant", "wins", "ties", "losses", "sign_p", "t_p", "d_z", "g_z", "mde")


class Delta(msgspec.Struct, frozen=True, gc=False):
    """The paired change of the composite or of a layer."""

    n: int
    mean: Number | None
    ci: Bounds | None
    significant: bool
    wins: int
    ties: int
    losses: int
    d_z: Number | None
    mde: Number | None
    missing: int = 0  # samples both arms ran that this measure leaves out
    sd: Number | None = None
    sign_p: Number | None = None  # the sign test of wins against losses
    t_p: Number | None = None  # the paired t-test
    g_z: Number | None = None
    absent: frozenset[str] = NO_KEYS

    @property
    def ci_low(self) -> Number | None:
        return self.ci.low if self.ci is not None else None

    @property
    def ci_high(self) -> Number | None:
        return self.ci.high if self.ci is not None else None

    @property
    def has_ci(self) -> bool:
        return self.ci is not None

    @classmethod
    def of(cls, d: DeltaStats) -> Delta:
        return cls(
            d.n, _r(d.mean), _bounds(d.ci), d.significant, d.wins, d.ties, d.losses, _r(d.d_z), _r(d.mde),
            d.missing, _r(d.sd), d.sign_p, d.t_p, _r(d.g_z),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return _present({
            "n": self.n, "missing": self.missing, "mean": self.mean, "sd": self.sd, "ci": _bounds_json(self.ci),
            "significant": self.significant, "wins": self.wins, "ties": self.ties, "losses": self.losses,
            "sign_p": self.sign_p, "t_p": self.t_p, "d_z": self.d_z, "g_z": self.g_z, "mde": self.mde,
        }, self.absent)  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields | None) -> Delta | None:
        if f is None:
            return None
        return cls(
            f.int("n"), f.num("mean"), _typed(Bounds, f.obj("ci")), f.bool("significant"), f.int("wins"), f.int("ties"),
            f.int("losses"), f.num("d_z"), f.num("mde"), f.int("missing"), f.num("sd"), f.num("sign_p"), f.num("t_p"),
            f.num("g_z"), _absent(f, DELTA_KEYS),
        )  # fmt: skip


PASS_RATE_KEYS = ("n", "control_passed", "treatment_passed", "control_rate", "treatment_rate", "change", "lost", "gained", "p_value")


class PassRate(msgspec.Struct, frozen=True, gc=False):
    control_rate: Number | None = None
    treatment_rate: Number | None = None
    change: Number | None = None
    gained: int = 0
    lost: int = 0
    p_value: Number | None = None
    n: int = 0  # the samples both arms ran
    control_passed: int = 0
    treatment_passed: int = 0
    absent: frozenset[str] = NO_KEYS

    @classmethod
    def of(cls, p: PassRateChange) -> PassRate:
        return cls(
            _r(p.control_rate), _r(p.treatment_rate), _r(p.change), p.gained, p.lost, p.p_value, p.n, p.control_passed, p.treatment_passed
        )

    def to_json(self) -> dict[str, Any]:
        return _present({k: getattr(self, k) for k in PASS_RATE_KEYS}, self.absent)

    @classmethod
    def from_json(cls, f: Fields | None) -> PassRate:
        if f is None:
            return cls()
        return cls(
            f.num("control_rate"), f.num("treatment_rate"), f.num("change"), f.int("gained"), f.int("lost"), f.num("p_value"),
            f.int("n"), f.int("control_passed"), f.int("treatment_passed"), _absent(f, PASS_RATE_KEYS),
        )  # fmt: skip


CHANGE_KEYS = ("n", "control", "treatment", "delta", "relative", "ci", "relative_ci")


class Change(msgspec.Struct, frozen=True, gc=False):
    """A resource's change per sample (cost, latency, tokens): absolute and relative, each with its
    paired bootstrap interval (None in a block written before resources had intervals)."""

    delta: Number | None = None
    relative: Number | None = None
    n: int = 0
    control: Number | None = None
    treatment: Number | None = None
    ci: Bounds | None = None
    relative_ci: Bounds | None = None
    absent: frozenset[str] = NO_KEYS

    @classmethod
    def of(cls, m: MeasureDelta, places: int) -> Change:
        """The change of a resource just measured, rounded to `places` (its relative change to 4)."""
        return cls(
            _r(m.delta, places), _r(m.relative), m.n, _r(m.control_mean, places), _r(m.treatment_mean, places),
            _bounds(m.ci, places), _bounds(m.relative_ci),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return _present({
            "n": self.n, "control": self.control, "treatment": self.treatment, "delta": self.delta, "relative": self.relative,
            "ci": _bounds_json(self.ci), "relative_ci": _bounds_json(self.relative_ci),
        }, self.absent)  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields | None) -> Change:
        if f is None:
            return cls()
        return cls(
            f.num("delta"), f.num("relative"), f.int("n"), f.num("control"), f.num("treatment"),
            _typed(Bounds, f.obj("ci")), _typed(Bounds, f.obj("relative_ci")), _absent(f, CHANGE_KEYS),
        )  # fmt: skip


class PerSample(msgspec.Struct, frozen=True, gc=False):
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
    def of(cls, s: SampleDelta) -> PerSample:
        return cls(
            s.sample_id, _r(s.control), _r(s.treatment), _r(s.delta), s.control_passed, s.treatment_passed, s.control_errored, s.treatment_errored
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id, "control": self.control, "treatment": self.treatment, "delta": self.delta,
            "control_passed": self.control_passed, "treatment_passed": self.treatment_passed,
            "control_errored": self.control_errored, "treatment_errored": self.treatment_errored,
        }  # fmt: skip

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


def _regression(f: Fields) -> Regression:
    return Regression(f.str("sample_id", ""), f.num("delta"), f.strs("reasons"))


COMPARISON_KEYS = (
    "control", "treatment", "samples", "only_control", "only_treatment", "errored", "composite", "layers", "pass_rate",
    "cost_usd", "latency_ms", "tokens", "spread", "regressions", "per_sample",
)  # fmt: skip


class Comparison(msgspec.Struct, frozen=True, gc=False):
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
    only_control: tuple[str, ...]  # the samples that ran on the control only
    only_treatment: tuple[str, ...]
    spread_exceeded: bool | None
    regressions: tuple[Regression, ...]
    per_sample: tuple[PerSample, ...]
    spread_control: Number | None = None  # each arm's run-to-run spread (with repeats)
    spread_treatment: Number | None = None
    absent: frozenset[str] = NO_KEYS

    @classmethod
    def of(cls, c: PairedComparison) -> Comparison:
        """The comparison just computed (`omk.stats.PairedComparison`), rounded as written."""
        layers = tuple((k, Delta.of(c.layers[k])) for k in LAYER_NAMES if k in c.layers)
        regressions = tuple(Regression(r.sample_id, _r(r.delta), tuple(r.reasons)) for r in c.regressions)
        return cls(
            c.control, c.treatment, c.samples, Delta.of(c.composite), layers, PassRate.of(c.pass_rate),
            Change.of(c.cost_usd, 6), Change.of(c.latency_ms, 1), Change.of(c.tokens, 1),
            c.errored_either, c.errored_control, c.errored_treatment, tuple(c.only_control), tuple(c.only_treatment),
            c.spread.exceeded, regressions, tuple(PerSample.of(s) for s in c.per_sample),
            _r(c.spread.control), _r(c.spread.treatment),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return _present({
            "control": self.control, "treatment": self.treatment, "samples": self.samples,
            "only_control": list(self.only_control), "only_treatment": list(self.only_treatment),
            "errored": {"control": self.errored_control, "treatment": self.errored_treatment, "either": self.errored_either},
            "composite": self.composite.to_json() if self.composite is not None else None,
            "layers": {k: d.to_json() for k, d in self.layers},
            "pass_rate": self.pass_rate.to_json(),
            "cost_usd": self.cost_usd.to_json(), "latency_ms": self.latency_ms.to_json(), "tokens": self.tokens.to_json(),
            "spread": {"control": self.spread_control, "treatment": self.spread_treatment, "exceeded": self.spread_exceeded},
            "regressions": [r.to_json() for r in self.regressions],
            "per_sample": [s.to_json() for s in self.per_sample],
        }, self.absent)  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields) -> Comparison:
        layers = f.obj("layers") or Fields({}, f.origin)
        err = f.obj("errored") or Fields({}, f.origin)
        spread = f.obj("spread") or Fields({}, f.origin)
        return cls(
            control=f.str("control"),
            treatment=f.str("treatment"),
            samples=f.int("samples"),
            composite=Delta.from_json(f.obj("composite")),
            layers=tuple((k, d) for k in LAYER_NAMES if (d := Delta.from_json(layers.obj(k))) is not None),
            pass_rate=PassRate.from_json(f.obj("pass_rate")),
            cost_usd=Change.from_json(f.obj("cost_usd")),
            latency_ms=Change.from_json(f.obj("latency_ms")),
            tokens=Change.from_json(f.obj("tokens")),
            errored_either=err.int("either"),
            errored_control=err.int("control"),
            errored_treatment=err.int("treatment"),
            only_control=f.strs("only_control"),
            only_treatment=f.strs("only_treatment"),
            spread_exceeded=spread.bool("exceeded", None),
            regressions=tuple(_regression(r) for r in f.objs("regressions")),
            per_sample=tuple(PerSample.from_json(s) for s in f.objs("per_sample")),
            spread_control=spread.num("control"),
            spread_treatment=spread.num("treatment"),
            absent=_absent(f, COMPARISON_KEYS),
        )


# ---------------------------------------------------------------- every variant's results


class Case(msgspec.Struct, frozen=True, gc=False):
    """One result of one variant (`runs[name].results[]`): why it failed in `messages`."""

    sample_id: str | None
    repeat: int
    status: str | None
    passed: bool
    composite: Number | None
    duration_ms: Number | None
    messages: tuple[str, ...]
    cached: bool = False  # its answer came from the response cache (written only when true)

    def to_json(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id, "repeat": self.repeat, "status": self.status, "passed": self.passed,
            "composite": self.composite, "duration_ms": self.duration_ms, "messages": list(self.messages),
            **({"cached": True} if self.cached else {}),
        }  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields) -> Case:
        return cls(
            f.str("sample_id"), f.int("repeat"), f.str("status"), f.bool("passed"), f.num("composite"),
            f.num("duration_ms"), tuple(str(m) for m in f.list("messages")), bool(f.bool("cached")),
        )  # fmt: skip


class Run(msgspec.Struct, frozen=True, gc=False):
    """A variant's run: its folder (relative to the report), its target, its results. `variant`
    (the variant's own choices) and `described` (its target) are kept as written: what they hold
    depends on the variant and the kind of target."""

    report: str | None
    target: RunTarget
    results: tuple[Case, ...] | None  # None in a block written before the results were added
    variant: Mapping[str, Any] | None = None
    described: Mapping[str, Any] | None = None
    absent: frozenset[str] = NO_KEYS  # of "variant", "report", "target"

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"variant": self.variant, "report": self.report, "target": self.described}
        if self.results is not None:
            found["results"] = [c.to_json() for c in self.results]
        return _present(found, self.absent)

    @classmethod
    def from_json(cls, f: Fields) -> Run:
        results = tuple(Case.from_json(r) for r in f.objs("results")) if isinstance(f.data.get("results"), list) else None
        variant, described = f.obj("variant"), f.obj("target")
        return cls(
            f.str("report"), RunTarget.read(described.data, described.origin, described.path) if described is not None else RunTarget(), results,
            variant.data if variant is not None else None, described.data if described is not None else None,
            _absent(f, ("variant", "report", "target")),
        )  # fmt: skip


SETTINGS_KEYS = (
    "alpha", "trivial", "threshold", "tie", "resamples", "seed", "method", "power", "min_samples", "max_error_rate", "max_cost_increase",
)  # fmt: skip


class ComparisonSettings(msgspec.Struct, frozen=True, gc=False):
    """How the comparisons were computed (omk.stats.AnalysisSettings as written): bootstrap
    resamples, seed, the trivial change, the largest cost increase allowed (percent; None when not
    set), and the rest of the analysis' knobs."""

    resamples: int | None = None
    seed: int | str | None = None
    trivial: Number | None = None
    max_cost_increase: Number | None = None
    alpha: Number | None = None
    threshold: Number | None = None
    tie: Number | None = None
    method: str | None = None
    power: Number | None = None
    min_samples: int | None = None
    max_error_rate: Number | None = None
    absent: frozenset[str] = NO_KEYS

    @classmethod
    def of(cls, settings: AnalysisSettings) -> ComparisonSettings:
        """The settings of an analysis (`omk.stats.AnalysisSettings`)."""
        return cls(**msgspec.structs.asdict(settings))

    def to_json(self) -> dict[str, Any]:
        return _present({k: getattr(self, k) for k in SETTINGS_KEYS}, self.absent)

    @classmethod
    def from_json(cls, f: Fields | None) -> ComparisonSettings:
        if f is None:
            return cls(absent=frozenset(SETTINGS_KEYS))
        return cls(
            f.int("resamples", None), _seed(f), f.num("trivial"), f.num("max_cost_increase"), f.num("alpha"), f.num("threshold"),
            f.num("tie"), f.str("method"), f.num("power"), f.int("min_samples", None), f.num("max_error_rate"), _absent(f, SETTINGS_KEYS),
        )  # fmt: skip


def _seed(f: Fields) -> int | str | None:
    value = f.raw("seed")
    if value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise f.fail("seed", "an integer, a string or null")


# ---------------------------------------------------------------- the pairwise judge


class Vote(msgspec.Struct, frozen=True, gc=False):
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


class PairwiseOrder(msgspec.Struct, frozen=True, gc=False):
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


class PairwiseVerdict(msgspec.Struct, frozen=True, gc=False):
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


class WinRateRow(msgspec.Struct, frozen=True, gc=False):
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
        """The row of a win rate just computed (`omk.stats.pairwise_rate.WinRate`), rounded as written."""
        compared = rate.decisive + rate.ties
        ci = rate.ci
        return cls(
            rate.key, _r(rate.rate), rate.decisive, ci.level if ci else None, round(ci.low, 4) if ci else None,
            round(ci.high, 4) if ci else None, rate.p_value, rate.ties, rate.a_better, rate.b_better,
            round(rate.ties / compared, 4) if compared else None, ci.method if ci else None,
        )  # fmt: skip

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


class Tally(msgspec.Struct, frozen=True, gc=False):
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


class Pair(msgspec.Struct, frozen=True, gc=False):
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


class PairwiseBlock(msgspec.Struct, frozen=True, gc=False):
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
    def read(cls, data: Mapping[str, Any], origin: str = "pairwise", at: str = "") -> PairwiseBlock:
        """The block in `data`, found at `at` of `origin`."""
        return cls.from_json(Fields.of(data, origin, at))

    @classmethod
    def of_report(cls, data: Mapping[str, Any], origin: str) -> PairwiseBlock | None:
        """A report's `experiment.pairwise` block (`data`, the report read from `origin`); None
        when it has none."""
        experiment = Fields.of(data, origin, "").obj("experiment")
        block = experiment.obj("pairwise") if experiment is not None else None
        return cls.from_json(block) if block is not None else None


def pairs_of(block: Fields | None) -> tuple[Pair, ...]:
    """The comparisons of an `experiment.pairwise` block, each with the block's judge."""
    if block is None:
        return ()
    judge = block.raw("judge")
    return tuple(Pair.from_json(p, judge) for p in block.objs("pairs"))


def report_blocks(data: Mapping[str, Any], origin: str) -> tuple[ExperimentBlock | None, tuple[Pair, ...]]:
    """A report's experiment block and every comparison of the pairwise judge (`data`, the whole
    report read from `origin`)."""
    report = Fields(data, origin)
    return ExperimentBlock.from_json(report.obj("experiment")), report_pairs(report)


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


class AblationPart(msgspec.Struct, frozen=True, gc=False):
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


class Ablation(msgspec.Struct, frozen=True, gc=False):
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

FORMAT = "omk-experiment/1"
SCHEDULE = "sample-major, variants shuffled per sample"
BLOCK_KEYS = (
    "format", "control", "settings", "variants", "comparisons", "verdict", "seed", "schedule", "runs", "require",
    "pairwise", "triggering", "ablation",
)  # fmt: skip


class ExperimentBlock(msgspec.Struct, frozen=True, gc=False):
    control: str | None
    settings: ComparisonSettings
    variants: tuple[VariantRow, ...]
    comparisons: tuple[Comparison, ...]
    verdict: Verdict
    require: Require | None
    runs: Mapping[str, Run]
    pairwise: PairwiseBlock | None = None  # the pairwise judge's block
    seed: int | str | None = None
    triggering: tuple[TriggerChange, ...] = ()  # the paired change of each skill's trigger rates
    ablation: Ablation | None = None  # `--ablate`: each part of the skill ranked by its contribution
    format: str | None = FORMAT
    schedule: str | None = None  # the order the variants ran in
    absent: frozenset[str] = NO_KEYS  # keys a block written by an older omk lacks

    @property
    def pairs(self) -> tuple[Pair, ...]:
        """The pairwise judge's comparisons (`pairwise.pairs`)."""
        return self.pairwise.pairs if self.pairwise is not None else ()

    @classmethod
    def of(
        cls,
        analysis: ExperimentAnalysis,
        runs: Mapping[str, Run] | None = None,
        *,
        seed: int | str | None = None,
        require: Require | None = None,
        pairwise: PairwiseBlock | None = None,
        triggering: Sequence[TriggerChange] = (),
        ablation: Ablation | None = None,
    ) -> ExperimentBlock:
        """The block of an analysis just made (`omk.stats.analyze`); with `runs` (each variant's
        run), as an experiment writes it, with its seed and schedule and the parts it adds."""
        given = {"require": require, "pairwise": pairwise, "triggering": triggering, "ablation": ablation}
        absent = {k for k, v in given.items() if not v} | ({"seed", "schedule", "runs"} if runs is None else set())
        return cls(
            control=analysis.control,
            settings=ComparisonSettings.of(analysis.settings),
            variants=tuple(VariantRow.of(v) for v in analysis.variants),
            comparisons=tuple(Comparison.of(c) for c in analysis.comparisons),
            verdict=analysis.verdict,
            require=require,
            runs=runs or {},
            pairwise=pairwise,
            seed=seed,
            triggering=tuple(triggering),
            ablation=ablation,
            schedule=SCHEDULE if runs is not None else None,
            absent=frozenset(absent),
        )

    def to_json(self) -> dict[str, Any]:
        return _present({
            "format": self.format, "control": self.control, "settings": self.settings.to_json(),
            "variants": [v.to_json() for v in self.variants], "comparisons": [c.to_json() for c in self.comparisons],
            "verdict": self.verdict.to_json(), "seed": self.seed, "schedule": self.schedule,
            "runs": {name: run.to_json() for name, run in self.runs.items()},
            "require": self.require.to_json() if self.require is not None else None,
            "pairwise": self.pairwise.to_json() if self.pairwise is not None else None,
            "triggering": [t.to_json() for t in self.triggering],
            "ablation": self.ablation.to_json() if self.ablation is not None else None,
        }, self.absent)  # fmt: skip

    @classmethod
    def read(cls, data: Mapping[str, Any], origin: str = "experiment") -> ExperimentBlock:
        """A block read from a file (or built in this process) as a record."""
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
        return cls(
            control=f.str("control"),
            settings=ComparisonSettings.from_json(f.obj("settings")),
            variants=tuple(VariantRow.from_json(v) for v in f.objs("variants")),
            comparisons=tuple(Comparison.from_json(c) for c in f.objs("comparisons")),
            verdict=verdict_from_json(verdict),
            require=Require.from_json(f.obj("require")),
            runs=_runs(f.obj("runs")),
            pairwise=PairwiseBlock.from_json(block) if (block := f.obj("pairwise")) is not None else None,
            seed=_seed(f),
            triggering=tuple(convert(t.data, TriggerChange, t.origin, t.path, HINT, nulls=True) for t in f.objs("triggering")),
            ablation=Ablation.from_json(f.obj("ablation")),
            format=f.str("format"),
            schedule=f.str("schedule"),
            absent=_absent(f, BLOCK_KEYS),
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
        if run is not None:
            runs[str(name)] = Run.from_json(run)
    return runs


def _nums(f: Fields, key: str) -> list[Number]:
    values = f.list(key)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise Fields.error(f.origin, f"{f.at(key)}[{i}]", "a number", v)
    return values
