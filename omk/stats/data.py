"""What an experiment is computed from: per variant, each sample's per-repeat records.

The engine turns each sample result into a `Record` (one per repeat) and each variant into a
`VariantRun`. Nothing here knows about targets, judges or files.

Repeats of a sample are folded into one `SampleOutcome` before any comparison:

- scores (composite and each layer) are the mean over the repeats that ran (`status: ok`) and
  have that score; a layer no ok repeat has is absent;
- the sample passes when more than half of its repeats passed; an errored repeat counts as a
  failure, as an errored sample fails the run's gate;
- the sample is *errored* only when every repeat errored: it then has no score, and it is left
  out of the score comparisons (and counted), but it still counts as a failure in pass rates;
- cost, latency and tokens (input + output) are the mean over the repeats that report them
  (errored ones included: a failed call may still have cost money).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean, stdev
from typing import Literal

import msgspec

from omk.stats.bootstrap import METHODS, Method

LAYERS: tuple[str, ...] = ("fact", "behavior", "judge")
Role = Literal["control", "treatment"]


class Record(msgspec.Struct, frozen=True, gc=False):
    """One run of one sample on one variant (one repeat)."""

    status: Literal["ok", "error"] = "ok"
    composite: float | None = None  # None: not graded (no layer)
    layers: Mapping[str, float | None] = msgspec.field(default_factory=dict)  # fact / behavior / judge
    passed: bool = False
    cost_usd: float | None = None
    latency_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class VariantRun(msgspec.Struct, frozen=True, gc=False):
    """One variant's results: sample id → its records, one per repeat."""

    name: str
    samples: Mapping[str, Sequence[Record]]
    role: Role = "treatment"


class AnalysisSettings(msgspec.Struct, frozen=True, gc=False):
    """Every knob of the analysis, with the defaults the report states.

    `trivial` is the smallest composite difference worth acting on (1–5 scale, the original's
    default 0.1); `threshold` is the layer gate (3.5); `tie` the largest |difference| that still
    counts as a tie (half the scores' 0.01 rounding step, so equal scores tie).
    """

    alpha: float = 0.05
    trivial: float = 0.1
    threshold: float = 3.5
    tie: float = 0.005
    resamples: int = 10_000
    seed: int = 0
    method: Method = "expanded"
    power: float = 0.8
    min_samples: int = 20
    max_error_rate: float = 0.2
    max_cost_increase: float | None = None  # percent: a treatment whose cost per sample rises more is CAUTIOUS

    def __post_init__(self) -> None:
        checks = {
            "alpha": 0.0 < self.alpha < 1.0,
            "power": 0.0 < self.power < 1.0,
            "trivial": self.trivial >= 0.0,
            "tie": self.tie >= 0.0,
            "resamples": self.resamples >= 100,
            "min_samples": self.min_samples >= 2,
            "max_error_rate": 0.0 <= self.max_error_rate <= 1.0,
            "method": self.method in METHODS,
            "max_cost_increase": self.max_cost_increase is None or 0.0 <= self.max_cost_increase < math.inf,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"experiment setting {name}={getattr(self, name)!r} is out of range")


class SampleOutcome(msgspec.Struct, frozen=True, gc=False):
    """One sample on one variant, its repeats folded (see the module text)."""

    sample_id: str
    repeats: int
    errors: int  # errored repeats
    passes: int  # passed repeats
    composite: float | None
    layers: Mapping[str, float]  # present layers only
    cost_usd: float | None
    latency_ms: float | None
    composites: tuple[float, ...]  # the ok repeats' composites, in order (run-to-run spread)
    tokens: float | None = None  # input + output tokens

    @property
    def errored(self) -> bool:
        return self.errors == self.repeats

    @property
    def passed(self) -> bool:
        return 2 * self.passes > self.repeats


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def _finite(value: float | None, what: str, sample_id: str) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError(f"sample {sample_id!r}: {what} is not a finite number ({value!r})")
    return value


def fold(sample_id: str, records: Sequence[Record]) -> SampleOutcome:
    """Fold a sample's repeats into one outcome."""
    if not records:
        raise ValueError(f"sample {sample_id!r} has no record")
    ok = [r for r in records if r.status == "ok"]
    composites = tuple(
        c for r in ok if (c := _finite(r.composite, "composite", sample_id)) is not None
    )
    layers: dict[str, float] = {}
    for layer in LAYERS:
        value = _mean([_finite(r.layers.get(layer), layer, sample_id) for r in ok])
        if value is not None:
            layers[layer] = value
    return SampleOutcome(
        sample_id=sample_id,
        repeats=len(records),
        errors=len(records) - len(ok),
        passes=sum(1 for r in ok if r.passed),
        composite=fmean(composites) if composites else None,
        layers=layers,
        cost_usd=_mean([r.cost_usd for r in records]),
        latency_ms=_mean([r.latency_ms for r in records]),
        composites=composites,
        tokens=_mean([_tokens(r) for r in records]),
    )


def _tokens(record: Record) -> float | None:
    """Input + output tokens; what is known when only one is (None when neither is)."""
    known = [v for v in (record.input_tokens, record.output_tokens) if v is not None]
    return float(sum(known)) if known else None


def fold_variant(run: VariantRun) -> dict[str, SampleOutcome]:
    return {sid: fold(sid, records) for sid, records in run.samples.items() if records}


def within_sample_sd(outcomes: Sequence[SampleOutcome]) -> float | None:
    """Run-to-run spread: the pooled sd of a sample's composite over its repeats.

    The square root of the mean within-sample variance (n − 1 denominator) over the samples with
    at least two scored repeats; None when no sample has two.
    """
    variances = [stdev(o.composites) ** 2 for o in outcomes if len(o.composites) >= 2]
    return math.sqrt(fmean(variances)) if variances else None
