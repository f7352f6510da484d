"""`ClientPool`: the API targets' httpx clients, at most `CALLS_PER_CLIENT` calls each, against a real server."""

from __future__ import annotations

import asyncio
import ssl
import threading

from servers.openai_fake import OpenAIFake, text_reply

from omk.llm.http import CALLS_PER_CLIENT, ClientPool
from omk.targets.base import TargetError


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


def _post_many(url: str, n: int, gauge: _Gauge | None = None) -> tuple[list[str], int]:
    async def go():
        pool = ClientPool(url)
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
            return [r["choices"][0]["message"]["content"] for r in replies], pool.clients
        finally:
            await pool.aclose()

    return asyncio.run(go())


def test_concurrent_calls_are_spread_over_clients_of_eight():
    gauge = _Gauge()
    n = 2 * CALLS_PER_CLIENT + 3
    with OpenAIFake(gauge) as fake:
        texts, clients = _post_many(fake.url, n, gauge)
    assert texts == [f"echo {i}" for i in range(n)]  # each reply goes back to its own call
    assert gauge.peak == n  # the pool did not serialize anything
    assert clients == 3  # ceil(19 / 8)


def test_calls_one_after_another_share_one_client():
    with OpenAIFake(lambda request: text_reply("ok")) as fake:

        async def go():
            pool = ClientPool(fake.url)
            try:
                for _ in range(5):
                    await pool.post_json(f"{fake.url}/chat/completions", {}, {}, "openai", [])
                return pool.clients
            finally:
                await pool.aclose()

        assert asyncio.run(go()) == 1


def _tls_of(url: str) -> ssl.SSLContext:
    async def go():
        pool = ClientPool(url)
        pool._new_client()
        tls = pool._tls
        await pool.aclose()
        return tls

    return asyncio.run(go())


def test_plain_http_skips_the_ca_bundle_but_would_still_refuse_an_unverified_peer():
    tls = _tls_of("http://127.0.0.1:9/v1")
    assert tls.get_ca_certs() == [] and tls.cert_store_stats()["x509_ca"] == 0
    assert tls.verify_mode == ssl.CERT_REQUIRED and tls.check_hostname  # fails closed, never unverified


def test_https_loads_trusted_certificates():
    tls = _tls_of("https://api.example.com/v1")
    assert tls.cert_store_stats()["x509_ca"] > 0
    assert tls.verify_mode == ssl.CERT_REQUIRED and tls.check_hostname


def test_closing_the_pool_with_calls_in_flight_lets_them_end_with_their_own_error():
    """A run stopped mid-way closes the target, then cancels its calls: they must end cancelled."""
    gauge = _Gauge()
    with OpenAIFake(gauge) as fake:

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
            return outcomes, pool.clients

        outcomes, clients = asyncio.run(go())
    assert clients == 0
    assert all(isinstance(o, asyncio.CancelledError | TargetError) for o in outcomes), outcomes
