"""URL inlining: fetch the documents that prompts and contexts link to (MCP first, then HTTP).

`inline_urls(samples, settings)` runs before any target call. It rewrites `prompt`/`context` in
place and records, per sample, which URLs were inlined from where and which failed in
`Sample.inlined_urls` (reported under `results[].urls`). Modules: `urls` (finding and splicing),
`mcp_config` (.mcp.json), `mcp_fetch` (MCP stdio sessions), `http_fetch` (httpx), `html_text`
(HTML → text), `inliner` (the run-level orchestration), loaded only when some sample's text has a
URL at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from omk.inline.urls import SCANNED_FIELDS

if TYPE_CHECKING:
    from omk.samples.model import Sample

__all__ = ["inline_urls"]


def _mentions_http(sample: Sample) -> bool:
    """Whether a field inlining reads (a conversation's turns') holds "http" at all: every URL it
    fetches starts so, so a sample without it has nothing to inline."""
    for unit in sample.turns or (sample,):  # a loop: it looks at every sample of every run
        for name in SCANNED_FIELDS:
            text = getattr(unit, name)
            if isinstance(text, str) and "http" in text:
                return True
    return False


async def inline_urls(samples: list[Sample], settings: Any, err: TextIO | None = None, resolver: Any = None) -> None:
    """Rewrite `prompt`/`context` of `samples` in place with the documents their URLs point to
    (omk.inline.inliner.inline_urls), once any of them has a URL."""
    if not any(_mentions_http(s) for s in samples):
        return
    from omk.inline.inliner import inline_urls as inline

    await inline(samples, settings, err, resolver)
