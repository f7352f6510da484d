"""The run engine's retry, backoff, timeout and concurrency logic, against an in-process fake target."""

from __future__ import annotations

import asyncio

import pytest

from omk.records import Trace
from omk.runner.retry import RetryPolicy
from omk.runner.sample_run import RunConfig, run_jobs, run_sample, run_samples
from omk.samples.model import Sample
from omk.targets.base import TargetError, TargetResult


class ScriptedTarget:
    """Plays a script per call: an exception to raise, "hang" to never answer, or an output."""

    spec = "fake:scripted"

    def __init__(self, script: list, default: str = "hello world"):
        self.script = list(script)
        self.default = default
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def run(self, sample: Sample, prompt: str) -> TargetResult:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            step = self.script.pop(0) if self.script else self.default
            await asyncio.sleep(0)  # let other samples start, so the concurrency gate is exercised
            if step == "hang":
                await asyncio.Event().wait()
            if isinstance(step, BaseException):
                raise step
            return TargetResult(output=step, trace=Trace(turns=1, cost_usd=0.01))
        finally:
            self.in_flight -= 1

    def describe(self) -> dict:
        return {"kind": "fake", "spec": self.spec}

    def cache_identity(self) -> dict | None:
        return None

    async def close(self) -> None:
        return None


class Recorder:
    """A fake `sleep` that records the waits instead of waiting, and a fixed "random" draw."""

    def __init__(self):
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def policy(retries: int = 2, base: float = 1.0, rand: float = 1.0) -> tuple[RetryPolicy, Recorder]:
    rec = Recorder()
    return RetryPolicy(retries=retries, base=base, cap=30.0, rand=lambda: rand, sleep=rec.sleep), rec


def run(sample: Sample, target: ScriptedTarget, retry: RetryPolicy, timeout: float = 30.0):
    return asyncio.run(run_sample(sample, target, RunConfig(timeout=timeout, retry=retry)))


SAMPLE = Sample(sample_id="s1", prompt="say hello")


def test_transient_errors_are_retried_until_the_target_answers():
    target = ScriptedTarget([TargetError("HTTP 503", retryable=True), TargetError("HTTP 429", retryable=True)])
    retry, rec = policy(retries=2, base=0.5, rand=1.0)
    result = run(SAMPLE, target, retry)
    assert result.status == "ok"
    assert result.output == "hello world"
    assert target.calls == 3
    assert result.attempts == 3
    assert rec.waits == [0.5, 1.0]  # base·2^(k-1) at the top of the jitter range


def test_after_the_last_retry_the_sample_errors_with_cause_and_attempts():
    target = ScriptedTarget([TargetError("HTTP 500: boom", retryable=True)] * 5)
    retry, rec = policy(retries=2)
    result = run(SAMPLE, target, retry)
    assert result.status == "error"
    assert result.error == "HTTP 500: boom (gave up after 3 attempts)"
    assert result.attempts == 3
    assert target.calls == 3
    assert len(rec.waits) == 2
    assert result.to_json()["attempts"] == 3


def test_a_permanent_error_is_not_retried():
    target = ScriptedTarget([TargetError("HTTP 401: bad key", retryable=False)])
    retry, rec = policy(retries=5)
    result = run(SAMPLE, target, retry)
    assert result.status == "error"
    assert result.error == "HTTP 401: bad key"
    assert target.calls == 1
    assert rec.waits == []


def test_a_target_bug_is_not_retried_and_does_not_end_the_run():
    target = ScriptedTarget([ValueError("oops")])
    retry, _ = policy()
    results = asyncio.run(
        run_samples([SAMPLE, Sample(sample_id="s2", prompt="again")], target, RunConfig(retry=retry))
    )
    assert results[0].status == "error"
    assert results[0].error == "target failed: ValueError: oops"
    assert results[1].status == "ok"


def test_connection_errors_let_through_unwrapped_are_retried():
    target = ScriptedTarget([ConnectionRefusedError(111, "Connection refused")])
    retry, rec = policy()
    result = run(SAMPLE, target, retry)
    assert result.status == "ok"
    assert result.attempts == 2
    assert len(rec.waits) == 1


def test_retry_after_is_honoured_and_capped():
    target = ScriptedTarget(
        [TargetError("429", retryable=True, retry_after=7), TargetError("429", retryable=True, retry_after=3600)]
    )
    retry, rec = policy(rand=0.0)
    result = run(SAMPLE, target, retry)
    assert result.status == "ok"
    assert rec.waits == [7, retry.retry_after_cap]


def test_a_call_that_outlives_the_timeout_is_retried():
    target = ScriptedTarget(["hang"])
    retry, rec = policy()
    result = run(SAMPLE, target, retry, timeout=0.05)
    assert result.status == "ok"
    assert result.attempts == 2
    assert len(rec.waits) == 1


def test_a_call_that_always_times_out_errors_with_the_timeout_named():
    target = ScriptedTarget(["hang", "hang"])
    retry, _ = policy(retries=1)
    result = run(SAMPLE, target, retry, timeout=0.05)
    assert result.status == "error"
    assert result.error == "target timed out after 0.05s (gave up after 2 attempts)"


def test_retries_zero_means_a_single_call():
    target = ScriptedTarget([TargetError("HTTP 502", retryable=True)])
    retry, rec = policy(retries=0)
    result = run(SAMPLE, target, retry)
    assert result.status == "error"
    assert result.error == "HTTP 502"
    assert target.calls == 1
    assert rec.waits == []


def test_full_jitter_draws_below_the_capped_exponential():
    p = RetryPolicy(base=2.0, cap=5.0, rand=lambda: 0.5)
    assert [p.delay(k) for k in (1, 2, 3, 4)] == [1.0, 2.0, 2.5, 2.5]
    assert RetryPolicy(base=2.0, rand=lambda: 0.0).delay(3) == 0.0


def test_backoff_base_can_be_tuned_from_the_environment(monkeypatch):
    monkeypatch.setenv("OMK_RETRY_BASE_S", "0.01")
    assert RetryPolicy().base == 0.01
    monkeypatch.setenv("OMK_RETRY_BASE_S", "soon")
    assert RetryPolicy().base == 1.0


def test_concurrency_limit_holds_and_results_keep_job_order():
    target = ScriptedTarget([])
    samples = [Sample(sample_id=f"s{i}", prompt="p") for i in range(4)]
    jobs = [(s, r) for s in samples for r in range(3)]
    seen = []
    results = asyncio.run(run_jobs(jobs, target, RunConfig(concurrency=2), on_result=seen.append))
    assert target.max_in_flight == 2
    assert [(r.sample_id, r.repeat) for r in results] == [(s.sample_id, r) for s, r in jobs]
    assert len(seen) == 12
    assert target.calls == 12


@pytest.mark.parametrize("concurrency", [1, 3])
def test_every_job_runs_once(concurrency):
    target = ScriptedTarget([])
    samples = [Sample(sample_id=f"s{i}", prompt="p") for i in range(5)]
    results = asyncio.run(run_samples(samples, target, RunConfig(concurrency=concurrency)))
    assert target.calls == 5
    assert target.max_in_flight == concurrency
    assert all(r.status == "ok" and r.attempts == 1 and not r.cached for r in results)


class AtOnceTarget(ScriptedTarget):
    """Has its answers at hand (as a replay has): `answer` plays the script; `run` is never the way in."""

    answers_at_once = True

    async def run(self, sample: Sample, prompt: str) -> TargetResult:
        raise AssertionError("an at-once target is asked with answer(), not run()")

    def answer(self, sample: Sample, prompt: str, session: object = None) -> TargetResult:
        self.calls += 1
        step = self.script.pop(0) if self.script else self.default
        if isinstance(step, BaseException):
            raise step
        return TargetResult(output=step, trace=Trace(turns=1))


def test_a_target_with_its_answers_at_hand_is_asked_once_without_timer_or_retries():
    retry, rec = policy(retries=2)
    answered = run(SAMPLE, AtOnceTarget([]), retry)
    assert answered.status == "ok"
    assert answered.output == "hello world"
    assert answered.attempts == 1
    target = AtOnceTarget([TargetError("no recorded response for 's1'", retryable=True)])
    failed = run(SAMPLE, target, retry)
    assert failed.status == "error"
    assert failed.error == "no recorded response for 's1'"  # final: asked again, it would say the same
    assert failed.attempts == 1
    assert target.calls == 1
    assert rec.waits == []


def test_a_bug_in_an_at_once_target_errors_its_sample_alone():
    failed = run(SAMPLE, AtOnceTarget([KeyError("gone")]), policy()[0])
    assert failed.status == "error"
    assert failed.error == "target failed: KeyError: 'gone'"
