"""A treatment against the control, sample by sample (the measures are defined in `stats`).

Every bootstrap uses the settings' seed whatever the pair and the measure, so the same settings
give the same intervals on any machine, and swapping the two arms gives exactly the negated
interval. Which positions a resample picks depends only on the seed and the number of
differences, so measures with as many differences (the composite and the layers every sample
has) share one set of random draws: the same intervals as computed one by one, at a fraction of
the cost.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from omk.stats.bootstrap import Interval, bootstrap_mean_cis, effective_resamples
from omk.stats.data import LAYERS, AnalysisSettings, SampleOutcome, within_sample_sd
from omk.stats.paired import (
    DeltaStats,
    MeasureDelta,
    PassRateChange,
    Regression,
    SampleDelta,
    Spread,
    delta_stats,
    measure_delta,
    pass_rate_change,
)


class PairedComparison(msgspec.Struct, frozen=True, gc=False):
    control: str
    treatment: str
    samples: int  # samples both arms ran
    only_control: tuple[str, ...]  # ran on the control only: left out of every measure
    only_treatment: tuple[str, ...]
    errored_control: int  # of the shared samples, errored (every repeat) on the control
    errored_treatment: int
    errored_either: int
    composite: DeltaStats
    layers: Mapping[str, DeltaStats]  # the layers either arm has
    pass_rate: PassRateChange
    cost_usd: MeasureDelta
    latency_ms: MeasureDelta
    tokens: MeasureDelta  # input + output per sample
    spread: Spread
    regressions: tuple[Regression, ...]
    per_sample: tuple[SampleDelta, ...]

    @property
    def error_rate(self) -> float:
        return self.errored_either / self.samples if self.samples else 0.0

def _measures(
    pairs: list[tuple[SampleOutcome, SampleOutcome]], per_sample: list[SampleDelta], settings: AnalysisSettings
) -> dict[str, DeltaStats]:
    """The composite's differences, then each layer either side has; the bootstraps of measures
    with the same number of differences run together."""
    columns = {"composite": [d for s in per_sample if (d := s.delta) is not None]}
    for layer in LAYERS:
        if any(layer in c.layers or layer in t.layers for c, t in pairs):
            columns[layer] = [t.layers[layer] - c.layers[layer] for c, t in pairs if layer in c.layers and layer in t.layers]
    by_length: dict[int, list[str]] = {}
    for name, deltas in columns.items():
        by_length.setdefault(len(deltas), []).append(name)
    intervals: dict[str, Interval | None] = {}
    for length, names in by_length.items():
        cis = bootstrap_mean_cis(
            [columns[name] for name in names],
            level=1.0 - settings.alpha,
            resamples=effective_resamples(settings.resamples, length),
            seed=settings.seed,
            method=settings.method,
        )
        intervals.update(zip(names, cis, strict=True))
    return {
        name: delta_stats(deltas, len(pairs) - len(deltas), settings, intervals[name])
        for name, deltas in columns.items()
    }


def _sample_delta(c: SampleOutcome, t: SampleOutcome) -> SampleDelta:
    return SampleDelta(
        sample_id=c.sample_id,
        control=None if c.errored else c.composite,
        treatment=None if t.errored else t.composite,
        control_passed=c.passed,
        treatment_passed=t.passed,
        control_errored=c.errored,
        treatment_errored=t.errored,
    )


def _regressions(per_sample: list[SampleDelta], trivial: float) -> tuple[Regression, ...]:
    found = [Regression(s.sample_id, s.delta, tuple(r)) for s in per_sample if (r := s.regression_reasons(trivial))]
    found.sort(key=lambda r: (r.delta is None, r.delta if r.delta is not None else 0.0))
    return tuple(found)


def compare(
    control: str,
    control_outcomes: Mapping[str, SampleOutcome],
    treatment: str,
    treatment_outcomes: Mapping[str, SampleOutcome],
    settings: AnalysisSettings,
) -> PairedComparison:
    """Compare two variants' folded samples (`data.fold_variant`), treatment − control."""
    shared = [sid for sid in control_outcomes if sid in treatment_outcomes]
    pairs = [(control_outcomes[sid], treatment_outcomes[sid]) for sid in shared]
    per_sample = [_sample_delta(c, t) for c, t in pairs]
    measures = _measures(pairs, per_sample, settings)
    composite = measures.pop("composite")
    spread_c = within_sample_sd([c for c, _ in pairs])
    spread_t = within_sample_sd([t for _, t in pairs])
    spreads = [s for s in (spread_c, spread_t) if s is not None]
    exceeded = abs(composite.mean) > max(spreads) if spreads and composite.mean is not None else None
    return PairedComparison(
        control=control,
        treatment=treatment,
        samples=len(pairs),
        only_control=tuple(sid for sid in control_outcomes if sid not in treatment_outcomes),
        only_treatment=tuple(sid for sid in treatment_outcomes if sid not in control_outcomes),
        errored_control=sum(1 for c, _ in pairs if c.errored),
        errored_treatment=sum(1 for _, t in pairs if t.errored),
        errored_either=sum(1 for c, t in pairs if c.errored or t.errored),
        composite=composite,
        layers=measures,
        pass_rate=pass_rate_change(pairs),
        cost_usd=measure_delta([(c.cost_usd, t.cost_usd) for c, t in pairs], settings),
        latency_ms=measure_delta([(c.latency_ms, t.latency_ms) for c, t in pairs], settings),
        tokens=measure_delta([(c.tokens, t.tokens) for c, t in pairs], settings),
        spread=Spread(spread_c, spread_t, exceeded),
        regressions=_regressions(per_sample, settings.trivial),
        per_sample=tuple(per_sample),
    )
