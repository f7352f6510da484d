"""Seeded simulations of the loop at the level of its statistics: what share of runs end in
PROGRESS when the improver's changes have no effect (it must stay at or below α), and how often a
real fix among no-effect changes is found and confirmed (the power).

Each simulated run draws its samples' base scores, splits them as the loop does (omk.evolve.splits),
and plays the loop: every evaluation of a skill on a split is a fresh draw of each sample's
composite (base + the skill's effect on the sample + run-to-run noise, kept within 1–5 and rounded
to 0.01, as composites are); candidates are decided with the loop's acceptance rule
(omk.evolve.acceptance), and when one was accepted the final check runs the experiment analysis
(omk.stats.analyze) on fresh draws of the test split, with the evolve report's gap rule on top.
No target is called: the figures measure the method, not a model.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from statistics import fmean

import msgspec

from omk.evolve.acceptance import compare_scores
from omk.evolve.report import NO_CHANGE, Gap
from omk.evolve.splits import DEFAULT_SHARES, split_ids


class Scenario(msgspec.Struct, frozen=True, gc=False):
    samples: int = 88
    shares: tuple[float, float, float] = DEFAULT_SHARES
    rounds: int = 3
    candidates: int = 3
    alpha: float = 0.05
    trivial: float = 0.1
    spread: float = 0.8  # sd of the samples' base composites around 3
    noise: float = 0.5  # sd of a sample's composite from one run to the next
    fix: float = 0.0  # the real fix's gain on each sample it helps; 0: every change has no effect
    helped: float = 0.5  # the share of samples the fix helps
    resamples: int = 2_000  # of the final check's bootstrap
    corrected: bool = True  # False: each candidate tested at α alone (what the correction prevents)


def _draw(rng: random.Random, base: Sequence[float], effect: Sequence[float], noise: float) -> list[float]:
    return [round(min(5.0, max(1.0, b + e + rng.gauss(0.0, noise))), 2) for b, e in zip(base, effect, strict=True)]


def _final(s: Scenario, rng: random.Random, base: list[float], effect: list[float], seed: int) -> tuple[str, float]:
    from omk.stats import AnalysisSettings, Record, VariantRun, analyze

    def run(name: str, role: str, scores: list[float]) -> VariantRun:
        records = {f"s{i}": [Record(composite=x, layers={"behavior": x}, passed=x >= 3.5)] for i, x in enumerate(scores)}
        return VariantRun(name, records, "control" if role == "control" else "treatment")

    original = _draw(rng, base, [0.0] * len(base), s.noise)
    selected = _draw(rng, base, effect, s.noise)
    settings = AnalysisSettings(alpha=s.alpha, trivial=s.trivial, resamples=s.resamples, seed=seed)
    analysis = analyze([run("original", "control", original), run("selected", "treatment", selected)], settings)
    return str(analysis.verdict.level), fmean(selected) - fmean(original)


def simulate_run(s: Scenario, seed: int) -> str:
    """One run's final level (NO CHANGE when nothing was accepted)."""
    rng = random.Random(f"omk-evolve-sim:{seed}")
    base_all = [3.0 + rng.gauss(0.0, s.spread) for _ in range(s.samples)]
    helped_all = [1.0 if rng.random() < s.helped else 0.0 for _ in range(s.samples)]
    split = split_ids([(str(i), "all") for i in range(s.samples)], s.shares, seed)
    sel = [int(i) for i in split.selection]
    base = [base_all[i] for i in sel]
    best_effect = [0.0] * len(sel)
    original_sel = best_sel = _draw(rng, base, best_effect, s.noise)
    tests, idle, accepted_any = (s.rounds * s.candidates if s.corrected else 1), 0, False
    for round_no in range(1, s.rounds + 1):
        kept: tuple[float, list[float], list[float]] | None = None
        for k in range(1, s.candidates + 1):
            real = s.fix > 0 and round_no == 1 and k == s.candidates and not accepted_any
            effect = [s.fix * helped_all[i] for i in sel] if real else best_effect
            drawn = _draw(rng, base, effect, s.noise)
            decision = compare_scores(best_sel, drawn, alpha=s.alpha, tests=tests, trivial=s.trivial)
            if decision.accepted and (kept is None or (decision.low or 0.0) > kept[0]):
                kept = (decision.low or 0.0, effect, drawn)
        if kept is None:
            idle += 1
            if idle >= 2:
                break
            continue
        idle, accepted_any, best_effect, best_sel = 0, True, kept[1], kept[2]
    if not accepted_any:
        return NO_CHANGE
    test_ids = [int(i) for i in split.test]
    test_effect = [s.fix * helped_all[i] for i in test_ids] if any(best_effect) else [0.0] * len(test_ids)
    level, test_gain = _final(s, rng, [base_all[i] for i in test_ids], test_effect, seed)
    gap = Gap(None, fmean(best_sel) - fmean(original_sel), test_gain, s.trivial)
    return "CAUTIOUS" if level == "PROGRESS" and gap.large else level


def simulate(s: Scenario, runs: int, seed: int = 0) -> Counter[str]:
    """The final levels of `runs` seeded runs."""
    return Counter(simulate_run(s, seed * 1_000_003 + i) for i in range(runs))
