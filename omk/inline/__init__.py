"""URL inlining: fetch the documents that prompts and contexts link to (MCP first, then HTTP).

`inline_urls(samples, settings)` runs before any target call. It rewrites `prompt`/`context` in
place and records, per sample, which URLs were inlined from where and which failed in
`Sample.inlined_urls` (reported under `results[].urls`). Modules: `urls` (finding and splicing),
`mcp_config` (.mcp.json), `mcp_fetch` (MCP stdio sessions), `http_fetch` (httpx), `html_text`
(HTML → text), `inliner` (the run-level orchestration).
"""

from __future__ import annotations

from omk.inline.inliner import inline_urls

__all__ = ["inline_urls"]
