"""One variant on its own: the usual run summary, plus its run-to-run stability with repeats.

Layer and composite means are over the samples that have them (an errored sample has none).
The layer gate is the original's: every layer present in the variant's means must reach the
threshold, and a variant with no layer at all fails it (nothing was checked). With repeats,
`run_means` are the variant's mean composite per repeat (repeat 1 of every sample, then repeat
2, …) and `run_cv` is their coefficient of variation (sd / mean), the original's stability
figure; `spread` is the typical change of one sample's composite from one repeat to the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean, stdev
from typing import Any

import msgspec

from omk.stats.bootstrap import Draws, Interval, score_interval
from omk.stats.data import LAYERS, AnalysisSettings, Role, SampleOutcome, VariantRun, within_sample_sd
from omk.stats.paired import EPS
from omk.stats.winrate import Proportion, wilson_interval


class VariantSummary(msgspec.Struct, frozen=True, gc=False):
    name: str
    role: Role
    samples: int
    errored: int  # samples whose every repeat errored
    errored_runs: int  # errored repeats, all samples
    repeats: int  # the most repeats any sample has
    passed: int
    scores: Mapping[str, float | None]  # fact / behavior / judge / composite means
    gate_failures: tuple[str, ...]  # layers below the threshold; ("none",) when no layer at all
    cost_usd: float | None  # total over every record that reports one
    latency_ms: float | None  # mean per sample
    input_tokens: int | None
    output_tokens: int | None
    run_means: tuple[float, ...]
    spread: float | None
    scores_ci: Mapping[str, Interval | None] = msgspec.field(default_factory=dict)  # per layer and composite
    pass_rate_ci: Proportion | None = None  # Wilson, over the samples

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.samples if self.samples else None

    @property
    def gate_passed(self) -> bool:
        return not self.gate_failures

    @property
    def run_cv(self) -> float | None:
        if len(self.run_means) < 2 or not fmean(self.run_means):
            return None
        return stdev(self.run_means) / fmean(self.run_means)

def _intervals(
    scored: list[SampleOutcome], passed: int, samples: int, draws: Draws
) -> tuple[dict[str, Interval | None], Proportion | None]:
    """Each mean score's interval over the samples (omk.stats.bootstrap.score_interval) and the
    pass rate's Wilson interval; None below 2 samples."""
    cis = {layer: score_interval([o.layers[layer] for o in scored if layer in o.layers], draws=draws) for layer in LAYERS}
    cis["composite"] = score_interval([o.composite for o in scored if o.composite is not None], draws=draws)
    return cis, wilson_interval(passed, samples) if samples >= 2 else None


def _sum(values: list[float | int | None]) -> Any:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _run_means(run: VariantRun) -> tuple[float, ...]:
    depth = max((len(rs) for rs in run.samples.values()), default=0)
    means = []
    for i in range(depth):
        scores = [
            composite
            for rs in run.samples.values()
            if len(rs) > i and rs[i].status == "ok" and (composite := rs[i].composite) is not None
        ]
        if scores:
            means.append(fmean(scores))
    return tuple(means) if len(means) >= 2 else ()


def _gate_failures(scores: Mapping[str, float | None], threshold: float) -> tuple[str, ...]:
    present = {k: v for k, v in scores.items() if k in LAYERS and v is not None}
    if not present:
        return ("none",)
    return tuple(k for k, v in present.items() if v < threshold - EPS)


def summarize(
    run: VariantRun, outcomes: Mapping[str, SampleOutcome], settings: AnalysisSettings, draws: Draws | None = None
) -> VariantSummary:
    """The summary of one variant; `outcomes` are its folded samples (`data.fold_variant`). `draws`
    shares the bootstrap's draws with the other variants' figures (omk.stats.bootstrap.Draws)."""
    scored = [o for o in outcomes.values() if not o.errored]
    scores: dict[str, float | None] = {}
    for layer in LAYERS:
        values = [o.layers[layer] for o in scored if layer in o.layers]
        scores[layer] = fmean(values) if values else None
    composites = [o.composite for o in scored if o.composite is not None]
    scores["composite"] = fmean(composites) if composites else None
    records = [r for rs in run.samples.values() for r in rs]
    latencies = [o.latency_ms for o in outcomes.values() if o.latency_ms is not None]
    passed = sum(1 for o in outcomes.values() if o.passed)
    scores_ci, pass_rate_ci = _intervals(scored, passed, len(outcomes), draws or Draws())
    return VariantSummary(
        name=run.name,
        role=run.role,
        samples=len(outcomes),
        errored=sum(1 for o in outcomes.values() if o.errored),
        errored_runs=sum(o.errors for o in outcomes.values()),
        repeats=max((o.repeats for o in outcomes.values()), default=0),
        passed=passed,
        scores=scores,
        gate_failures=_gate_failures(scores, settings.threshold),
        cost_usd=_sum([r.cost_usd for r in records]),
        latency_ms=fmean(latencies) if latencies else None,
        input_tokens=_sum([r.input_tokens for r in records]),
        output_tokens=_sum([r.output_tokens for r in records]),
        run_means=_run_means(run),
        spread=within_sample_sd(list(outcomes.values())),
        scores_ci=scores_ci,
        pass_rate_ci=pass_rate_ci,
    )
