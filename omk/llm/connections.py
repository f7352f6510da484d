"""Keep-alive HTTP/1.1 connections for model calls: httpcore's connections on asyncio streams.

httpcore (the HTTP engine under httpx) does the protocol: the request, the reply's framing,
keep-alive, closing a connection whose exchange was cut short. Two of its defaults cost more CPU
per call than the rest of a call together once many calls are in flight, so omk replaces them
through httpcore's own extension points:

- The connection pool. httpcore's pool scans every connection and every waiting request for
  each request and each reply, so its cost grows with the square of the calls in flight.
  `ConnectionPool` keeps a plain list of idle connections: a call takes the last one that is
  still usable, or opens a new one; at most as many connections as calls at once.
- The network backend. The default goes through anyio, whose per-read and per-write cancel
  scopes and socket-attribute lookups cost more than the read or write itself. `AsyncioBackend`
  uses asyncio's streams directly and sends a request (head and body, which httpcore writes
  separately) in one write, made when the reply is first read: one system call per request.

Timeouts are httpcore's (connect, read, write, per request); its exceptions are raised as they
are, for the caller to classify.
"""

from __future__ import annotations

import asyncio
import select
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

HAPPY_EYEBALLS_DELAY = 0.25  # seconds before trying a host's next address (RFC 8305's suggestion)
READ_ERRORS = (OSError, asyncio.IncompleteReadError)


def _readable(sock: Any) -> bool:
    """Whether a socket has something to read now (an idle HTTP/1.1 connection: the server closed it)."""
    if sock is None:
        return True
    try:
        if not hasattr(select, "poll"):  # Windows: select() has no descriptor limit there
            return bool(select.select([sock], [], [], 0)[0])
        poller = select.poll()  # select() refuses descriptors above 1023 on Linux
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection as asyncio streams. Writes are held until the next read (or close), so a
    request leaves in one write; a failed write then surfaces as the read's failure, which is
    what httpcore does with a write error anyway (a server may answer before reading it all)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer
        self._pending: list[bytes] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            await self._flush(timeout)
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout(f"no reply within {timeout:g}s") from None
        except READ_ERRORS as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(buffer)

    async def _flush(self, timeout: float | None) -> None:
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            self._writer.write(data)
            async with asyncio.timeout(timeout):
                await self._writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout(f"could not send the request within {timeout:g}s") from None
        except OSError:
            pass  # the read that follows reports the closed connection, or reads the server's answer

    async def aclose(self) -> None:
        self._pending.clear()
        self._writer.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncioStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            self._writer.close()
            raise httpcore.ConnectTimeout(f"TLS handshake not done within {timeout:g}s") from None
        except (OSError, ssl.SSLError) as exc:
            self._writer.close()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # asked of an idle connection: anything to read means it is done for
            if self._writer.is_closing() or self._reader.at_eof() or self._reader.exception() is not None:
                return True
            return _readable(self._writer.get_extra_info("socket"))
        if info in ("ssl_object", "socket"):
            return self._writer.get_extra_info(info)
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncioStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    local_addr=(local_address, 0) if local_address else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"could not connect within {timeout:g}s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ConnectionPool:
    """Keep-alive connections to one origin, as many as calls at once; idle ones are reused, the
    most recent first (the least likely to have been closed by the server)."""

    def __init__(self, origin: httpcore.Origin, tls: ssl.SSLContext, keepalive_expiry: float = 5.0):
        self.origin = origin
        self._tls = tls
        self._keepalive = keepalive_expiry
        self._backend = AsyncioBackend()
        self._idle: list[httpcore.AsyncHTTPConnection] = []
        self._open: set[httpcore.AsyncHTTPConnection] = set()
        self._closed = False

    @property
    def connections(self) -> int:
        """Connections open now, idle or busy."""
        return len(self._open)

    async def request(self, request: httpcore.Request, read: Any) -> Any:
        """`await read(response)` for the reply to `request` on a connection of the pool; the
        connection goes back to the pool afterwards if its exchange finished cleanly."""
        conn = await self._acquire()
        try:
            response = await conn.handle_async_request(request)
            try:
                return await read(response)
            finally:
                await response.aclose()
        finally:
            await self._release(conn)

    async def _acquire(self) -> httpcore.AsyncHTTPConnection:
        if self._closed:
            raise httpcore.ConnectError("the connection pool is closed")
        while self._idle:
            conn = self._idle.pop()
            if conn.is_available() and not conn.has_expired():
                return conn
            await self._drop(conn)
        conn = httpcore.AsyncHTTPConnection(
            self.origin, ssl_context=self._tls, keepalive_expiry=self._keepalive, network_backend=self._backend
        )
        self._open.add(conn)
        return conn

    async def _release(self, conn: httpcore.AsyncHTTPConnection) -> None:
        if not self._closed and conn.is_available():
            self._idle.append(conn)
        else:
            await self._drop(conn)

    async def _drop(self, conn: httpcore.AsyncHTTPConnection) -> None:
        self._open.discard(conn)
        await conn.aclose()

    async def aclose(self) -> None:
        """Close every connection, busy ones too: their calls fail with a read error."""
        self._closed = True
        conns, self._open, self._idle = list(self._open), set(), []
        for conn in conns:
            await conn.aclose()
