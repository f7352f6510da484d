"""URL inlining: fetch the documents that prompts and contexts link to (MCP first, then HTTP).

`inline_urls(samples, settings)` runs before any target call. It rewrites `prompt`/`context` in
place and records, per sample, which URLs were inlined from where and which failed in
`Sample.inlined_urls` (reported under `results[].urls`).
"""

from __future__ import annotations

from typing import Any

from omk.model import Sample


async def inline_urls(samples: list[Sample], settings: Any) -> None:
    """Not implemented yet: URLs stay as written."""
    return None
