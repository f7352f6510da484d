"""HTTP plumbing for every model call (API targets and the judge): settings, clients, and error
classification.

Calls only classify failures (`CallError.retryable`, `retry_after`); the retry loop retries.
Secrets are redacted from every message this module builds, because servers sometimes echo
the key they were sent.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from omk.errors import ConfigError
from omk.llm.errors import CallError

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


def provider_settings(name: str, settings: dict[str, Any] | None, default_base: str, spec: str) -> ProviderSettings:
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
    price = block.get("price")
    price_pair = None
    if price is not None:
        if not (isinstance(price, dict) and all(isinstance(price.get(k), int | float) for k in ("input", "output"))):
            raise ConfigError(f"omk.yaml {name}.price: must be {{input: USD per 1M tokens, output: USD per 1M tokens}}")
        price_pair = (float(price["input"]), float(price["output"]))
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
        raise ConfigError(
            f"target {spec!r}: no API key: set {key_env} (a local base URL such as http://127.0.0.1:8000 needs none)"
        )
    return resolved


def _reply_cap(block: dict[str, Any], name: str) -> int:
    cap = block.get("max_reply_bytes", MAX_REPLY_BYTES)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1024:
        raise ConfigError(f"omk.yaml {name}.max_reply_bytes: must be a whole number of bytes, at least 1024 (got {cap!r})")
    return cap


CALLS_PER_CLIENT = 8


class ClientPool:
    """The httpx clients of one target (or judge), each carrying at most `CALLS_PER_CLIENT` calls.

    httpcore's connection pool scans every connection (a poll() each) and every waiting request
    twice per request, so its CPU cost grows with the square of the calls in flight: at high
    concurrency one client makes the run CPU-bound (docs/benchmarks.md). Clients of 8 keep each scan short; they are opened as the concurrency
    reached needs them and share one TLS context.

    A plain-http base URL (a local server) gets an empty TLS context instead of the CA bundle,
    which is slow to load and would never be used: redirects are not followed. Empty is not
    unverified: a TLS connection made through it anyway (an https proxy) fails closed.
    """

    def __init__(self, base_url: str, timeout: float = 600.0, max_bytes: int = MAX_REPLY_BYTES):
        self.base_url = base_url
        self.timeout = timeout  # the run engine's --timeout bounds each call anyway
        self.max_bytes = max_bytes
        self._tls: Any = None
        self._slots: list[_Slot] = []

    async def post_json(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], provider: str, secrets: list[str]
    ) -> dict[str, Any]:
        """`post_json` through the least busy client."""
        slot = self._pick()
        slot.busy += 1
        try:
            return await post_json(slot.client, url, payload, headers, provider, secrets, self.max_bytes)
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

    def _new_client(self) -> httpx.AsyncClient:
        import httpx

        if self._tls is None:
            if urlsplit(self.base_url).scheme == "http":
                import ssl

                self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            else:
                self._tls = httpx.create_ssl_context(verify=True, trust_env=True)  # SSL_CERT_FILE/DIR, else certifi
        timeout = httpx.Timeout(self.timeout, connect=30.0)
        return httpx.AsyncClient(verify=self._tls, timeout=timeout, follow_redirects=False)

    @property
    def clients(self) -> int:
        return len(self._slots)

    async def aclose(self) -> None:
        slots, self._slots = self._slots, []
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
    from omk.secrets import Masker

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


def _error_detail(response: httpx.Response, secrets: list[str]) -> str:
    """The server's own message when the body is the usual `{"error": {"message": …}}`, masked
    before it is shortened (a server may echo the key it was sent)."""
    text = redact(response.text, secrets)
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


def status_error(response: httpx.Response, provider: str, secrets: list[str]) -> CallError:
    """429 and 5xx are transient (with the server's Retry-After); any other status is final."""
    status = response.status_code
    retryable = status == 429 or status >= 500
    retry_after = parse_retry_after(response.headers.get("retry-after")) if retryable else None
    message = f"{provider}: HTTP {status}: {_error_detail(response, secrets)}"
    return CallError(redact(message, secrets), retryable=retryable, retry_after=retry_after)


def transport_error(exc: httpx.HTTPError, provider: str, secrets: list[str]) -> CallError:
    """Timeouts and connection failures are transient."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        message = f"{provider}: request timed out ({type(exc).__name__})"
    else:
        detail = str(exc) or type(exc).__name__
        message = f"{provider}: connection failed: {detail}"
    return CallError(redact(message, secrets), retryable=isinstance(exc, httpx.TransportError))


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    provider: str,
    secrets: list[str],
    max_bytes: int = MAX_REPLY_BYTES,
) -> dict[str, Any]:
    """POST JSON and return the JSON object reply, or raise a classified `CallError`. The reply is
    read up to `max_bytes`: a server that sends more fails the call instead of filling memory."""
    import httpx

    try:
        async with client.stream("POST", url, json=payload, headers=headers) as streamed:
            body = await _read_capped(streamed, max_bytes, provider)
    except httpx.HTTPError as exc:
        raise transport_error(exc, provider, secrets) from None
    response = httpx.Response(streamed.status_code, headers=streamed.headers, content=body, request=streamed.request)
    if response.status_code >= 400:
        raise status_error(response, provider, secrets)
    try:
        data = response.json()
    except ValueError:
        body_text = excerpt(redact(response.text, secrets)) or "(empty body)"
        raise CallError(redact(f"{provider}: reply is not JSON (HTTP {response.status_code}): {body_text}", secrets)) from None
    if not isinstance(data, dict):
        raise CallError(redact(f"{provider}: reply is not a JSON object: {excerpt(redact(response.text, secrets))}", secrets))
    return data


async def _read_capped(response: httpx.Response, max_bytes: int, provider: str) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise CallError(f"{provider}: the reply is {declared} bytes, over the {max_bytes}-byte cap (max_reply_bytes in omk.yaml)")
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise CallError(f"{provider}: the reply is over the {max_bytes}-byte cap (max_reply_bytes in omk.yaml)")
        chunks.append(chunk)
    return b"".join(chunks)
