"""The LLM judge: rubric, dimensions and judge-scored assertions (spec §5).

`build_judge(settings)` returns None when no judge is configured; then rubric, dimensions and
judge-scored assertions are reported as skipped. A judge object offers:

    describe() -> dict                     # the report's "judge" block (models, prompt_hash)
    async grade(sample, output, trace) -> dict | None   # {"score", "rubric", "dimensions"}
    async close() -> None
"""

from __future__ import annotations

from typing import Any

from omk.errors import ConfigError


def build_judge(settings: Any) -> Any | None:
    if not settings.judge:
        return None
    raise ConfigError(f"judge {','.join(settings.judge)!r}: the LLM judge is not available yet; use --no-judge")
