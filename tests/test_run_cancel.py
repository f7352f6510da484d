"""Ctrl-C in the middle of a run: every job finishes cleaning up before the run reports cancelled."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from omk.runner.sample_run import RunConfig, run_jobs
from omk.samples.model import Sample
from omk.targets.base import TargetResult


class SlowToStop:
    """A target whose calls, when cancelled, take a while to stop (as a program being killed does)."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.stopped: list[str] = []

    def describe(self) -> dict[str, Any]:
        return {"kind": "slow-to-stop"}

    def cache_identity(self) -> None:
        return None

    async def run(self, sample: Sample, prompt: str, session: Any = None) -> TargetResult:
        self.started.append(sample.sample_id)
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.shield(asyncio.sleep(0.05 * len(self.started)))  # the clean-up, not cancellable
            self.stopped.append(sample.sample_id)
        return TargetResult(output="never")

    async def close(self) -> None:
        return None


def test_a_cancelled_run_returns_only_after_every_call_has_stopped():
    target = SlowToStop()
    samples = [Sample(f"s{i}", "hi") for i in range(6)]

    async def go() -> tuple[list[str], list[str]]:
        run = asyncio.ensure_future(run_jobs([(s, 0) for s in samples], target, RunConfig(concurrency=3)))
        while len(target.started) < 3:
            await asyncio.sleep(0.01)
        run.cancel()  # what asyncio.run does to the main task on Ctrl-C
        with contextlib.suppress(asyncio.CancelledError):
            await run
        return list(target.started), list(target.stopped)  # as they were when the run gave up

    started, stopped = asyncio.run(go())
    assert len(started) == 3  # the other three were waiting for a slot and never started
    assert sorted(stopped) == sorted(started)  # none was still cleaning up when the run returned


def test_gather_all_nested_waits_for_every_clean_up_on_cancel():
    from omk.core.tasks import gather_all

    stopped: list[str] = []

    async def worker(name: str, clean_up_s: float) -> None:
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.shield(asyncio.sleep(clean_up_s))  # like reaping a killed judge program
            stopped.append(name)

    async def grade() -> None:  # a sample's judge ensemble: gathers of gathers
        await gather_all(worker("fast", 0.01), gather_all(worker("slow", 0.2), worker("slower", 0.3)))

    async def go() -> list[str]:
        job = asyncio.ensure_future(grade())
        await asyncio.sleep(0.05)
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job
        return list(stopped)

    assert sorted(asyncio.run(go())) == ["fast", "slow", "slower"]
