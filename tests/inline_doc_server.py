"""A loopback HTTP server of documents for the URL-inlining tests (stdlib, one thread per request).

Paths: /doc.html (an HTML page), /plain.txt, /missing (404), /private (401), /forbidden (403),
/boom (500), /slow (answers after `SLOW_SECONDS`), /huge (3 MB, with Content-Length),
/stream-big (5,000 bytes without Content-Length), /redirect (302 → /doc.html),
/login-redirect (302 → /login?next=…), /login (a sign-in form), /short, /image.png, /gbk.html,
/redirect-to?to=URL (302 → URL, for redirects to addresses the policy refuses), /deep.html (HTML
nested 100,000 levels deep), /br-bomb.html (2 MB of `x<br>`, slow to turn into text).
`hits` counts requests per path, so a test can prove a URL was fetched once; `hosts` keeps each
request's Host header, and `proxied` the absolute-form targets (`GET http://name/path`) of the
requests it received as an HTTP proxy (it then serves the path as if it were the origin).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOW_SECONDS = 30.0  # the client gives up first; stopping the server releases it
HUGE_BYTES = 3 * 1024 * 1024

DOC_HTML = """<!doctype html>
<html><head><title>Feature X design</title>
<style>body { color: red }</style><script>var tracking = "SCRIPT-NOISE";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/other">NAV-NOISE</a></nav>
<h1>Feature X design</h1>
<p>Feature X lets users <b>export reports</b> as CSV &amp; JSON.</p>
<h2>Limits</h2>
<ul><li>At most 10,000 rows per export.</li><li>Exports expire after 24 hours.</li></ul>
<pre><code>omk export --format csv
</code></pre>
<script>console.log("SCRIPT-NOISE")</script>
<footer>FOOTER-NOISE copyright</footer>
</body></html>
"""

PLAIN_TEXT = (
    "Release notes 2.4\n\n"
    "The importer now accepts YAML anchors. The exporter writes UTF-8 with a BOM only when asked.\n"
)

LOGIN_HTML = """<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in to Corp Wiki</h1>
<form method="post" action="/session"><label>User <input name="user"></label>
<label>Password <input type="password" name="password"></label><button>Sign in</button></form>
</body></html>
"""

GBK_HTML = "<html><head><title>说明</title></head><body><p>这是一个用 GBK 编码的中文页面，内容足够长，可以作为文档内联到提示词中。</p><p>第二段：导出功能每次最多一万行，导出文件二十四小时后过期。</p></body></html>"


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - silence the default access log
        pass

    def _send(self, status: int, body: bytes | str, content_type: str = "text/plain; charset=utf-8", headers: dict | None = None):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def handle(self):
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up: expected
            super().handle()

    def do_GET(self):  # noqa: N802 - the stdlib's name
        server: DocServer = self.server.owner  # type: ignore[attr-defined]
        target = self.path
        if target.startswith(("http://", "https://")):  # absolute form: a request sent to a proxy
            with server.lock:
                server.proxied.append(target)
            target = "/" + target.split("://", 1)[1].partition("/")[2]
        path, _, query = target.partition("?")
        with server.lock:
            server.hits[path] += 1
            server.hosts.append(self.headers.get("Host", ""))
        if path == "/doc.html":
            self._send(200, DOC_HTML, "text/html; charset=utf-8")
        elif path == "/plain.txt":
            self._send(200, PLAIN_TEXT)
        elif path == "/missing":
            self._send(404, "no such page")
        elif path == "/private":
            self._send(401, "authentication required", headers={"WWW-Authenticate": "Bearer"})
        elif path == "/forbidden":
            self._send(403, "forbidden")
        elif path == "/boom":
            self._send(500, "internal error")
        elif path == "/slow":
            server.stop.wait(SLOW_SECONDS)
            self._send(200, PLAIN_TEXT)
        elif path == "/huge":
            self._send(200, b"x" * HUGE_BYTES)
        elif path == "/stream-big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            for _ in range(50):
                self.wfile.write(b"y" * 100)
            self.close_connection = True
        elif path == "/redirect-to":
            from urllib.parse import parse_qs

            self._send(302, "", headers={"Location": parse_qs(query)["to"][0]})
        elif path == "/deep.html":  # hostile: nested 100,000 levels deep
            self._send(200, "<html><body>" + "<div>" * 100_000 + "deep" + "</div>" * 100_000 + "</body></html>", "text/html")
        elif path == "/br-bomb.html":  # hostile: quick to send, tens of seconds of CPU to convert
            self._send(200, "<html><body>" + "x<br>" * 400_000 + "</body></html>", "text/html")
        elif path == "/redirect":
            self._send(302, "", headers={"Location": "/doc.html"})
        elif path == "/login-redirect":
            self._send(302, "", headers={"Location": "/login?next=/wiki/secret"})
        elif path == "/login":
            self._send(200, LOGIN_HTML, "text/html; charset=utf-8")
        elif path == "/short":
            self._send(200, "ok")
        elif path == "/image.png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 200, "image/png")
        elif path == "/gbk.html":
            self._send(200, GBK_HTML.encode("gbk"), "text/html; charset=gbk")
        else:
            self._send(404, "not found")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops connections when a run fetches many URLs at once


class DocServer:
    """Start with `with DocServer() as srv:`; `srv.url("/doc.html")` is a loopback URL."""

    def __init__(self):
        self.hits: Counter[str] = Counter()
        self.hosts: list[str] = []
        self.proxied: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def __enter__(self) -> DocServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def refused_url() -> str:
    """A loopback URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/nothing-here"
