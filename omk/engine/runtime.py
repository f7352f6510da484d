"""Running an evaluation's jobs: URL inlining, hooks, the cache and the results stream around the runner.

`Runtime` is one evaluation opened for running: its caches, results stream, hooks and run
configuration, and `run_one(sample, repeat)`. A plain evaluation runs its own jobs through it; an
experiment opens one per variant and interleaves their jobs under one concurrency limit.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from omk.assertions.evaluate import SET_TYPE
from omk.core.tasks import run_bounded
from omk.samples.model import Sample

if TYPE_CHECKING:
    from omk.engine.state import EvaluationState, OnResult
    from omk.records.result import SampleResult
    from omk.runner.sample_run import RunConfig

# How many results a runtime records between two hand-overs of the event loop.
YIELD_EVERY = 200
# At most this many finished results wait to be written (see `Runtime.run_one`).
WRITE_EVERY = 256


def needs_hooks(samples: list[Sample]) -> bool:
    for sample in samples:
        for specs in sample.assertion_lists() if sample.turns else (sample.assertions,):
            for spec in specs:
                kind = spec.type
                if kind == "custom" or (kind == SET_TYPE and spec.uses("custom")):  # only a set has children that run
                    return True
    return False


def open_run_caches(evaluation: EvaluationState) -> tuple[Any, Any]:
    """(the target's response cache, the judge's) in `<cwd>/.omk/`; the same one when both are
    cached, a cache of the judge's own for a target that is not cached (a replay: re-grading
    recorded outputs is then free), None when turned off."""
    from omk.store.cache import DEFAULT_PATH, open_cache

    if evaluation.options.no_cache:
        return None, None
    path = evaluation.cwd / DEFAULT_PATH
    cache = open_cache(path) if evaluation.target.cache_identity() is not None else None
    judge_cache = cache
    if evaluation.judge is not None:
        judge_cache = judge_cache or open_cache(path)
        evaluation.judge.use_cache(judge_cache)
    return cache, judge_cache


class Runtime:
    """One evaluation, opened for running (`async with Runtime(evaluation, on_result) as rt`)."""

    def __init__(self, evaluation: EvaluationState, on_result: OnResult | None = None):
        self.evaluation = evaluation
        self.on_result = on_result
        self.caches: tuple[Any, Any] = (None, None)
        self.hooks: Any = None
        self.cfg: RunConfig | None = None
        self._done = 0
        self._finished: list[SampleResult] = []  # finished, not yet written (`_write`)
        self._failed: BaseException | None = None  # what writing them raised, for the run to raise

    async def __aenter__(self) -> Runtime:
        ev = self.evaluation
        ev.log.open(fresh=ev.folder.manifest is None)
        self.caches = open_run_caches(ev)
        if needs_hooks(ev.samples):
            from omk.assertions.hooks import HookRunner

            # a hung hook blocks only its own sample
            self.hooks = HookRunner(timeout_s=ev.settings.hook_timeout, max_workers=ev.settings.concurrency)
        self.cfg = self._config()
        from omk.runner.sample_run import run_sample

        self._run_sample = run_sample  # imported once here, not again for every job
        return self

    def _config(self) -> RunConfig:
        from omk.core.secrets import Masker
        from omk.io.process import max_output_bytes
        from omk.judge import why_no_judge
        from omk.runner.retry import RetryPolicy
        from omk.runner.sample_run import RunConfig

        settings = self.evaluation.settings
        return RunConfig(
            threshold=settings.threshold,
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            regex_timeout=settings.regex_timeout,
            judge=self.evaluation.judge,
            no_judge=why_no_judge(settings),
            hooks=self.hooks,
            retry=RetryPolicy(retries=settings.retries),
            cache=self.caches[0],
            mask=Masker.for_run(settings.blocks()),
            max_output_bytes=max_output_bytes(settings.blocks()),
            skills=self.evaluation.skills,
        )

    async def run_one(self, sample: Sample, repeat: int) -> None:
        """Run one job; its result is in the log (and on disk) before `on_result` sees it, and is
        not kept here."""
        assert self.cfg is not None
        if self._failed is not None:
            raise self._failed
        budget = self.evaluation.budget
        if budget is not None and budget.reached:  # no new call once the spend reaches the budget
            self.evaluation.not_run.append((sample.sample_id, repeat))
            return
        result = await self._run_sample(sample, self.evaluation.target, self.cfg, repeat)
        if budget is not None:
            budget.add(result)
        # Written as soon as the run stops computing: when the event loop next turns (at once for
        # a target that waits on anything), or after `WRITE_EVERY` results that finish in one
        # stretch (a replay's). Writing a batch of lines apart from grading keeps each step's code
        # in the processor's caches.
        self._finished.append(result)
        if len(self._finished) == 1:
            asyncio.get_running_loop().call_soon(self._write_soon)
        elif len(self._finished) >= WRITE_EVERY:
            self._write()
        self._done += 1
        if not self._done % YIELD_EVERY:
            # A replay's samples never wait on anything, so nothing else gets the loop: hand it over
            # now and then, so Ctrl-C (a cancellation) stops the run promptly with what it finished.
            await asyncio.sleep(0)

    def _write(self) -> None:
        """Write the finished results: each line is on disk before `on_result` is told of it."""
        if self._failed is not None:
            raise self._failed
        finished, self._finished = self._finished, []
        for result in finished:
            self.evaluation.log.add(result)
        if self.on_result is not None:
            for result in finished:
                self.on_result(result)

    def _write_soon(self) -> None:
        try:
            self._write()
        except BaseException as exc:  # noqa: BLE001 - raised by the run's next step (`run_one`, the exit)
            self._failed = exc

    async def __aexit__(self, *exc: object) -> None:
        ev = self.evaluation
        try:
            self._write()
            await ev.target.close()
            if ev.judge is not None:
                await ev.judge.close()
            if self.hooks is not None:
                await self.hooks.close()
        finally:
            ev.log.close()
            for opened in {id(c): c for c in self.caches if c is not None}.values():
                opened.close()


async def run_jobs(jobs: list[tuple[Runtime, Sample, int]], concurrency: int) -> int:
    """Run (runtime, sample, repeat) jobs, at most `concurrency` at once, started in list order;
    each result goes to its runtime's log. The number of jobs run."""
    await run_bounded((partial(rt.run_one, s, r) for rt, s, r in jobs), concurrency, keep=False)
    return len(jobs)


async def execute(evaluation: EvaluationState, on_result: OnResult | None) -> int:
    """Run the jobs still to do; every result is logged before it is handed to `on_result`."""
    from omk.engine.budget import budget_for
    from omk.inline import inline_urls

    todo = evaluation.todo
    budget_for([evaluation], len(todo))
    async with Runtime(evaluation, on_result) as runtime:
        await inline_urls(list({id(s): s for s, _ in todo}.values()), evaluation.settings)
        return await run_jobs([(runtime, s, r) for s, r in todo], evaluation.settings.concurrency)
