"""Fetching documents through MCP servers: one stdio session per server for the whole run.

The `mcp` SDK is imported here only, and this module only when some URL matches a server, so a
run without MCP never pays for its slow import. Each session lives in a task of its own (the SDK's
transports are anyio task groups, which must be entered and left by the same task); fetches
from any task share it, and `aclose()` ends every session and its server process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import Any

from omk.core.secrets import Masker
from omk.inline.fetched import HINT_MCP, Fetched, FetchFailure
from omk.inline.mcp_config import McpServer, TransformMismatch, extract_content
from omk.inline.mcp_stdio import Tail, line_cap, server_streams

START_TIMEOUT = 30.0  # seconds to start a server and finish the MCP handshake
CALL_TIMEOUT = 30.0  # seconds per tool call (as in omk 0.23)
CLIENT_VERSION = "1.0.0"
ERROR_CHARS = 300  # of a tool's error text kept as the reason


def _root_cause(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _root_cause(exc)
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc).strip()
    return text or type(exc).__name__


class _Connection:
    """One server process and its initialized session, owned by a dedicated task."""

    def __init__(self, server: McpServer, start_timeout: float, mask: Masker, max_line: int):
        self.server = server
        self.mask = mask
        self.max_line = max_line
        self._start_timeout = start_timeout
        self._stop = asyncio.Event()
        self.ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(), name=f"omk-mcp-{server.name}")

    async def _run(self) -> None:
        # The server's stderr: only its last few KB, shown (last line) when it fails to start.
        errlog = Tail()
        try:
            await self._serve(errlog)
        except BaseException as exc:  # reported per URL, never raised into the run
            if not self.ready.done():
                self.ready.set_exception(RuntimeError(self._start_failure(exc, errlog)))
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _serve(self, errlog: Tail) -> None:
        import anyio
        from mcp import ClientSession
        from mcp.types import Implementation

        s = self.server
        # Only what the entry declares (over the SDK's few non-secret basics: PATH, HOME, USER,
        # LOGNAME, SHELL, TERM), never omk's whole environment with its API keys.
        info = Implementation(name=f"omk-{s.name}", version=CLIENT_VERSION)
        async with (
            server_streams([s.command, *s.args], dict(s.env), s.cwd, errlog, self.max_line) as (read, write),
            ClientSession(read, write, client_info=info) as session,
        ):
            with anyio.fail_after(self._start_timeout):
                await session.initialize()
            self.ready.set_result(session)
            await self._stop.wait()

    def _start_failure(self, exc: BaseException, errlog: Tail) -> str:
        message = f'MCP server "{self.server.name}" failed to start: {self.mask(_describe(exc))}'
        lines = errlog.lines()
        if lines:
            message += f" (server stderr: {self.mask.clip(lines[-1], 300)})"  # masked, then cut
        return message

    async def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):  # closing must not fail the run
            await asyncio.wait_for(self._task, timeout=10)


# The SDK's loggers ("client" is its session's): what they say can quote a server's output
SDK_LOGGERS = ("mcp", "client")


class _MaskedLog(logging.Handler):
    """The SDK's warnings and errors as one masked line each on stderr, never a traceback (which
    would quote what the server printed, a token from its `env` included)."""

    def __init__(self, mask: Masker):
        super().__init__(logging.WARNING)
        self.mask = mask

    def emit(self, record: logging.LogRecord) -> None:
        from omk.io.textsafe import for_terminal

        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a message that cannot be formatted is shown as its template
            text = str(record.msg)
        print(f"omk: MCP: {for_terminal(self.mask.clip(text, ERROR_CHARS))}", file=sys.stderr)


class McpFetcher:
    def __init__(
        self,
        start_timeout: float = START_TIMEOUT,
        call_timeout: float = CALL_TIMEOUT,
        mask: Masker | None = None,
        max_bytes: int | None = None,
    ):
        # Import the SDK now, before any fetch is in flight: an import inside a task would
        # stall the event loop for most of a second while HTTP deadlines run.
        import mcp.client.stdio  # noqa: F401

        self._start_timeout = start_timeout
        self._call_timeout = call_timeout
        self._mask = mask or Masker()
        self._max_bytes = max_bytes  # what omk keeps of a reply (url_max_bytes); the SDK reads the message whole
        self._connections: dict[str, _Connection] = {}
        self._log = _MaskedLog(self._mask)
        self._was: list[tuple[logging.Logger, bool]] = []
        for name in SDK_LOGGERS:
            logger = logging.getLogger(name)
            self._was.append((logger, logger.propagate))
            logger.addHandler(self._log)
            logger.propagate = False

    def _connection(self, server: McpServer) -> _Connection:
        conn = self._connections.get(server.name)
        if conn is None:
            conn = self._connections[server.name] = _Connection(server, self._start_timeout, self._mask, line_cap(self._max_bytes))
        return conn

    async def fetch(self, server: McpServer, url: str) -> Fetched | FetchFailure:
        source = f"mcp:{server.name}"
        tool = server.fetch_tool
        try:
            arguments = tool.arguments(url)
        except TransformMismatch as exc:
            return FetchFailure(source, str(exc), HINT_MCP)
        try:
            session = await asyncio.shield(self._connection(server).ready)
        except RuntimeError as exc:
            return FetchFailure(source, str(exc), HINT_MCP)
        try:
            # the whole exchange under omk's deadline: the call, and the tools/list the SDK sends
            # after a reply to check it against the tool's schema (which has no timeout of its own)
            async with asyncio.timeout(self._call_timeout):
                result = await session.call_tool(tool.name, arguments, read_timeout_seconds=self._call_timeout)
        except Exception as exc:  # noqa: BLE001 - any tool failure falls back to HTTP
            return FetchFailure(source, f'tool "{tool.name}" call failed: {_describe(exc)}', HINT_MCP)
        data = result.model_dump(by_alias=True)  # the same shape in SDK 1.x and 2.x
        text = "\n".join(
            item["text"]
            for item in data.get("content") or []
            if item.get("type") == "text" and isinstance(item.get("text"), str)
        ).strip()
        if data.get("isError"):  # a reason, not a document: masked and cut short
            why = self._mask.clip(text, ERROR_CHARS) if text else "the tool reported an error"
            return FetchFailure(source, f'tool "{tool.name}" call failed: {why}', HINT_MCP)
        if not text:
            return FetchFailure(source, "MCP tool returned empty content", HINT_MCP)
        size = len(text.encode("utf-8"))
        if self._max_bytes is not None and size > self._max_bytes:
            why = f"the reply is {size} bytes, over the {self._max_bytes}-byte cap (url_max_bytes in omk.yaml)"
            return FetchFailure(source, why, HINT_MCP)
        return Fetched(extract_content(text, tool.content_extract), source)

    async def aclose(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.close() for c in connections))
        for logger, propagate in self._was:
            logger.removeHandler(self._log)
            logger.propagate = propagate
        self._was = []
