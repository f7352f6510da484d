"""Builders for experiment tests: variants from lists of composites, and synthetic paired data."""

from __future__ import annotations

import random

from omk.stats import AnalysisSettings, Record, VariantRun, analyze


def record(composite: float | None, *, passed: bool | None = None, threshold: float = 3.5, **kw) -> Record:
    """An ok record whose only layer is fact = composite; passes at the threshold unless told."""
    if passed is None:
        passed = composite is not None and composite >= threshold
    layers = kw.pop("layers", {"fact": composite} if composite is not None else {})
    return Record(composite=composite, layers=layers, passed=passed, **kw)


def error() -> Record:
    return Record(status="error")


def variant(name: str, composites: list[float], role: str = "treatment", **kw) -> VariantRun:
    return VariantRun(name, {f"s{i:03d}": [record(c, **kw)] for i, c in enumerate(composites)}, role)  # type: ignore[arg-type]


def paired(base: list[float], deltas: list[float]) -> tuple[list[float], list[float]]:
    return base, [round(b + d, 2) for b, d in zip(base, deltas, strict=True)]


def synthetic(
    rng: random.Random, n: int, true_delta: float, difficulty_sd: float = 1.0, noise_sd: float = 0.4, center: float = 3.0
):
    """Paired scores: each sample has its own difficulty, shared by both arms, plus arm noise."""
    control, treatment = [], []
    for _ in range(n):
        level = rng.gauss(center, difficulty_sd)
        control.append(level + rng.gauss(0.0, noise_sd))
        treatment.append(level + true_delta + rng.gauss(0.0, noise_sd))
    return control, treatment


FAST = AnalysisSettings(resamples=2000)


def experiment(control: list[float], treatment: list[float], settings: AnalysisSettings = FAST, **kw):
    """A control and a treatment with these composites, analysed (fewer resamples: a test's pace)."""
    return analyze([variant("base", control, "control", **kw), variant("skill", treatment, **kw)], settings)
