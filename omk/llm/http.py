"""HTTP plumbing for every model call (API targets and the judge): settings, clients, and error
classification.

Calls only classify failures (`CallError.retryable`, `retry_after`); the retry loop retries.
Secrets are redacted from every message this module builds, because servers sometimes echo
the key they were sent.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from omk.core.errors import ConfigError
from omk.llm.errors import CallError
from omk.llm.pricing import price_setting
from omk.version import __version__

if TYPE_CHECKING:  # httpx is slow to import: it is loaded when the first call is made, not for a cached rerun
    import httpx

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
PROVIDER_KEYS = {"base_url", "api_key_env", "params", "price", "max_reply_bytes"}
EXCERPT_CHARS = 200
MAX_REPLY_BYTES = 64 * 1024 * 1024  # a model's reply larger than this is an error, not a memory blow-up


@dataclass(slots=True)
class ProviderSettings:
    """One provider's connection settings, resolved from omk.yaml and the environment."""

    name: str  # "openai" | "anthropic"
    base_url: str
    api_key: str | None = field(repr=False)
    api_key_env: str
    params: dict[str, Any]
    price: tuple[float, float] | None = None  # USD per 1M tokens (input, output) from omk.yaml
    max_reply_bytes: int = MAX_REPLY_BYTES  # omk.yaml `<provider>.max_reply_bytes`

    @property
    def is_local(self) -> bool:
        return is_local_url(self.base_url)

    def secrets(self) -> list[str]:
        return [self.api_key] if self.api_key else []


def is_local_url(url: str) -> bool:
    return (urlsplit(url).hostname or "").lower() in LOCAL_HOSTS


def public_url(url: str) -> str:
    """The URL without any `user:password@` part, for reports."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def provider_settings(name: str, settings: Mapping[str, Any] | None, default_base: str, spec: str) -> ProviderSettings:
    """Read `settings[name]` (the omk.yaml block) and the environment; ConfigError when unusable.

    The environment overrides omk.yaml. A key is required unless the base URL is local.
    """
    block = (settings or {}).get(name) or {}
    if not isinstance(block, dict):
        raise ConfigError(f"omk.yaml {name}: must be a mapping")
    if "api_key" in block:
        raise ConfigError(
            f"omk.yaml {name}.api_key: keys do not belong in omk.yaml; put the key in an environment "
            f"variable and name it with {name}.api_key_env"
        )
    unknown = sorted(set(block) - PROVIDER_KEYS)
    if unknown:
        raise ConfigError(f"omk.yaml {name}.{unknown[0]}: unknown setting; expected one of {', '.join(sorted(PROVIDER_KEYS))}")
    env_prefix = name.upper()
    base_url = os.environ.get(f"{env_prefix}_BASE_URL") or block.get("base_url") or default_base
    if not isinstance(base_url, str) or urlsplit(base_url).scheme not in ("http", "https"):
        raise ConfigError(f"{name} base URL {base_url!r}: must be an http(s) URL")
    key_env = block.get("api_key_env") or f"{env_prefix}_API_KEY"
    if not isinstance(key_env, str):
        raise ConfigError(f"omk.yaml {name}.api_key_env: must be the name of an environment variable")
    params = block.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"omk.yaml {name}.params: must be a mapping (temperature, max_tokens, …)")
    price_pair = price_setting(block, name)
    resolved = ProviderSettings(
        name=name,
        base_url=base_url.rstrip("/"),
        api_key=os.environ.get(key_env) or None,
        api_key_env=key_env,
        params=dict(params),
        price=price_pair,
        max_reply_bytes=_reply_cap(block, name),
    )
    if resolved.api_key is None and not resolved.is_local:
        from omk.io.process import key_missing

        who = f"judge {spec.removeprefix('judge ')!r}" if spec.startswith("judge ") else f"target {spec!r}"  # as the judge's own errors say it
        message = f"{who}: no API key: set {key_env} (a local base URL such as http://127.0.0.1:8000 needs none)"
        if not key_missing(message):
            raise ConfigError(message)
    return resolved


def _reply_cap(block: dict[str, Any], name: str) -> int:
    cap = block.get("max_reply_bytes", MAX_REPLY_BYTES)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1024:
        raise ConfigError(f"omk.yaml {name}.max_reply_bytes: must be a whole number of bytes, at least 1024 (got {cap!r})")
    return cap


CALLS_PER_CLIENT = 8  # calls per httpx client, on the proxy path
CONNECT_TIMEOUT = 30.0
ACCEPT_ENCODING = "gzip, deflate"  # what `read_capped` undoes, on both paths (httpx would add br and zstd)
REQUEST_HEADERS = (
    (b"accept", b"*/*"),
    (b"accept-encoding", ACCEPT_ENCODING.encode("ascii")),
    (b"user-agent", f"omk/{__version__}".encode("ascii")),
)


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")  # any case


def _environment_proxy() -> bool:
    """Whether a proxy is set (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, or the system's settings on
    macOS and Windows): those calls go through httpx, which applies proxies and NO_PROXY."""
    if any(value and name.lower() in PROXY_VARIABLES for name, value in os.environ.items()):
        return True
    if sys.platform.startswith("linux"):
        return False  # the environment is all urllib's getproxies reads there; its import is not free
    from urllib.request import getproxies

    return any(scheme in getproxies() for scheme in ("http", "https", "all"))


class ClientPool:
    """How one target (or judge) posts its calls: keep-alive connections of its own, reused
    across calls (`omk.llm.connections`), one per call in flight.

    When the environment names a proxy the calls go through httpx clients instead, each carrying
    at most `CALLS_PER_CLIENT` calls (httpx's own pool does work proportional to the square of the
    calls in flight). Either way replies are read up to `max_bytes` and every error is classified.

    A plain-http base URL (a local server) gets an empty TLS context instead of the CA bundle,
    which is slow to load and would never be used: redirects are not followed. Empty is not
    unverified: a TLS connection made through it anyway (an https proxy) fails closed.
    """

    def __init__(self, base_url: str, timeout: float = 600.0, max_bytes: int = MAX_REPLY_BYTES):
        self.base_url = base_url
        self.timeout = timeout  # the run engine's --timeout bounds each call anyway
        self.max_bytes = max_bytes
        self._tls: Any = None
        self._proxied = _environment_proxy()
        self._pool: Any = None  # omk.llm.connections.ConnectionPool, opened on the first call
        self._urls: dict[str, tuple[Any, bytes]] = {}  # url -> (httpcore.URL, Host header)
        self._slots: list[_Slot] = []

    async def post_json(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], provider: str, secrets: list[str]
    ) -> dict[str, Any]:
        """POST JSON; the JSON object reply, or a classified `CallError`."""
        if self._proxied:
            status, head, raw = await self._post_httpx(url, payload, headers, provider, secrets)
        else:
            status, head, raw = await self._post_direct(url, payload, headers, provider, secrets)
        return json_reply(status, head, raw, provider, secrets)

    async def _post_direct(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], provider: str, secrets: list[str]
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        import httpcore

        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        target, host = self._url(url)
        head = [(b"host", host), *REQUEST_HEADERS, *((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items())]
        if "content-type" not in headers:
            head.append((b"content-type", b"application/json"))
        head.append((b"content-length", str(len(body)).encode("ascii")))
        timeouts = {"connect": CONNECT_TIMEOUT, "read": self.timeout, "write": self.timeout, "pool": self.timeout}
        request = httpcore.Request(b"POST", target, headers=head, content=body, extensions={"timeout": timeouts})
        try:
            return await self._connections(target).request(request, self._reader(provider))
        except transport_errors() as exc:
            raise transport_error(exc, provider, secrets, url) from None

    def _url(self, url: str) -> tuple[Any, bytes]:
        known = self._urls.get(url)
        if known is None:
            import httpcore

            netloc = urlsplit(url).netloc.rpartition("@")[2]
            known = self._urls[url] = (httpcore.URL(url), netloc.encode("idna"))
        return known

    def _connections(self, target: Any) -> Any:
        if self._pool is None:
            from omk.llm.connections import ConnectionPool

            self._pool = ConnectionPool(target.origin, self._tls_context())
        return self._pool

    def _reader(self, provider: str) -> Any:
        async def read(response: Any) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            body = await read_capped(response.headers, response.aiter_stream(), self.max_bytes, provider)
            return response.status, response.headers, body

        return read

    async def _post_httpx(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], provider: str, secrets: list[str]
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The proxy path: the least busy httpx client."""
        import httpx

        slot = self._pick()
        slot.busy += 1
        try:
            async with slot.client.stream("POST", url, json=payload, headers=headers) as streamed:
                body = await read_capped(streamed.headers.raw, streamed.aiter_raw(), self.max_bytes, provider)
            return streamed.status_code, streamed.headers.raw, body
        except httpx.HTTPError as exc:
            raise transport_error(exc, provider, secrets, url) from None
        finally:
            slot.busy -= 1  # on the slot itself: `aclose` may have emptied the list meanwhile

    def _pick(self) -> _Slot:
        if self._slots:
            slot = min(self._slots, key=_busy)
            if slot.busy < CALLS_PER_CLIENT:
                return slot
        slot = _Slot(self._new_client())
        self._slots.append(slot)
        return slot

    def _tls_context(self) -> Any:
        if self._tls is None:
            if urlsplit(self.base_url).scheme == "http":
                import ssl

                self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            else:
                import httpx

                self._tls = httpx.create_ssl_context(verify=True, trust_env=True)  # SSL_CERT_FILE/DIR, else certifi
        return self._tls

    def _new_client(self) -> httpx.AsyncClient:
        import httpx

        timeout = httpx.Timeout(self.timeout, connect=CONNECT_TIMEOUT)
        return httpx.AsyncClient(
            verify=self._tls_context(), timeout=timeout, follow_redirects=False, headers={"accept-encoding": ACCEPT_ENCODING}
        )

    @property
    def clients(self) -> int:
        """httpx clients open (the proxy path)."""
        return len(self._slots)

    @property
    def connections(self) -> int:
        """Connections open on the direct path, idle or busy."""
        return self._pool.connections if self._pool is not None else 0

    async def aclose(self) -> None:
        slots, self._slots = self._slots, []
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.aclose()
        for slot in slots:
            await slot.client.aclose()


@dataclass(slots=True)
class _Slot:
    client: httpx.AsyncClient
    busy: int = 0  # calls in flight on this client


def _busy(slot: _Slot) -> int:
    return slot.busy


def redact(text: str, secrets: list[str]) -> str:
    """`text` with each secret replaced by `[redacted]`. Call it before any cut (`excerpt`): a key
    cut in two is no longer found."""
    from omk.core.secrets import Masker

    return Masker(secrets)(text)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds: a number, or an HTTP date (seconds from now, at least 0)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds)


RawHeaders = list[tuple[bytes, bytes]]


def header(headers: RawHeaders, name: bytes) -> str | None:
    """The first value of header `name` (lower case), or None."""
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _text(body: bytes, headers: RawHeaders) -> str:
    """The body as text: the charset of its Content-Type, else UTF-8; undecodable bytes replaced."""
    from email.message import Message

    message = Message()
    message["content-type"] = header(headers, b"content-type") or ""
    charset = message.get_content_charset() or "utf-8"
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _error_detail(text: str, secrets: list[str]) -> str:
    """The server's own message when the body is the usual `{"error": {"message": …}}`, masked
    before it is shortened (a server may echo the key it was sent)."""
    text = redact(text, secrets)
    try:
        data = json.loads(text)
    except ValueError:
        return excerpt(text) if text.strip() else "(empty body)"
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return excerpt(err["message"])
        if isinstance(err, str):
            return excerpt(err)
        if isinstance(data.get("message"), str):
            return excerpt(data["message"])
    return excerpt(text)


def status_error(status: int, headers: RawHeaders, body: bytes, provider: str, secrets: list[str]) -> CallError:
    """429 and 5xx are transient (with the server's Retry-After); any other status is final."""
    retryable = status == 429 or status >= 500
    retry_after = parse_retry_after(header(headers, b"retry-after")) if retryable else None
    message = f"{provider}: HTTP {status}: {_error_detail(_text(body, headers), secrets)}"
    return CallError(redact(message, secrets), retryable=retryable, retry_after=retry_after)


def transport_errors() -> tuple[type[Exception], ...]:
    """httpcore's failures of a call in flight (imported when the first call is made)."""
    import httpcore

    return (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError,
            httpcore.UnsupportedProtocol)


def transport_error(exc: Exception, provider: str, secrets: list[str], url: str | None = None) -> CallError:
    """Timeouts and connection failures (httpx's or httpcore's, whose classes share their names) are
    transient. A refused or reset connection says so, with the URL: it is no timeout."""
    import httpcore
    import httpx

    where = f": {public_url(url)}" if url else ""
    cause = _connection_cause(exc)
    if cause is not None:
        message = f"{provider}: {cause}{where}"
    elif isinstance(exc, httpx.TimeoutException | httpcore.TimeoutException):
        message = f"{provider}: request timed out ({type(exc).__name__}){where}"
    else:
        detail = str(exc) or type(exc).__name__
        message = f"{provider}: connection failed: {detail}{where}"
    retryable = isinstance(exc, (httpx.TransportError, *transport_errors()))
    return CallError(redact(message, secrets), retryable=retryable)


def _connection_cause(exc: BaseException) -> str | None:
    """"connection refused" / "connection reset" when the failure (or what caused it) was one."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        text = str(seen).lower()
        if isinstance(seen, ConnectionRefusedError) or "connection refused" in text:
            return "connection refused"
        if isinstance(seen, ConnectionResetError) or "connection reset" in text:
            return "connection reset"
        seen = seen.__cause__ or seen.__context__
    return None


def json_reply(status: int, headers: RawHeaders, body: bytes, provider: str, secrets: list[str]) -> dict[str, Any]:
    """The JSON object of a reply (`body`: decoded by `read_capped`), or a classified `CallError`."""
    if status >= 400:
        raise status_error(status, headers, body, provider, secrets)
    try:
        data = json.loads(body)
    except ValueError:
        body_text = excerpt(redact(_text(body, headers), secrets)) or "(empty body)"
        raise CallError(redact(f"{provider}: reply is not JSON (HTTP {status}): {body_text}", secrets)) from None
    if not isinstance(data, dict):
        raise CallError(redact(f"{provider}: reply is not a JSON object: {excerpt(redact(_text(body, headers), secrets))}", secrets))
    return data


def _over_cap(provider: str, max_bytes: int, size: str = "") -> CallError:
    what = f"the reply is {size} bytes," if size else "the reply is"
    return CallError(f"{provider}: {what} over the {max_bytes}-byte cap (max_reply_bytes in omk.yaml)")


async def read_capped(headers: RawHeaders, chunks: Any, max_bytes: int, provider: str) -> bytes:
    """The body from the async iterator `chunks` (the raw bytes as sent), its Content-Encoding
    undone as it arrives (omk.io.content_encoding); a `CallError` once the raw or the decoded body
    passes `max_bytes` (or says it will), before more than that is held."""
    from omk.io.content_encoding import BadEncoding, BodyReader, BodyTooLarge

    declared = header(headers, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _over_cap(provider, max_bytes, declared)
    try:
        encodings = ", ".join(v.decode("latin-1") for k, v in headers if k.lower() == b"content-encoding")
        reader = BodyReader(encodings, max_bytes)
        async for chunk in chunks:
            reader.feed(chunk)
    except BodyTooLarge:
        raise _over_cap(provider, max_bytes) from None
    except BadEncoding as exc:
        raise CallError(f"{provider}: {exc}") from None
    return reader.body()
