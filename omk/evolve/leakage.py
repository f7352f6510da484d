"""The guard that keeps the selection and test splits out of every improver request.

The improver must learn from train only: were it shown a selection or test prompt, an output or
a failure message, the selection and the final check would no longer be fair. Every request is
checked against the texts of those splits before it is sent; a request that contains one is a
bug, and the loop stops rather than send it.
"""

from __future__ import annotations

from collections.abc import Iterable

MIN_LENGTH = 12  # shorter texts ("ok", "yes") occur in any request by chance


class LeakError(RuntimeError):
    """An improver request contained text from the selection or test split."""


def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


class LeakGuard:
    """The held-out texts (selection and test prompts, outputs, failure messages), and the check.

    A held-out text that the train split has too (the same output, the same failure message on
    both) tells the improver nothing it may not see: texts given to `allow` are train texts, and a
    held-out text found inside one of them is not counted."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.texts: set[str] = set()
        self.allowed: set[str] = set()
        self.add(texts)

    def add(self, texts: Iterable[str]) -> None:
        for text in texts:
            cleaned = _flat(text)
            if len(cleaned) >= MIN_LENGTH:
                self.texts.add(cleaned)

    def allow(self, texts: Iterable[str]) -> None:
        self.allowed.update(_flat(t) for t in texts if t)

    def leaked(self, request: str) -> str | None:
        """The first held-out text found in the request (spaces made uniform), or None."""
        flat = _flat(request)
        for text in sorted(self.texts):
            if text in flat and not any(text in allowed for allowed in self.allowed):
                return text
        return None

    def check(self, request: str) -> None:
        found = self.leaked(request)
        if found is not None:
            raise LeakError(f"an improver request contains held-out text ({found[:60]!r}); nothing was sent")
