"""What fetching one URL gives: its content and where from, or why not and what to do about it."""

from __future__ import annotations

import msgspec

HINT_AUTH = "needs authentication: add an MCP server for this host to .mcp.json, or paste the content into `context`"
HINT_NOT_FOUND = "the page does not exist: check the URL"
HINT_SERVER = "the server failed: try again later"
HINT_NETWORK = "check the network or proxy settings, or paste the content into `context`"
HINT_TOO_LARGE = "raise `url_max_bytes` in omk.yaml, or paste the part you need into `context`"
HINT_CONTENT = "paste the content into `context`"
HINT_ALLOW = "inside addresses are refused by default: allow this one with --url-allow, OMK_URL_ALLOW or url_allow in omk.yaml (docs/security.md)"
HINT_MCP = "check the MCP server named in .mcp.json"


class Fetched(msgspec.Struct, frozen=True, gc=False):
    content: str
    source: str  # "mcp:<server>" or "http"


class FetchFailure(msgspec.Struct, frozen=True, gc=False):
    source: str  # where the attempt was made: "mcp:<server>" or "http"
    reason: str
    hint: str


def hint_for_status(status: int) -> str:
    if status in (401, 403, 407):
        return HINT_AUTH
    if status in (404, 410):
        return HINT_NOT_FOUND
    if status >= 500:
        return HINT_SERVER
    return HINT_CONTENT
