"""What one target call produced: the output, its trace and, in a conversation, the turn's messages.

Its own module, below the targets, because the response cache stores it and the judge keeps its
replies in that cache too; the targets and the run engine know it as `omk.targets.TargetResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omk.domain.workspace import WorkFolder
from omk.records import Trace


@dataclass(slots=True)
class TargetResult:
    output: str
    trace: Trace = field(default_factory=Trace)
    # In a conversation: what this turn said after the user message, as neutral messages
    # (omk.domain.messages), so the next turn can send it as history. Empty = just `output`.
    messages: list[dict[str, Any]] = field(default_factory=list)
    # An agent that worked in a folder of its own: that folder, kept for the sample's checks
    # until the run engine removes it (never cached: a cached result has none).
    workspace: WorkFolder | None = None
