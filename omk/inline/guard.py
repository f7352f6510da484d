"""The connection layer of URL inlining: every address checked against `UrlPolicy` before omk
connects, and the connection made to the very address that was checked.

httpx hands each new connection to an httpcore network backend as (host, port). `GuardedBackend`
resolves the name once, drops the addresses the policy refuses, and connects by IP to the first
one left; TLS still verifies the certificate against the name (SNI), and the Host header is the
URL's. A DNS answer that changes between a check and a connect (DNS rebinding) cannot win, because
there is no second lookup. Redirects open their connections through the same backend, so every
hop is checked.

Behind a proxy (HTTP_PROXY / HTTPS_PROXY / ALL_PROXY, honoured as httpx does, NO_PROXY included)
the proxy resolves the name and omk never sees the address it connects to. omk then resolves the
name itself before each request and refuses it when that gives an inside address or nothing at
all; the proxy's own rules are the last line there (docs/security.md).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore
import httpx

from omk.inline.policy import Refusal, UrlPolicy, parse_ip

Resolver = Callable[[str, int], Awaitable[list[str]]]


class AddressRefused(httpcore.ConnectError):
    """The policy refused every address the host resolved to."""

    def __init__(self, refusal: Refusal):
        super().__init__(refusal.reason)
        self.refusal = refusal


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of `host`, in the order the system resolver gives them (one lookup)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def checked_addresses(policy: UrlPolicy, host: str, port: int, resolver: Resolver) -> list[str]:
    """The addresses of `host` the policy lets omk connect to; AddressRefused when there is none."""
    literal = parse_ip(host)
    addresses = [str(literal)] if literal is not None else await resolver(host, port)
    allowed, first_refusal = [], None
    for address in addresses:
        ip = parse_ip(address)
        if ip is None:
            continue
        refusal = policy.refusal(host, port, ip)
        if refusal is None:
            allowed.append(address)
        elif first_refusal is None:
            first_refusal = refusal
    if not allowed:
        if first_refusal is None:
            raise httpcore.ConnectError(f"{host}: the name resolved to no address")
        raise AddressRefused(first_refusal)
    return allowed


class Unverifiable(httpcore.ConnectError):
    """Behind a proxy, a name that does not resolve here: omk cannot tell where it leads."""


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore backend that connects only to addresses the policy allows (one lookup each)."""

    def __init__(self, policy: UrlPolicy, resolver: Resolver = system_resolver):
        self.policy = policy
        self.resolver = resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await checked_addresses(self.policy, host, port, self.resolver)
        except OSError as exc:  # socket.gaierror: the name does not resolve
            raise httpcore.ConnectError(str(exc)) from exc
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("URL inlining does not connect to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool built on `GuardedBackend`.

    httpx does not take a network backend as an argument, so the pool it built is replaced by one
    with the same settings and the guarded backend (tests/test_url_policy.py fails if a future
    httpx stops using it: every refusal test would connect).
    """

    def __init__(self, policy: UrlPolicy, resolver: Resolver = system_resolver):
        super().__init__()
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(policy, resolver),
        )


class ProxiedTransport(httpx.AsyncHTTPTransport):
    """Through a proxy: omk resolves the name itself and refuses inside addresses before sending."""

    def __init__(self, proxy: str, policy: UrlPolicy, resolver: Resolver = system_resolver):
        super().__init__(proxy=proxy)
        self.policy = policy
        self.resolver = resolver

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host, port = request.url.host, request.url.port or (443 if request.url.scheme == "https" else 80)
        if not self.policy.allows_host(host, port):
            try:
                await checked_addresses(self.policy, host, port, self.resolver)
            except AddressRefused as exc:
                raise httpx.ConnectError(str(exc), request=request) from exc
            except (OSError, httpcore.ConnectError):
                unverifiable = Unverifiable(
                    f"refused: {host} does not resolve here, so omk cannot check where the proxy would take it; "
                    f"allow it with --url-allow {host}"
                )
                raise httpx.ConnectError(str(unverifiable), request=request) from unverifiable
        return await super().handle_async_request(request)


def proxy_mounts(policy: UrlPolicy, resolver: Resolver = system_resolver) -> dict[str, httpx.AsyncBaseTransport | None]:
    """The proxies of the environment as httpx would mount them, each a `ProxiedTransport`."""
    try:
        from httpx._utils import get_environment_proxies  # the same reading of *_PROXY as httpx's own
    except ImportError:  # pragma: no cover - a future httpx: no proxy rather than an unchecked one
        return {}
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
    for pattern, proxy in get_environment_proxies().items():
        if proxy is None:
            mounts[pattern] = None  # NO_PROXY: straight through the guarded transport
        elif proxy.startswith(("http://", "https://")):
            mounts[pattern] = ProxiedTransport(proxy, policy, resolver)
    return mounts


def guarded_client(policy: UrlPolicy, resolver: Resolver = system_resolver, **kwargs: Any) -> httpx.AsyncClient:
    """An httpx client whose every connection, redirects included, goes through the policy."""
    return httpx.AsyncClient(transport=GuardedTransport(policy, resolver), mounts=proxy_mounts(policy, resolver), **kwargs)


def refusal_of(exc: BaseException) -> str | None:
    """The refusal message inside an httpx error, if the policy is why it failed."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AddressRefused | Unverifiable):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return None
