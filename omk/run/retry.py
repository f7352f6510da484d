"""Call a target with a per-call timeout and retry transient failures with backoff.

Transient = a `TargetError` marked `retryable` (429, 5xx, dropped connections), a per-call
timeout, or a connection error a target let through unwrapped. Anything else fails at once.
The wait before retry k (1-based) is the server's `Retry-After` when it sent one (capped at
`retry_after_cap`), else "full jitter": uniform(0, min(cap, base·2^(k-1))). Jitter keeps many
samples that failed together from retrying together.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from omk.model import Sample
from omk.targets.base import Target, TargetError, TargetResult
from omk.targets.session import Session

DEFAULT_BASE_S = 1.0


def _default_base() -> float:
    """`OMK_RETRY_BASE_S` tunes the backoff base (tests set it near 0); bad values are ignored."""
    try:
        value = float(os.environ.get("OMK_RETRY_BASE_S", DEFAULT_BASE_S))
    except ValueError:
        return DEFAULT_BASE_S
    return value if value >= 0 else DEFAULT_BASE_S


@dataclass(slots=True)
class RetryPolicy:
    retries: int = 2  # retries after the first attempt: 2 means up to 3 calls
    base: float = field(default_factory=_default_base)
    cap: float = 30.0
    retry_after_cap: float = 60.0
    rand: Callable[[], float] = random.random
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.retry_after_cap)
        return self.rand() * min(self.cap, self.base * 2 ** (retry - 1))


class TargetFailure(Exception):
    """The target gave no output for a sample, after `attempts` calls."""

    def __init__(self, cause: str, attempts: int):
        message = cause if attempts <= 1 else f"{cause} (gave up after {attempts} attempts)"
        super().__init__(message)
        self.cause = cause
        self.attempts = attempts


def _classify(exc: Exception, timeout: float) -> tuple[str, bool, float | None]:
    """(cause, retryable, retry_after) for an exception raised by a target call."""
    if isinstance(exc, TargetError):
        return str(exc), exc.retryable, exc.retry_after
    if isinstance(exc, TimeoutError):
        return f"target timed out after {timeout:g}s", True, None
    import httpx

    if isinstance(exc, ConnectionError | httpx.TransportError):
        return f"connection failed: {type(exc).__name__}: {exc}", True, None
    return f"target failed: {type(exc).__name__}: {exc}", False, None


async def call_with_retries(
    target: Target, sample: Sample, prompt: str, timeout: float, policy: RetryPolicy, session: Session | None = None
) -> tuple[TargetResult, int]:
    """The target's result and the number of calls it took; raises `TargetFailure`.

    With a `session` (one turn of a conversation) a retry starts the turn over: the mocks are
    put back as they were when the turn began.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            if session is None:
                call = target.run(sample, prompt)
            else:
                if attempt > 1:
                    session.sandbox.retry_turn()
                call = target.run(sample, prompt, session=session)
            async with asyncio.timeout(timeout):  # no extra task per call, unlike wait_for
                result = await call
            return result, attempt
        except Exception as exc:  # noqa: BLE001 - a target bug must not end the run
            cause, retryable, retry_after = _classify(exc, timeout)
        if not retryable or attempt > policy.retries:
            raise TargetFailure(cause, attempt)
        await policy.sleep(policy.delay(attempt, retry_after))
