"""An example agent that reaches its tools over MCP, with the official `mcp` client (no model).

    omk eval samples/mcp-agent/eval-samples.yaml      # target: cmd:python -m omk.testing.mcp_agent

It reads omk's request from stdin, connects to the sample's MCP server (`OMK_MCP_URL`; with
`--stdio`, the stdio entry of `OMK_MCP_STDIO_CONFIG`, which runs omk's bridge), lists the tools,
and calls each one the prompt asks for on a line of its own: `call TOOL {"json": "input"}`. Its
answer names the tools it was offered and what each call returned. A real agent does the same
with a model choosing the calls; omk needs nothing else from it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

CALL = re.compile(r"^call (\S+)(.*)$", re.MULTILINE)


def server() -> Any:
    """The URL of the sample's server, or (with --stdio) how to start omk's stdio bridge to it."""
    if "--stdio" not in sys.argv:
        return os.environ["OMK_MCP_URL"]
    from mcp import StdioServerParameters

    with open(os.environ["OMK_MCP_STDIO_CONFIG"], encoding="utf-8") as handle:
        entry = json.load(handle)["mcpServers"]["omk"]
    return StdioServerParameters(command=entry["command"], args=entry["args"], env={**os.environ, **entry["env"]})


async def answer(prompt: str) -> str:
    from mcp import Client

    async with Client(server()) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        lines = [f"tools: {', '.join(tools)}"]
        for name, raw in CALL.findall(prompt):
            result = await client.call_tool(name, json.loads(raw) if raw.strip() else {})
            text = "".join(getattr(part, "text", "") for part in result.content)
            lines.append(f"{name}{' (error)' if result.is_error else ''}: {text}")
    return "\n".join(lines)


def main() -> None:
    import anyio

    request = json.loads(sys.stdin.readline())
    output = anyio.run(answer, request["prompt"])
    print(json.dumps({"type": "response", "output": output}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
