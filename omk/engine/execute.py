"""Running an evaluation's jobs: URL inlining, hooks, the cache and the results stream around the runner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omk.model import Sample, SampleResult

if TYPE_CHECKING:
    from omk.engine.run import Evaluation, OnResult


def needs_hooks(samples: list[Sample]) -> bool:
    def walk(specs: list) -> bool:
        return any(a.type == "custom" or walk(a.children) for a in specs)

    return any(walk(specs) for s in samples for specs in s.assertion_lists())


def open_run_caches(evaluation: Evaluation) -> tuple[Any, Any]:
    """(the target's response cache, the judge's) in `<cwd>/.omk/`; the same one when both are
    cached, a cache of the judge's own for a target that is not cached (a replay: re-grading
    recorded outputs is then free), None when turned off."""
    from omk.run.cache import DEFAULT_PATH, open_cache

    if evaluation.options.no_cache:
        return None, None
    path = evaluation.cwd / DEFAULT_PATH
    cache = open_cache(path) if evaluation.target.cache_identity() is not None else None
    judge_cache = cache
    if evaluation.judge is not None:
        judge_cache = judge_cache or open_cache(path)
        evaluation.judge.use_cache(judge_cache)
    return cache, judge_cache


async def execute(evaluation: Evaluation, on_result: OnResult | None) -> list[SampleResult]:
    """Run the jobs still to do; every result is streamed before it is handed to `on_result`."""
    from omk.engine.run import ResultsStream
    from omk.run import resume as rs

    todo = evaluation.todo
    out_dir = evaluation.out_dir
    stream = ResultsStream(out_dir / rs.RESULTS, fresh=evaluation.folder.manifest is None) if out_dir else None
    cache, judge_cache = open_run_caches(evaluation)

    def finished(result: SampleResult) -> None:
        if stream is not None:
            stream.write(result)
        if on_result is not None:
            on_result(result)

    try:
        return await _run(evaluation, todo, finished, cache)
    finally:
        if stream is not None:
            stream.close()
        for opened in {id(c): c for c in (cache, judge_cache) if c is not None}.values():
            opened.close()


async def _run(evaluation: Evaluation, todo: list[tuple[Sample, int]], on_result: OnResult, cache: Any) -> list[SampleResult]:
    from omk.inline import inline_urls
    from omk.judge import why_no_judge
    from omk.run.retry import RetryPolicy
    from omk.run.runner import RunConfig, run_jobs

    settings, target, judge = evaluation.settings, evaluation.target, evaluation.judge
    samples = list({id(s): s for s, _ in todo}.values())
    hooks = None
    try:
        await inline_urls(samples, settings)
        if needs_hooks(samples):
            from omk.assertions.hooks import HookRunner

            # a hung hook blocks only its own sample
            hooks = HookRunner(timeout_s=settings.hook_timeout, max_workers=settings.concurrency)
        cfg = RunConfig(
            threshold=settings.threshold,
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            regex_timeout=settings.regex_timeout,
            judge=judge,
            no_judge=why_no_judge(settings),
            hooks=hooks,
            retry=RetryPolicy(retries=settings.retries),
            cache=cache,
        )
        return await run_jobs(todo, target, cfg, on_result=on_result)
    finally:
        await target.close()
        if judge is not None:
            await judge.close()
        if hooks is not None:
            await hooks.close()
