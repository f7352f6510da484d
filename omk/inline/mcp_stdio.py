"""omk's own stdio transport for MCP servers, in place of the SDK's `stdio_client`.

The server runs like a `cmd:` target (omk.io.process): in a process group of its own, ended whole
when the session closes, even when the server itself exited cleanly and left a child behind. Its
stderr is read as it comes and only the last few KB are kept (shown when it fails to start). A
stdout line longer than the cap ends the session instead of being held; a line that is not
JSON-RPC is handed to the session as an error without being logged, so nothing the server prints
(a token from its `env` included) reaches omk's stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

STDERR_TAIL_BYTES = 8192
MIN_LINE_BYTES = 1024 * 1024
CLOSE_GRACE_S = 2.0  # after stdin closes: how long the server may take to exit before the kill


class Tail:
    """The last `size` bytes of a stream."""

    def __init__(self, size: int = STDERR_TAIL_BYTES):
        self.size = size
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.size:
            del self.data[: len(self.data) - self.size]

    def lines(self) -> list[str]:
        return [ln.strip() for ln in self.data.decode("utf-8", "replace").splitlines() if ln.strip()]


def line_cap(max_bytes: int | None) -> int:
    """The longest stdout line (one JSON-RPC message) read: room for a reply at the URL cap with
    JSON's escaping, at least 1 MB."""
    return max(MIN_LINE_BYTES, 8 * max_bytes + 65536) if max_bytes else 64 * MIN_LINE_BYTES


@contextlib.asynccontextmanager
async def server_streams(argv: list[str], env: dict[str, str], cwd: Path, tail: Tail, max_line: int) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `mcp.ClientSession`, over the server `argv` started here."""
    import anyio
    from mcp.client.stdio import get_default_environment

    from omk.io.process import start_program

    proc = await start_program(argv, cwd=cwd, env={**get_default_environment(), **env}, limit=max_line)
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_messages, proc, read_writer, max_line)
            tg.start_soon(_write_messages, proc, write_reader)
            tg.start_soon(_keep_tail, proc, tail)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(proc)
                tg.cancel_scope.cancel()
    finally:
        for stream in (read_stream, write_stream, read_writer, write_reader):
            stream.close()


async def _read_messages(proc: asyncio.subprocess.Process, out: Any, max_line: int) -> None:
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    assert proc.stdout is not None
    async with out:
        while True:
            try:
                line = await proc.stdout.readline()
            except ValueError:  # over the cap: the session ends rather than hold it
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await out.send(ValueError(f"the server sent a message longer than {max_line} bytes"))
                return
            if not line:
                return
            if not line.strip():
                continue
            try:
                message: Any = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
            except ValueError:
                message = ValueError("the server printed a line that is not a JSON-RPC message")
            try:
                await out.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


async def _write_messages(proc: asyncio.subprocess.Process, messages: Any) -> None:
    import anyio

    assert proc.stdin is not None
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with messages:
            async for message in messages:
                proc.stdin.write(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n")
                await proc.stdin.drain()


async def _keep_tail(proc: asyncio.subprocess.Process, tail: Tail) -> None:
    assert proc.stderr is not None
    with contextlib.suppress(OSError, RuntimeError):
        while chunk := await proc.stderr.read(65536):
            tail.add(chunk)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Close stdin, give the server a moment to exit on its own, then end its whole group."""
    from omk.io.process import stop_program

    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        await asyncio.wait_for(proc.wait(), CLOSE_GRACE_S)
    await stop_program(proc)
