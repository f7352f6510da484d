"""Make a call with a per-call timeout and retry transient failures with backoff.

Transient = a `CallError` marked `retryable` (429, 5xx, dropped connections), a per-call
timeout, or a connection error a call let through unwrapped. Anything else fails at once.
The wait before retry k (1-based) is the server's `Retry-After` when it sent one (capped at
`retry_after_cap`), else "full jitter": uniform(0, min(cap, base·2^(k-1))). Jitter keeps many
calls that failed together from retrying together.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from omk.llm.errors import CallError

DEFAULT_BASE_S = 1.0

T = TypeVar("T")


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


class CallFailure(Exception):
    """The call gave no answer, after `attempts` tries."""

    def __init__(self, cause: str, attempts: int):
        message = cause if attempts <= 1 else f"{cause} (gave up after {attempts} attempts)"
        super().__init__(message)
        self.cause = cause
        self.attempts = attempts


def classify(exc: Exception, timeout: float) -> tuple[str, bool, float | None]:
    """(cause, retryable, retry_after) for an exception raised by a call."""
    if isinstance(exc, CallError):
        return str(exc), exc.retryable, exc.retry_after
    if isinstance(exc, TimeoutError):
        return f"target timed out after {timeout:g}s", True, None
    import httpx

    if isinstance(exc, ConnectionError | httpx.TransportError):
        return f"connection failed: {type(exc).__name__}: {exc}", True, None
    return f"target failed: {type(exc).__name__}: {exc}", False, None


async def call_with_retry(call: Callable[[int], Awaitable[T]], timeout: float, policy: RetryPolicy) -> tuple[T, int]:
    """`call(attempt)`'s result (attempt counts from 1) and the number of calls it took; raises
    `CallFailure` when a failure is final or the retries are spent."""
    attempt = 0
    while True:
        attempt += 1
        try:
            async with asyncio.timeout(timeout):  # no extra task per call, unlike wait_for
                return await call(attempt), attempt
        except Exception as exc:  # noqa: BLE001 - a bug in the called code must not end the run
            cause, retryable, retry_after = classify(exc, timeout)
        if not retryable or attempt > policy.retries:
            raise CallFailure(cause, attempt)
        await policy.sleep(policy.delay(attempt, retry_after))
