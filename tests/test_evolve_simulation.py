"""The promise of omk evolve, measured by seeded simulations of the loop at the level of its
statistics (omk.evolve.simulate): with an improver whose changes have no effect, at most α of runs
accept any candidate and at most α end in PROGRESS; with one real fix among no-effect changes, most
runs find and confirm it. The figures are the ones docs/evolve.md reports."""

from __future__ import annotations

from omk.evolve.simulate import Scenario, simulate

RUNS = 400


def _share(counts: dict[str, int], *levels: str) -> float:
    return sum(counts.get(level, 0) for level in levels) / sum(counts.values())


def test_a_null_improver_ends_in_progress_at_most_alpha() -> None:
    for scenario in (Scenario(), Scenario(trivial=0.0, rounds=5, candidates=8)):
        counts = simulate(scenario, RUNS, seed=1)
        assert _share(counts, "PROGRESS") <= 0.05, counts
        assert 1 - _share(counts, "NO CHANGE") <= 0.05, counts  # any null candidate accepted at all


def test_without_the_whole_run_correction_noise_is_accepted() -> None:
    # what the correction is for: the same loop testing each of 40 candidates at α alone
    counts = simulate(Scenario(trivial=0.0, rounds=5, candidates=8, corrected=False), RUNS, seed=1)
    assert 1 - _share(counts, "NO CHANGE") > 0.05, counts


def test_a_real_fix_is_found_and_confirmed_in_most_runs() -> None:
    counts = simulate(Scenario(fix=1.5, helped=0.75), 200, seed=2)
    assert _share(counts, "PROGRESS") >= 0.8, counts


def test_the_simulation_is_seeded() -> None:
    scenario = Scenario(fix=1.0, helped=0.5)
    assert simulate(scenario, 30, seed=5) == simulate(scenario, 30, seed=5)
