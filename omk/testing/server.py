"""A model server on 127.0.0.1 that plays a script: the Anthropic Messages API, OpenAI Chat
Completions and the OpenAI Responses API, streamed and not, every request recorded.

    with ModelServer(load_script(Path("model.yaml"))) as server:
        server.root                 # http://127.0.0.1:PORT: ANTHROPIC_BASE_URL
        server.openai_url           # http://127.0.0.1:PORT/v1: OPENAI_BASE_URL
        server.requests[0].json     # what the server received

The script is a `ModelScript`, a list of steps served in order (the last one repeats when the list
runs out), or a function `request -> step` (omk.testing.steps says what a step is). The server is
asyncio on one thread of its own, so it serves a program under test and the test itself at once;
`omk serve-model` runs the same server in the foreground.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from omk.testing import anthropic, openai_chat, responses
from omk.testing.steps import Drop, Garbage, HttpError, Request, ScriptTurn, Slow, Stream, sse

Responder = Callable[[Request], Any]
MAX_HEAD = 64 * 1024
WORKERS = 128
_RENDER = {"anthropic": anthropic.render, "chat": openai_chat.render, "responses": responses.render}
_ERRORS = {"anthropic": anthropic.error_body, "chat": openai_chat.error_body, "responses": responses.error_body}


def stream_of(api: str | None, step: Any) -> Stream | None:
    """A whole reply of `api` as that API streams it, or None when `step` is not one."""
    if api == "anthropic" and anthropic.is_message(step):
        return Stream(anthropic.sse_events(step))
    if api == "chat" and openai_chat.is_completion(step):
        return Stream(openai_chat.chunks(step))
    if api == "responses" and responses.is_response(step):
        return Stream(responses.events(step))
    return None


class ModelServer:
    def __init__(self, script: list[Any] | Responder, port: int = 0, record: Path | None = None, url_path: str = ""):
        self._script = script
        self._url_path = url_path
        self._port = port
        self._record = record
        self._requests: list[Request] = []
        self._connections = 0
        self._served = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._workers: ThreadPoolExecutor | None = None

    # --- what tests read ----------------------------------------------------------------------
    @property
    def url(self) -> str:
        """`root`, or `openai_url` for a server made with `for_openai`."""
        return self.root + self._url_path

    @property
    def root(self) -> str:
        """`http://127.0.0.1:PORT`: the base URL for Anthropic clients (the SDKs and Claude Code add /v1)."""
        assert self._server is not None, "server not started"
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        """The base URL for OpenAI clients and Codex (it ends in /v1)."""
        return self.root + "/v1"

    @classmethod
    def for_openai(cls, script: list[Any] | Responder) -> ModelServer:
        """A server whose `url` is the OpenAI base URL."""
        return cls(script, url_path="/v1")

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    @property
    def connections(self) -> int:
        """TCP connections accepted so far, a client's check that the server listens (which
        sends no request) included."""
        with self._lock:
            return self._connections

    # --- lifecycle ----------------------------------------------------------------------------
    async def open(self) -> None:
        """Listen (in the running event loop)."""
        self._stopping = asyncio.Event()
        # A responder may block (a test holding replies back to count concurrent calls): each
        # runs on a worker thread, enough of them that concurrent requests are held at once.
        self._workers = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="omk-model")
        asyncio.get_running_loop().set_default_executor(self._workers)
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", self._port, backlog=128)

    async def serve_forever(self, ready: Callable[[], None] | None = None) -> None:
        """Serve in the running event loop until cancelled; `ready` is called once it listens."""
        await self.open()
        assert self._server is not None
        if ready is not None:
            ready()
        async with self._server:
            await self._server.serve_forever()

    def start(self) -> Self:
        """Serve from a thread of its own; returns once the server listens."""
        ready = threading.Event()
        failed: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.open())
            except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
                failed.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._close())
            loop.close()

        self._thread = threading.Thread(target=main, name="omk-model-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failed:
            raise failed[0]
        return self

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._workers is not None:
            self._workers.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        stopping = self._stopping
        if stopping is not None:
            loop.call_soon_threadsafe(stopping.set)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- serving ------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self._lock:
            self._connections += 1
        try:
            while True:
                request = await read_request(reader)
                if request is None or not await self._answer(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    def _next_step(self, request: Request) -> Any:
        with self._lock:
            self._requests.append(request)
            if self._record is not None:
                with self._record.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(request.to_json(), ensure_ascii=False) + "\n")
            if callable(self._script) or request.api is None:
                step = None
            else:
                step = self._script[min(self._served, len(self._script) - 1)] if self._script else {}
                self._served += 1
        if request.api is None:
            return HttpError(404, {"error": {"message": f"no route {request.path}"}})
        if callable(self._script):
            step = self._script(request)
        return step

    async def _answer(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection is to be closed."""
        step = await asyncio.to_thread(self._next_step, request)
        if isinstance(step, Slow):
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), step.seconds)
            step = step.then if step.then is not None else {}
        if isinstance(step, ScriptTurn):
            step = _RENDER[request.api or "anthropic"](step)
        if request.wants_stream and (streamed := stream_of(request.api, step)) is not None:
            step = streamed
        return await self._send(request, step, writer)

    async def _send(self, request: Request, step: Any, writer: asyncio.StreamWriter) -> bool:
        if isinstance(step, Drop):
            return False
        if isinstance(step, Stream):
            head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
            writer.write(head.encode() + sse(step.events))
            await writer.drain()
            if step.hang and self._stopping is not None:
                await self._stopping.wait()
            return False
        if isinstance(step, Garbage):
            await _reply(writer, step.status, step.body, "text/html")
        elif isinstance(step, HttpError):
            body = step.body if step.body is not None else _ERRORS.get(request.api or "chat", openai_chat.error_body)(step.code)
            extra = {"retry-after": step.retry_after} if step.retry_after is not None else {}
            data, kind = (body.encode(), "text/plain") if isinstance(body, str) else (json.dumps(body).encode(), "application/json")
            await _reply(writer, step.code, data, kind, extra)
        else:
            await _reply(writer, 200, json.dumps(step).encode(), "application/json")
        return request.headers.get("connection", "").lower() != "close"


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}


async def _reply(writer: asyncio.StreamWriter, code: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
    lines = [f"HTTP/1.1 {code} {_REASONS.get(code, 'Status')}", f"content-type: {kind}", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """One HTTP/1.1 request (a body by content-length or chunked); None at the end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    if len(head) > MAX_HEAD:
        raise ValueError("request head too large")
    first, *rest = head.decode("latin-1").split("\r\n")
    method, path, _version = first.split(" ", 2)
    headers = {}
    for line in rest:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length") or 0))
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    return Request(method, path, headers, body, data)


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
