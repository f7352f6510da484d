"""The bootstrap's draws (omk/stats/bootstrap.py): drawn in blocks, shared between columns and kept
for reuse by one summary (`Draws`), they give exactly the means of drawing each column on its own
with `random.Random(seed).choices`, the reference below."""

from __future__ import annotations

import random

import pytest

from omk.stats.bootstrap import Draws, resampled_means, score_interval


def reference_means(column: list[float], resamples: int, seed: int | str) -> list[float]:
    """Each resample's n values drawn from the column itself, one call for all resamples."""
    n = len(column)
    drawn = random.Random(seed).choices(column, k=n * resamples)
    return sorted(sum(drawn[i : i + n]) / n for i in range(0, n * resamples, n))


def column(rng: random.Random, n: int) -> list[float]:
    return [round(rng.uniform(1.0, 5.0), 2) for _ in range(n)]


@pytest.mark.parametrize(("n", "resamples"), [(1, 1), (1, 200), (2, 300), (10, 2_000), (40, 2_000), (70_000, 1)])
def test_drawn_in_blocks_the_means_are_those_of_one_draw(n, resamples):
    # 40 × 2,000 and 70,000 × 1 cross the block of random draws made in one call
    rng = random.Random(n)
    values = column(rng, n)
    assert resampled_means([values], resamples, "s") == [reference_means(values, resamples, "s")]
    other = column(rng, n)
    assert resampled_means([values, other], resamples, 7) == [
        reference_means(values, resamples, 7),
        reference_means(other, resamples, 7),
    ]


def test_kept_draws_give_each_figure_the_numbers_of_its_own_draws():
    rng = random.Random(3)
    figures = [
        (column(rng, 10), "omk-summary", 2_000),
        (column(rng, 12), "omk-summary", 2_000),  # another n: other positions
        (column(rng, 10), "omk-summary", 2_000),  # the first set again
        (column(rng, 10), "another seed", 2_000),  # another seed: other positions
        (column(rng, 10), "omk-summary", 500),  # fewer resamples
        (column(rng, 12), "omk-summary", 2_000),
    ]
    same = figures[0][0]  # one column given again: its means are kept, by seed and resamples
    figures += [(same, "omk-summary", 2_000), (same, "another seed", 2_000), (same, "omk-summary", 500), (list(same), "omk-summary", 2_000)]
    for draws in (Draws(), Draws(budget=25_000)):  # the small budget forgets sets and draws again
        for values, seed, resamples in figures:
            shared = score_interval(values, seed=seed, resamples=resamples, draws=draws)
            alone = score_interval(values, seed=seed, resamples=resamples)
            assert shared == alone
            assert resampled_means([values], resamples, seed, draws) == [reference_means(values, resamples, seed)]


def test_a_summary_keeps_no_more_draws_than_its_budget():
    draws = Draws(budget=30_000)
    for n in (10, 11, 10, 12):  # 10 used again: 11 is the set least recently used
        draws.blocks("s", n, 1_000)
    assert draws._size <= 30_000
    assert set(draws._kept) == {("s", 10, 1_000), ("s", 12, 1_000)}
    larger = draws.blocks("s", 40, 1_000)  # more than the budget: drawn, not kept
    assert not isinstance(larger, list)
    assert ("s", 40, 1_000) not in draws._kept
