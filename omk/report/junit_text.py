"""Text as JUnit XML carries it, for a run's suite (omk/report/junit.py) and an experiment's
(omk/report/experiment_junit.py): characters XML cannot hold, written escaped, and durations in seconds."""

from __future__ import annotations

import re
from typing import Any

# XML 1.0 forbids most control characters even when escaped; model output may contain them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: Any) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", "" if text is None else str(text))


def seconds(ms: Any) -> str:
    return f"{(ms or 0) / 1000:.3f}"
