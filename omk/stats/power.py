"""How many samples and repeats a difference needs: `omk power RUN_DIR [--effect D]`.

A comparison of two variants is a paired t-test on the per-sample differences of the composite
(omk/stats/paired.py). With repeats, each sample's score is the mean of its repeats, so the
spread of the differences has two parts:

- between samples (σ_b): some samples gain more than others from the change, whatever the runs;
- run to run (σ_w): the same sample scores differently each time it runs (the agent, and the
  judge's own noise with it).

The sd of one sample's difference with r repeats per arm is √(σ_b² + W / r), where W is the sum
of both arms' run-to-run variances. More repeats shrink only the second part; more samples shrink
both. The parts are estimated as in a one-way random-effects analysis: W from the variance within
each sample's repeats (pooled over samples), σ_b² as the variance of the per-sample differences
less W / r (never below 0). Without repeats the two cannot be told apart and the whole spread is
treated as between samples.

A single run (no experiment) has no differences yet. Its figures are for a future comparison of
a variant against it on the same samples, assuming the change varies across samples as much as
the scores do (σ_b: the sd of the sample means, an upper bound: a paired change usually varies
less) and that each arm has this run's run-to-run noise (W = 2 σ_w²).

The minimum detectable effect and the samples needed are those of omk/stats/paired.py (level α
two-sided, the given power; the usual approximation to the noncentral-t power).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean, variance
from typing import Any

import msgspec

from omk.stats.paired import NO_SPREAD, min_detectable_effect, no_spread, samples_needed

REPEAT_CHOICES = (1, 2, 3, 5, 10)


class SpreadParts(msgspec.Struct, frozen=True, gc=False):
    """The spread of per-sample differences, split (see the module)."""

    samples: int  # samples with a difference
    repeats: int  # repeats per sample in the run (the most common count)
    between_var: float  # σ_b²
    within_var: float | None  # W, both arms together; None: no sample had two repeats

    def sd(self, repeats: int) -> float:
        return math.sqrt(self.between_var + (self.within_var or 0.0) / repeats)


class PowerFigures(msgspec.Struct, frozen=True, gc=False):
    """One comparison's power figures (or a single run's, `control` None)."""

    treatment: str
    control: str | None
    parts: SpreadParts
    effect: float
    alpha: float
    power: float

    @property
    def detectable(self) -> float | None:
        """The smallest difference this run (its samples and repeats) finds with the given power."""
        return min_detectable_effect(self.parts.sd(self.parts.repeats), self.parts.samples, self.alpha, self.power)

    def needed(self) -> dict[int, int | None]:
        """Samples needed for `effect`, per repeat count (None: nothing varies, `no_spread`)."""
        found: dict[int, int | None] = {}
        for r in sorted({*REPEAT_CHOICES, self.parts.repeats}):
            found[r] = samples_needed(self.parts.sd(r), self.effect, self.alpha, self.power)
        return found

    @property
    def note(self) -> str | None:
        """The wording of a run whose scores do not vary: no size or count to give."""
        return NO_SPREAD if no_spread(self.parts.sd(self.parts.repeats)) else None

    def to_json(self) -> dict[str, Any]:
        p = self.parts
        return {
            "treatment": self.treatment,
            "control": self.control,
            "samples": p.samples,
            "repeats": p.repeats,
            "between_sd": round(math.sqrt(p.between_var), 4),
            "run_to_run_sd": round(math.sqrt(p.within_var), 4) if p.within_var is not None else None,
            "effect": self.effect,
            "alpha": self.alpha,
            "power": self.power,
            "detectable": round(d, 4) if (d := self.detectable) is not None else None,
            "samples_needed": [{"repeats": r, "samples": n} for r, n in self.needed().items()],
            "note": self.note,
        }


def _within(runs: Mapping[str, Sequence[float]]) -> tuple[float | None, float]:
    """(pooled variance within samples' repeats, harmonic mean of the repeat counts)."""
    pooled = [(len(v) - 1, variance(v)) for v in runs.values() if len(v) >= 2]
    counts = [len(v) for v in runs.values() if v]
    harmonic = len(counts) / sum(1 / c for c in counts) if counts else 1.0
    dof = sum(d for d, _ in pooled)
    return (sum(d * v for d, v in pooled) / dof if dof else None), harmonic


def _typical(runs: Mapping[str, Sequence[float]]) -> int:
    counts = [len(v) for v in runs.values() if v]
    return max(set(counts), key=counts.count) if counts else 1


def paired_parts(treatment: Mapping[str, Sequence[float]], control: Mapping[str, Sequence[float]]) -> SpreadParts | None:
    """The split spread of treatment − control over the samples both arms scored (None: fewer than 2)."""
    both = [s for s in control if treatment.get(s) and control.get(s)]
    if len(both) < 2:
        return None
    diffs = [fmean(treatment[s]) - fmean(control[s]) for s in both]
    w_t, r_t = _within({s: treatment[s] for s in both})
    w_c, r_c = _within({s: control[s] for s in both})
    within = None if w_t is None and w_c is None else (w_t or 0.0) + (w_c or 0.0)
    reps = (r_t + r_c) / 2
    between = max(0.0, variance(diffs) - (within or 0.0) / reps)
    return SpreadParts(len(both), _typical({s: control[s] for s in both}), between, within)


def single_parts(runs: Mapping[str, Sequence[float]]) -> SpreadParts | None:
    """A single run's spread, as a future paired comparison against it would see it (see the module)."""
    scored = {s: v for s, v in runs.items() if v}
    if len(scored) < 2:
        return None
    w, reps = _within(scored)
    between = max(0.0, variance([fmean(v) for v in scored.values()]) - (w or 0.0) / reps)
    return SpreadParts(len(scored), _typical(scored), between, 2 * w if w is not None else None)
