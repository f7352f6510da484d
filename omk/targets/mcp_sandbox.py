"""A sample's mock sandbox served over MCP, for `cmd:` programs that reach their tools that way.

One server per sample (per conversation for `turns:`), in omk's own process and event loop: the
official SDK's low-level `Server` over streamable HTTP, run by uvicorn on a socket omk binds on
127.0.0.1 (an ephemeral port). Its tools are the sample's offered tools (omk.targets.mocks:
declared `tools`, then the mocks' tools with their `description` and `input_schema`); every call
is answered by the sample's `MockSandbox`, exactly as a JSON-lines `tool_call` is, so it lands in
the trace with the same fields. Under mocksStrict an unmatched call gets an error result (the
sandbox's denial) and is recorded as denied.

The endpoint is `http://127.0.0.1:PORT/TOKEN/mcp`, TOKEN 256 random bits: any other path is
refused with 404 before the SDK sees it (the comparison takes the same time whatever the path),
and the SDK checks `Host` and `Origin` against loopback names (DNS rebinding). The program finds
it in `OMK_MCP_URL`, and in two files of the `.mcp.json` shape: `OMK_MCP_CONFIG` (the HTTP
server, named `omk`) and `OMK_MCP_STDIO_CONFIG` (the same server reached through omk's stdio
bridge, `python -m omk.targets.mcp_bridge`, for agents that start their servers themselves). The
files are in a folder only the user can read, removed when the server stops.

`stop()` closes the listening socket and every connection and removes the folder; it finishes
even when the task is being cancelled (a timeout, Ctrl-C), so no listener outlives the sample.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from omk.targets.mocks import MockSandbox

HOST = "127.0.0.1"
SERVER_NAME = "omk"
URL_VARIABLE = "OMK_MCP_URL"
CONFIG_VARIABLE = "OMK_MCP_CONFIG"
STDIO_CONFIG_VARIABLE = "OMK_MCP_STDIO_CONFIG"
BRIDGE_MODULE = "omk.targets.mcp_bridge"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class _OwnLinesOut(logging.Filter):
    """Drops the server's log lines that carry its endpoint (the access log names the path, and
    the path holds the token), whatever logging the process has set up. The filter is put on the
    server's loggers when it starts and taken off when it stops: the process's logging is otherwise
    left as it was."""

    LOGGERS = ("uvicorn.access", "uvicorn.error", "mcp.server")

    def __init__(self, token: str):
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        return self.token not in record.getMessage()

    def attach(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)

    def detach(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeFilter(self)


def _mcp_server(sandbox: MockSandbox, tools: list[dict[str, Any]]) -> Any:
    """The SDK's low-level server: list the offered tools, answer each call from the sandbox."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    offered = [types.Tool(name=t["name"], description=t["description"] or None, input_schema=t["parameters"]) for t in tools]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=offered)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        answer = await sandbox.answer(params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)], is_error=answer.is_error)

    return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)


def _guarded(app: Any, path: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """`app` for requests to `path` only; any other HTTP request gets 404."""
    expected = path.encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not hmac.compare_digest(str(scope.get("path", "")).encode("utf-8", "surrogateescape"), expected):
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"not found"})
            return
        await app(scope, receive, send)

    return guarded


class McpSandboxServer:
    """One sample's MCP server. `await start()`, then hand `env` to the program; `await stop()`."""

    def __init__(self, sandbox: MockSandbox, tools: list[dict[str, Any]]):
        self.sandbox = sandbox
        self.tools = tools
        self.token = secrets.token_urlsafe(32)
        self.url = ""
        self.folder: Path | None = None
        self._socket: socket.socket | None = None
        self._uvicorn: Any = None
        self._stopped = False
        self._log_filter = _OwnLinesOut(self.token)

    @property
    def secrets(self) -> list[str]:
        """What must never reach a report: the endpoint and its token."""
        return [self.url, self.token]

    @property
    def env(self) -> dict[str, str]:
        assert self.folder is not None
        return {
            URL_VARIABLE: self.url,
            CONFIG_VARIABLE: str(self.folder / "mcp.json"),
            STDIO_CONFIG_VARIABLE: str(self.folder / "mcp-stdio.json"),
        }

    async def start(self) -> None:
        import uvicorn

        self._log_filter.attach()
        path = f"/{self.token}/mcp"
        app = _mcp_server(self.sandbox, self.tools).streamable_http_app(streamable_http_path=path, host=HOST)
        self._socket = sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((HOST, 0))
            self.url = f"http://{HOST}:{sock.getsockname()[1]}{path}"
            self._write_configs()
            config = uvicorn.Config(
                _guarded(app, path), log_config=None, log_level=None,  # the process's logging stays as it is
                lifespan="on", timeout_graceful_shutdown=1, ws="none",
            )
            config.load()
            self._uvicorn = server = uvicorn.Server(config)
            server.lifespan = config.lifespan_class(config)
            await server.startup(sockets=[sock])
        except BaseException:
            await self.stop()
            raise

    def _write_configs(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="omk-mcp-"))  # mode 0700
        http = {"mcpServers": {SERVER_NAME: {"type": "http", "url": self.url}}}
        stdio = {
            "mcpServers": {
                SERVER_NAME: {"type": "stdio", "command": sys.executable, "args": ["-m", BRIDGE_MODULE], "env": {URL_VARIABLE: self.url}}
            }
        }
        for name, data in (("mcp.json", http), ("mcp-stdio.json", stdio)):
            fd = os.open(self.folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)

    async def stop(self) -> None:
        """Close the listener and every connection, remove the folder; finishes even when cancelled."""
        if self._stopped:
            return
        self._stopped = True
        cancelled = False
        closing = asyncio.ensure_future(self._close())
        while not closing.done():
            try:
                await asyncio.shield(closing)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def _close(self) -> None:
        server, sock = self._uvicorn, self._socket
        try:
            if server is not None and server.started:
                server.force_exit = True  # open streams are cut, not waited for
                with contextlib.suppress(Exception):
                    await server.shutdown(sockets=[sock] if sock is not None else None)
                with contextlib.suppress(Exception):
                    await server.lifespan.shutdown()  # the SDK's sessions and their tasks end
                for connection in list(server.server_state.connections):  # a client that never hung up
                    transport = getattr(connection, "transport", None)
                    if transport is not None:
                        transport.close()
        finally:
            self._log_filter.detach()
            if sock is not None:
                sock.close()
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
