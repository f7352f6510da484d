"""A real MCP server over stdio, written with the official SDK, for the URL-inlining tests.

Tools:
- `fetch_doc(namespace, slug)`: JSON `{"data": {"body": ...}, "meta": {...}}` (for `contentExtract`);
  it needs `DOCS_API_TOKEN` from the `env` block of `.mcp.json`. The slug `echo-token` puts that
  token in the body, `echo-env` the names of its environment variables and `OPENAI_API_KEY`.
- `fetch_broken(namespace, slug)`: always fails (a tool error).
- `fetch_nothing(url)`: returns no content at all.
- `fetch_plain(url)`: plain text naming the URL (the simple `urlParam` mode).

With `DOCS_START_LOG` set, every start appends a line to that file, and with `DOCS_CALL_LOG` set
every tool call appends its arguments, so a test can count starts and calls in a run. `--crash` makes it exit at once with a message on stderr.
"""

from __future__ import annotations

import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

EXPECTED_TOKEN_VAR = "DOCS_EXPECTED_TOKEN"  # when set, DOCS_API_TOKEN must equal it

server = MCPServer("omk-test-docs", log_level="ERROR")


def _log_call(tool: str, arguments: dict) -> None:
    log = os.environ.get("DOCS_CALL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, **arguments}) + "\n")


def _check_token() -> None:
    expected = os.environ.get(EXPECTED_TOKEN_VAR)
    if expected is not None and os.environ.get("DOCS_API_TOKEN") != expected:
        raise ToolError("DOCS_API_TOKEN missing or wrong")


@server.tool()
def fetch_doc(namespace: str, slug: str) -> str:
    """A private document as JSON."""
    _log_call("fetch_doc", {"namespace": namespace, "slug": slug})
    _check_token()
    body = (
        f"# {slug}\n\nPrivate document {namespace}/{slug} served over MCP. "
        "It explains the feature in enough words to be a real document."
    )
    if slug == "echo-token":
        body += f" token={os.environ.get('DOCS_API_TOKEN', '')}"
    if slug == "echo-env":  # which variables the server was given, and any key among them
        body += " env=" + ",".join(sorted(os.environ))
        body += " openai=" + os.environ.get("OPENAI_API_KEY", "(none)")
    return json.dumps({"data": {"body": body}, "meta": {"namespace": namespace}})


@server.tool()
def fetch_broken(namespace: str, slug: str) -> str:
    """Always fails."""
    _log_call("fetch_broken", {"namespace": namespace, "slug": slug})
    raise ToolError(f"backend unavailable for {namespace}/{slug}")


@server.tool(structured_output=False)
def fetch_nothing(url: str) -> list:
    """Returns no content."""
    _log_call("fetch_nothing", {"url": url})
    return []


@server.tool()
def fetch_plain(url: str) -> str:
    """Plain text for any URL."""
    _log_call("fetch_plain", {"url": url})
    return f"Plain MCP text for {url}: long enough to count as a document, with a few more words."


if __name__ == "__main__":
    if "--crash" in sys.argv:
        # names its token, as a careless server might: omk must not repeat it
        print(f"docs server: backend refused token {os.environ.get('DOCS_API_TOKEN')}", file=sys.stderr)
        sys.exit(3)
    log = os.environ.get("DOCS_START_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    server.run("stdio")
