"""The failure of one call (to a model, a program or a recorded file), classified for retry."""

from __future__ import annotations

from omk.core.errors import OmkError


class CallError(OmkError):
    """The call gave no usable answer.

    `retryable` marks transient causes (429, 5xx, timeouts, dropped connections) that are retried
    with backoff; `retry_after` is the server's `Retry-After` in seconds, if it sent one. It is
    `omk.TargetError` in the public API, and an `OmkError` like every error omk raises for a
    caller to act on: a command it ends prints its one line, never a traceback.
    """

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
