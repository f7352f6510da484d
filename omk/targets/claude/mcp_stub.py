"""A stand-in MCP server (stdio, official SDK) offering the MCP tools a sample's mocks name.

Claude Code only calls a tool it knows, so for a mock of `mcp__github__create_issue` (or
`github.create_issue`) omk starts this server as `github`, offering `create_issue` with the
schema the sample declares in `tools` (else any object). The PreToolUse hook answers the calls
from the mocks before they reach it; what does reach it (a call no mock matched, outside
strict mode) gets an error result saying no mock matched.

    <python> -I mcp_stub.py <tools.json> <server name>
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PERMISSIVE: dict[str, Any] = {"type": "object"}


def mcp_name(tool: str) -> tuple[str, str] | None:
    """(server, tool) for `mcp__srv__tool` or `srv.tool`; None for any other name."""
    if tool.startswith("mcp__"):
        server, sep, name = tool[5:].partition("__")
        return (server, name) if sep and server and name else None
    server, sep, name = tool.partition(".")
    return (server, name) if sep and server and name and "." not in name else None


def stub_tools(mocks: Sequence[dict[str, Any]], declared: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """{server: [{name, description, inputSchema}]} for every MCP tool a mock or a declared tool names."""
    schemas = {}
    for tool in declared:
        parts = mcp_name(str(tool.get("name", "")))
        if parts is not None:
            schemas[parts] = (str(tool.get("description") or ""), tool.get("parameters") or PERMISSIVE)
    for mock in mocks:
        parts = mcp_name(str(mock.get("tool", "")))
        if parts is not None:
            schemas.setdefault(parts, (f"The {parts[1]} tool of {parts[0]}.", PERMISSIVE))
    servers: dict[str, list[dict[str, Any]]] = {}
    for (server, name), (description, schema) in schemas.items():
        servers.setdefault(server, []).append({"name": name, "description": description, "inputSchema": schema})
    return servers


def serve(tools_file: Path, server_name: str) -> None:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    offered = json.loads(tools_file.read_text(encoding="utf-8")).get(server_name, [])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(**tool) for tool in offered])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        text = f"[omk] no mock matches this {server_name}.{params.name} call; this call was not executed"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)

    server = Server(server_name, on_list_tools=list_tools, on_call_tool=call_tool)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.argv[2])
