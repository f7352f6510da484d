"""`run_bounded`: at most `limit` jobs at once, started in order, results in order."""

from __future__ import annotations

import asyncio
import random

import pytest

from omk.core.tasks import run_bounded


def _jobs(n: int, log: dict) -> list:
    """Thunks that record when they start and how many run at once, and sleep a random while."""
    rng = random.Random(7)

    def make(i: int):
        async def job() -> int:
            log["started"].append(i)
            log["now"] += 1
            log["peak"] = max(log["peak"], log["now"])
            await asyncio.sleep(rng.random() / 200)
            log["now"] -= 1
            return i * i

        return job

    return [make(i) for i in range(n)]


@pytest.mark.parametrize("limit", [1, 3, 16])
def test_at_most_limit_at_once_started_in_order_results_in_order(limit):
    log = {"started": [], "now": 0, "peak": 0}
    results = asyncio.run(run_bounded(_jobs(40, log), limit))
    assert results == [i * i for i in range(40)]
    assert log["started"] == list(range(40))
    assert log["peak"] == limit


def test_a_generator_of_jobs_is_taken_lazily_and_results_can_be_left_out():
    log = {"started": [], "now": 0, "peak": 0}
    jobs = _jobs(30, log)
    taken: list[int] = []

    def lazily():
        for i, job in enumerate(jobs):
            taken.append(i)
            assert i - len(log["started"]) < 4  # never more than `limit` taken ahead of those started
            yield job

    assert asyncio.run(run_bounded(lazily(), 4, keep=False)) == []
    assert taken == log["started"] == list(range(30))


def test_no_jobs():
    assert asyncio.run(run_bounded([], 8)) == []
