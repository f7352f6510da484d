"""omk's stdio bridge: an MCP server on stdin/stdout that relays to a sample's HTTP MCP server.

For agents that start their MCP servers themselves (a `command` entry of `.mcp.json`): the entry
omk writes in `OMK_MCP_STDIO_CONFIG` runs

    <python> -m omk.targets.mcp_bridge

with `OMK_MCP_URL` in its environment (never on the command line, where other users of the
machine could read it). Tool lists and calls go to that URL through the official SDK's client,
and their results come back unchanged; the calls are recorded by the HTTP server, not here.
"""

from __future__ import annotations

import os
import sys
from typing import Any

URL_VARIABLE = "OMK_MCP_URL"


async def _relay(url: str) -> None:
    import mcp_types as types
    from mcp import Client
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async with Client(url) as upstream:

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return await upstream.list_tools()

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            return await upstream.call_tool(params.name, dict(params.arguments or {}))

        server = Server("omk", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> int:
    url = os.environ.get(URL_VARIABLE)
    if not url:
        print(f"omk mcp bridge: {URL_VARIABLE} is not set (omk sets it for the program it runs)", file=sys.stderr)
        return 2
    import anyio

    anyio.run(_relay, url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
