"""The common part of the fake servers: a ThreadingHTTPServer on 127.0.0.1:0 run in a thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Status:
    """An HTTP error reply, e.g. `Status(429, retry_after="2")` or `Status(500)`."""

    code: int
    body: Any = None  # dict → JSON; str → text; None → a provider-shaped error object
    retry_after: str | None = None


@dataclass
class Slow:
    """Wait `seconds` (cut short when the server stops), then serve `then`."""

    seconds: float
    then: Any = None


@dataclass
class Garbage:
    """A 200 reply whose body is not JSON."""

    body: bytes = b"<html>\x00not json at all"
    status: int = 200


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Stream:
    """A 200 `text/event-stream` reply: `(event name, data)` pairs, data sent as JSON.

    `hang` keeps the connection open after the events without ending the stream (a stalled
    server), until the server stops."""

    events: list[tuple[str, Any]]
    hang: bool = False


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None


Step = Any
Responder = Callable[[Request], Step]


@dataclass
class _State:
    script: list[Step] | Responder
    requests: list[Request] = field(default_factory=list)
    served: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


class _QuietServer(ThreadingHTTPServer):
    """A client that timed out and hung up is part of the test, not a server error to print."""

    request_queue_size = 128  # the default listen backlog (5) resets connections a concurrent run opens at once

    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeServer:
    """Subclasses set `path` (the endpoint) and `error_body(code)`; everything else is shared."""

    path = "/"
    url_suffix = ""

    def __init__(self, script: list[Step] | Responder):
        self._state = _State(script=script)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- what tests read ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.url_suffix}"

    @property
    def requests(self) -> list[Request]:
        with self._state.lock:
            return list(self._state.requests)

    def error_body(self, code: int) -> dict[str, Any]:
        return {"error": {"message": f"injected error {code}"}}

    def adapt(self, request: Request, step: Step) -> Step:
        """The step as this server sends it for this request (e.g. streamed when asked)."""
        return step

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> Self:
        state, fake = self._state, self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._reply_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                try:
                    data = json.loads(body) if body else None
                except ValueError:
                    data = None
                req = Request("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, data)
                with state.lock:
                    state.requests.append(req)
                    if callable(state.script):
                        step = None
                    else:
                        step = state.script[min(state.served, len(state.script) - 1)] if state.script else {}
                    state.served += 1
                if callable(state.script):
                    step = state.script(req)
                step = fake.adapt(req, step)
                if self.path.split("?")[0] != fake.path:
                    self._reply_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self._serve(step)

            def _serve(self, step: Step) -> None:
                if isinstance(step, Slow):
                    state.stopping.wait(step.seconds)
                    step = step.then if step.then is not None else {}
                if isinstance(step, Drop):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if isinstance(step, Garbage):
                    self._reply_raw(step.status, step.body, "text/html")
                    return
                if isinstance(step, Stream):
                    self._reply_stream(step)
                    return
                if isinstance(step, Status):
                    headers = {"retry-after": step.retry_after} if step.retry_after is not None else {}
                    body = step.body if step.body is not None else fake.error_body(step.code)
                    if isinstance(body, str):
                        self._reply_raw(step.code, body.encode(), "text/plain", headers)
                    else:
                        self._reply_json(step.code, body, headers)
                    return
                self._reply_json(200, step)

            def _reply_stream(self, stream: Stream) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                for name, data in stream.events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                if stream.hang:
                    state.stopping.wait()

            def _reply_json(self, code: int, data: Any, headers: dict[str, str] | None = None) -> None:
                self._reply_raw(code, json.dumps(data).encode(), "application/json", headers)

            def _reply_raw(self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
