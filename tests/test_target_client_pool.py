"""`ClientPool`: the API targets' keep-alive connections (one per call in flight, reused), and
httpx clients of at most `CALLS_PER_CLIENT` calls when the environment names a proxy; against
real servers."""

from __future__ import annotations

import asyncio
import gzip
import json
import select
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from omk.llm.connections import _readable
from omk.llm.http import CALLS_PER_CLIENT, ClientPool
from omk.targets.base import TargetError
from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply


class _Gauge:
    """Counts the requests the server holds at once; each waits until `release` is set."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = 0
        self.release = threading.Event()

    def __call__(self, request):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        self.release.wait(10)
        with self.lock:
            self.now -= 1
        return text_reply(f"echo {request.json['n']}")


def _post_many(url: str, n: int, gauge: _Gauge | None = None, base: str | None = None) -> tuple[list[str], ClientPool]:
    async def go():
        pool = ClientPool(base or url)
        try:
            calls = [
                asyncio.create_task(pool.post_json(f"{url}/chat/completions", {"n": i}, {}, "openai", []))
                for i in range(n)
            ]
            if gauge is not None:
                for _ in range(500):  # every call in flight at once before any is answered (5 s at most)
                    if gauge.now >= n:
                        break
                    await asyncio.sleep(0.01)
                gauge.release.set()
            replies = await asyncio.gather(*calls)
            return [r["choices"][0]["message"]["content"] for r in replies], (pool.clients, pool.connections)
        finally:
            await pool.aclose()

    return asyncio.run(go())


def test_concurrent_calls_get_a_connection_each():
    gauge = _Gauge()
    n = 2 * CALLS_PER_CLIENT + 3
    with ModelServer.for_openai(gauge) as fake:
        texts, (clients, connections) = _post_many(fake.url, n, gauge)
    assert texts == [f"echo {i}" for i in range(n)]  # each reply goes back to its own call
    assert gauge.peak == n  # the pool did not serialize anything
    assert (clients, connections) == (0, n)  # no httpx client; every connection kept for reuse


def test_calls_one_after_another_reuse_one_connection():
    with ModelServer.for_openai(lambda request: text_reply("ok")) as fake:

        async def go():
            pool = ClientPool(fake.url)
            try:
                for _ in range(5):
                    await pool.post_json(f"{fake.url}/chat/completions", {}, {}, "openai", [])
                return pool.connections
            finally:
                await pool.aclose()

        assert asyncio.run(go()) == 1  # kept alive: the server did not close it
        assert len(fake.requests) == 5



class _ClosesWhenIdle(BaseHTTPRequestHandler):
    """Answers one request on a keep-alive connection, then closes it without saying so (as a
    server does to an idle connection after its own timeout)."""

    protocol_version = "HTTP/1.1"
    peers: list[int] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        _ClosesWhenIdle.peers.append(self.client_address[1])
        body = json.dumps(text_reply("ok")).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("poll", [True, False], ids=["poll", "select"])
def test_a_socket_with_something_to_read_is_told_apart_from_an_idle_one(monkeypatch, poll):
    if not poll:  # as on Windows, where select has no poll()
        monkeypatch.delattr(select, "poll")
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert _readable(ours) is False  # idle: still usable
        theirs.close()  # the other end hung up
        assert _readable(ours) is True
    assert _readable(None) is True  # no socket to ask: not reusable


def test_an_idle_connection_the_server_closed_is_not_reused():
    server = _Server(("127.0.0.1", 0), _ClosesWhenIdle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _ClosesWhenIdle.peers = []
    url = f"http://127.0.0.1:{server.server_port}/v1"

    async def go():
        pool = ClientPool(url)
        try:
            replies = []
            for _ in range(3):
                replies.append(await pool.post_json(f"{url}/chat/completions", {}, {}, "openai", []))
                await asyncio.sleep(0.05)  # the server's close reaches the client
            return [r["choices"][0]["message"]["content"] for r in replies]
        finally:
            await pool.aclose()

    try:
        assert asyncio.run(go()) == ["ok"] * 3  # no call failed on a closed connection
    finally:
        server.shutdown()
    assert len(set(_ClosesWhenIdle.peers)) == 3  # each call on a new connection

class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog (5) resets calls that connect at once


class _Proxy(BaseHTTPRequestHandler):
    """Stands for an HTTP proxy: records the absolute URL it was asked for and answers itself."""

    protocol_version = "HTTP/1.1"
    seen: list[str] = []

    def do_POST(self) -> None:
        n = json.loads(self.rfile.read(int(self.headers["content-length"])))["n"]
        _Proxy.seen.append(self.path)
        body = json.dumps(text_reply(f"echo {n}")).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_from_the_environment_is_used_through_httpx_clients_of_eight(monkeypatch, variable):
    server = _Server(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, f"http://127.0.0.1:{server.server_port}")
    _Proxy.seen = []
    try:
        base = "http://models.example.test/v1"
        texts, (clients, connections) = _post_many(base, 2 * CALLS_PER_CLIENT + 3, base=base)
    finally:
        server.shutdown()
    assert texts == [f"echo {i}" for i in range(19)]
    assert set(_Proxy.seen) == {f"{base}/chat/completions"}  # absolute-form: the request went to the proxy
    assert clients >= 1
    assert connections == 0


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_reply_is_decoded(encoding):
    import zlib

    reply = json.dumps(text_reply("squeezed")).encode()
    packed = gzip.compress(reply) if encoding == "gzip" else zlib.compress(reply)

    class Compressing(_Proxy):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            assert "gzip" in self.headers["accept-encoding"]
            self.send_response(200)
            self.send_header("content-encoding", encoding)
            self.send_header("content-length", str(len(packed)))
            self.end_headers()
            self.wfile.write(packed)

    server = _Server(("127.0.0.1", 0), Compressing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1"

    async def go():
        pool = ClientPool(url)
        try:
            return await pool.post_json(f"{url}/chat/completions", {}, {}, "openai", [])
        finally:
            await pool.aclose()

    try:
        assert asyncio.run(go())["choices"][0]["message"]["content"] == "squeezed"
    finally:
        server.shutdown()


def _tls_of(url: str) -> ssl.SSLContext:
    async def go():
        pool = ClientPool(url)
        tls = pool._tls_context()
        await pool.aclose()
        return tls

    return asyncio.run(go())


def test_plain_http_skips_the_ca_bundle_but_would_still_refuse_an_unverified_peer():
    tls = _tls_of("http://127.0.0.1:9/v1")
    assert tls.get_ca_certs() == []
    assert tls.cert_store_stats()["x509_ca"] == 0
    assert tls.verify_mode == ssl.CERT_REQUIRED
    assert tls.check_hostname  # fails closed, never unverified


def test_https_loads_trusted_certificates():
    tls = _tls_of("https://api.example.com/v1")
    assert tls.cert_store_stats()["x509_ca"] > 0
    assert tls.verify_mode == ssl.CERT_REQUIRED
    assert tls.check_hostname


def test_closing_the_pool_with_calls_in_flight_lets_them_end_with_their_own_error():
    """A run stopped mid-way closes the target, then cancels its calls: they must end cancelled."""
    gauge = _Gauge()
    with ModelServer.for_openai(gauge) as fake:

        async def go():
            pool = ClientPool(fake.url)
            calls = [
                asyncio.create_task(pool.post_json(f"{fake.url}/chat/completions", {"n": i}, {}, "openai", []))
                for i in range(3)
            ]
            for _ in range(500):
                if gauge.now >= 3:
                    break
                await asyncio.sleep(0.01)
            await pool.aclose()
            for call in calls:
                call.cancel()
            outcomes = await asyncio.gather(*calls, return_exceptions=True)
            gauge.release.set()
            return outcomes, pool.clients + pool.connections

        outcomes, opened = asyncio.run(go())
    assert opened == 0
    assert all(isinstance(o, asyncio.CancelledError | TargetError) for o in outcomes), outcomes


def _self_signed(folder) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "omk test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_file), str(key_file)


def test_https_calls_verify_the_server_and_keep_the_connection(tmp_path, monkeypatch):
    cert, key = _self_signed(tmp_path)
    server = _Server(("127.0.0.1", 0), _Proxy)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{server.server_port}/v1"

    async def call(n: int) -> tuple[list[str], int]:
        pool = ClientPool(url)
        try:
            replies = [await pool.post_json(f"{url}/chat/completions", {"n": i}, {}, "openai", []) for i in range(n)]
            return [r["choices"][0]["message"]["content"] for r in replies], pool.connections
        finally:
            await pool.aclose()

    try:
        with pytest.raises(TargetError, match="connection failed: .*CERTIFICATE_VERIFY_FAILED"):
            asyncio.run(call(1))  # not trusted: the CA bundle does not hold it
        monkeypatch.setenv("SSL_CERT_FILE", cert)
        assert asyncio.run(call(3)) == (["echo 0", "echo 1", "echo 2"], 1)
    finally:
        server.shutdown()
