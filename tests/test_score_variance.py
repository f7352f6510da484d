"""Where the composite's spread comes from (omk/scoring/variance.py), by seeded simulation with
known components: samples differ by σ²_sample, runs of a sample by σ²_run, judge calls by σ²_judge."""

from __future__ import annotations

import random
from statistics import fmean

import pytest

from omk.records import JudgeBlock, Scores
from omk.scoring.digest import Digest
from omk.scoring.summary import spread_sources
from omk.scoring.variance import JudgeNoise, block_noise


def simulate(rng: random.Random, n: int, runs: int, calls: int, sample_var: float, run_var: float, judge_var: float, cost=(0.01, 0.001)) -> list[Digest]:
    """n samples × `runs` runs, each judged by `calls` calls (the judge layer is the only layer)."""
    out = []
    for i in range(n):
        s = rng.gauss(3.0, sample_var**0.5)
        for r in range(runs):
            e = rng.gauss(0.0, run_var**0.5)
            scores = [s + e + rng.gauss(0.0, judge_var**0.5) for _ in range(calls)]
            block = {"score": fmean(scores), "rubric": {"score": fmean(scores), "samples": scores}}
            found = block_noise(JudgeBlock.read(block), 1)
            noise = JudgeNoise(items=1, calls=calls, cost_usd=cost[1] * calls, noise=found[0] if found else None)
            y = fmean(scores)
            out.append(Digest(f"s{i}", None, r, "ok", True, Scores(judge=y, composite=y), cost[0], False, 0, judge=noise))
    return out


def test_the_components_come_back_from_a_simulation_with_known_ones():
    rng = random.Random(28)
    found = [spread_sources(simulate(rng, 40, 3, 3, 0.5, 0.2, 0.8)) for _ in range(200)]
    assert all(v is not None for v in found)
    sample = fmean(float(v.sample_var) for v in found if v)
    run = fmean(float(v.run_var) for v in found if v)
    judge = fmean(float(v.judge_var or 0) for v in found if v)
    assert sample == pytest.approx(0.5, rel=0.1)
    assert run == pytest.approx(0.2, rel=0.15)
    assert judge == pytest.approx(0.8, rel=0.05)
    v = found[0]
    assert v is not None
    assert (v.samples, v.repeats, v.judge_calls) == (40, 3, 3)
    assert sum(float(s) for _, s in v.shares) == pytest.approx(1.0, abs=1e-3)


def test_a_noisy_cheap_judge_is_asked_more_and_difficulty_wants_more_samples():
    rng = random.Random(3)
    noisy = spread_sources(simulate(rng, 30, 2, 2, 0.05, 0.01, 4.0, cost=(0.05, 0.0001)))
    assert noisy is not None
    assert noisy.advice == "judge_calls"
    assert noisy.per_dollar
    hard = spread_sources(simulate(rng, 30, 2, 2, 1.5, 0.05, 0.05))
    assert hard is not None
    assert hard.advice == "samples"
    assert dict(hard.shares)["sample"] > 0.8


def test_with_no_more_samples_a_flaky_agent_is_rerun():
    rng = random.Random(9)
    flaky = spread_sources(simulate(rng, 30, 2, 2, 0.1, 1.0, 0.1, cost=(0.001, 0.01)))
    assert flaky is not None
    assert flaky.advice == "samples"
    assert flaky.advice_without_samples == "repeats"


def test_without_repeats_there_is_no_split_and_it_reads_back():
    rng = random.Random(1)
    assert spread_sources(simulate(rng, 10, 1, 1, 0.5, 0.2, 0.8)) is None
    v = spread_sources(simulate(rng, 10, 2, 1, 0.5, 0.2, 0.8))
    assert v is not None
    assert v.judge_var is None
    assert [k for k, _ in v.shares] == ["sample", "run"]
    from omk.records.repeats import VarianceSources

    assert VarianceSources.read(v.to_json(), "report") == v


def test_judge_repeats_alone_take_the_judge_noise_out_of_the_samples_share():
    rng = random.Random(4)
    found = [spread_sources(simulate(rng, 40, 1, 4, 0.5, 0.0, 2.0)) for _ in range(100)]
    assert fmean(float(v.sample_var) for v in found if v) == pytest.approx(0.5, rel=0.15)
    assert all(v is not None and v.run_var == 0 and v.repeats == 1 for v in found)
