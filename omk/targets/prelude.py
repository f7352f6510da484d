"""What a sample puts before its prompt: a system prompt filled from its variables, and a history.

Big Sky examples carry `inputs.context` (`Sample.variables`) and the conversation so far
(`Sample.history`, neutral messages as omk.domain.messages describes). The system prompt a target
sends for such a sample is, in order:

1. the system prompt under test (omk.yaml `system:` / `skill:`), with every `{{ dotted.path }}`
   placeholder filled from the variables (a missing one becomes empty; a non-text value, compact
   JSON);
2. the text of any `system` message of the history;
3. when the variables are not empty and no placeholder used them, a `## Context` section holding
   them as JSON, so the agent sees them either way.

A sample without variables and history (every omk sample) gets the system prompt unchanged.
"""

from __future__ import annotations

import json
import re
from typing import Any

from omk.core.dotpath import lookup
from omk.samples.model import Sample

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*\}\}")
CONTEXT_HEADING = "## Context"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def context_section(variables: dict[str, Any]) -> str:
    return f"{CONTEXT_HEADING}\n\n```json\n{json.dumps(variables, ensure_ascii=False, indent=2)}\n```"


def system_for(base: str | None, sample: Sample) -> str | None:
    """The system prompt to send for `sample` (see the module text); None when there is none."""
    variables = sample.variables
    if not variables and not sample.history:
        return base
    parts: list[str] = []
    used = False
    if base:
        if variables and PLACEHOLDER.search(base):
            base = PLACEHOLDER.sub(lambda m: _text(lookup(variables, m.group(1))), base)
            used = True
        parts.append(base)
    parts += [str(m.get("content") or "") for m in sample.history if m.get("role") == "system" and m.get("content")]
    if variables and not used:
        parts.append(context_section(variables))
    return "\n\n".join(parts) if parts else None


def history_for(sample: Sample) -> list[dict[str, Any]]:
    """The messages sent before the prompt (system messages go into the system prompt instead)."""
    return [m for m in sample.history if m.get("role") != "system"]
