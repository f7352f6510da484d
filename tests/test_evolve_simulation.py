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


# the rows of docs/evolve.md's table, in order: the scenario, its runs and seed
DOC_ROWS = [
    (Scenario(), 400, 1),
    (Scenario(trivial=0.0, rounds=5, candidates=8), 400, 1),
    (Scenario(trivial=0.0, rounds=5, candidates=8, corrected=False), 400, 1),
    (Scenario(fix=1.5, helped=0.75), 200, 2),
    (Scenario(fix=2.0, helped=0.5), 200, 2),
    (Scenario(fix=2.0, helped=0.5, samples=176), 200, 2),
]


def _percent(x: float) -> str:
    text = f"{100 * x:.1f}".removesuffix(".0")
    return f"{text}%"


def test_the_docs_table_is_what_the_simulation_gives() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "evolve.md").read_text(encoding="utf-8")
    table = text[text.index("| improver | runs |") :].split("\n\n")[0].splitlines()[2:]
    assert len(table) == len(DOC_ROWS)
    for line, (scenario, runs, seed) in zip(table, DOC_ROWS, strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        counts = simulate(scenario, runs, seed=seed)
        assert re.fullmatch(r"\d+", cells[1])
        assert int(cells[1]) == runs
        assert cells[2] == _percent(1 - _share(counts, "NO CHANGE")), (line, counts)
        assert cells[3] == _percent(_share(counts, "PROGRESS")), (line, counts)
