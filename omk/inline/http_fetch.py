"""Fetching documents over HTTP(S) with httpx: one client for the run, redirects followed, a
deadline and a size cap per URL, HTML turned into text, login pages told apart from documents."""

from __future__ import annotations

import asyncio
import codecs
import socket
from urllib.parse import urlsplit

import httpx

from omk.inline.fetched import (
    HINT_ALLOW,
    HINT_AUTH,
    HINT_CONTENT,
    HINT_NETWORK,
    HINT_TOO_LARGE,
    Fetched,
    FetchFailure,
    hint_for_status,
)
from omk.inline.guard import Resolver, guarded_client, refusal_of, system_resolver
from omk.inline.html_text import page_text
from omk.inline.policy import UrlPolicy
from omk.io.content_encoding import BadEncoding, BodyTooLarge, accept_encoding, read_body
from omk.version import __version__

DEFAULT_TIMEOUT = 30.0  # seconds per URL, redirects and body included (as in omk 0.23)
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
MAX_IN_FLIGHT = 8
HEADERS = {
    "User-Agent": f"omk/{__version__} (url-fetcher)",
    "Accept": "text/html, text/plain, */*",
    "Accept-Encoding": accept_encoding(),  # what omk.io.content_encoding undoes
}

MIN_CONTENT_CHARS = 50  # shorter than this is not a document (as in omk 0.23)
LOGIN_WORDS = ("login", "log in", "sign in", "sign_in", "signin", "sso", "redirect_uri", "oauth", "unauthorized", "cas/login")
LOGIN_MAX_CHARS = 500  # a login word in a page this short: a login page (as in omk 0.23)
PASSWORD_PAGE_MAX_CHARS = 2000  # a password field in a page this short: a login form
LOGIN_PATH_WORDS = ("login", "signin", "sign-in", "sign_in", "sso", "oauth", "authorize", "auth/")

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "application/pdf", "application/zip",
                    "application/octet-stream", "application/gzip", "application/x-")
_TEXTUAL_APPLICATION = ("json", "xml", "javascript", "yaml", "toml", "markdown", "csv", "x-sh")


class _TooLarge(Exception):
    pass


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:g} MB" if n >= 1024 * 1024 else f"{n} bytes"


def _network_reason(exc: BaseException, timeout: float) -> str:
    """A network error in plain words: DNS, refused, reset, timeout, or the error's own text."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return "the host name cannot be resolved (DNS): check the URL"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, ConnectionResetError):
            return "connection reset"
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    lowered = text.lower()
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return f"request timed out ({timeout:g} s)"
    if "name or service not known" in lowered or "nodename nor servname" in lowered or "name resolution" in lowered:
        return "the host name cannot be resolved (DNS): check the URL"
    if "connection refused" in lowered or "errno 111" in lowered:
        return "connection refused"
    if "connection reset" in lowered:
        return "connection reset"
    return text or type(exc).__name__


def login_page_reason(text: str, final_url: str, redirected: bool, has_password_field: bool) -> str | None:
    """Why this looks like a sign-in page rather than the document, or None."""
    if redirected:
        path = urlsplit(final_url).path.lower() + "?" + urlsplit(final_url).query.lower()
        if any(w in path for w in LOGIN_PATH_WORDS):
            return f"redirected to a sign-in page ({final_url})"
    if has_password_field and len(text) < PASSWORD_PAGE_MAX_CHARS:
        return "got a sign-in form instead of the document"
    lowered = text.lower()
    if len(text) < LOGIN_MAX_CHARS and any(w in lowered for w in LOGIN_WORDS):
        return "got what looks like a sign-in page instead of the document"
    return None


def _known_charset(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


class HttpFetcher:
    """Fetches URLs for inlining. Every connection, redirects included, goes through `policy`
    (omk.inline.guard): inside addresses are refused unless allowed. `resolver` is for tests."""

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        policy: UrlPolicy | None = None,
        resolver: Resolver = system_resolver,
    ):
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._limit = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._client = guarded_client(
            policy or UrlPolicy(),
            resolver,
            headers=HEADERS,
            follow_redirects=True,
            timeout=httpx.Timeout(timeout),
            max_redirects=10,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, url: str) -> Fetched | FetchFailure:
        async with self._limit:
            try:
                async with asyncio.timeout(self.timeout):
                    return await self._fetch(url)
            except _TooLarge:
                return FetchFailure("http", f"larger than the {_mb(self.max_bytes)} size cap", HINT_TOO_LARGE)
            except httpx.TooManyRedirects:
                return FetchFailure("http", "too many redirects", HINT_CONTENT)
            except httpx.UnsupportedProtocol as exc:
                return FetchFailure("http", f"refused: only http and https URLs are fetched ({exc})", HINT_CONTENT)
            except httpx.InvalidURL as exc:
                return FetchFailure("http", f"invalid URL: {exc}", HINT_CONTENT)
            except (httpx.HTTPError, OSError, TimeoutError) as exc:
                refused = refusal_of(exc)
                if refused is not None:
                    return FetchFailure("http", refused, HINT_ALLOW)
                return FetchFailure("http", _network_reason(exc, self.timeout), HINT_NETWORK)

    async def _fetch(self, url: str) -> Fetched | FetchFailure:
        async with self._client.stream("GET", url) as response:
            if not response.is_success:
                reason = f"{response.status_code} {response.reason_phrase}".strip()
                return FetchFailure("http", reason, hint_for_status(response.status_code))
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise _TooLarge
            try:  # raw bytes, decoded here within the cap: httpx would unpack each chunk whole first
                body = await read_body(response.aiter_raw(), response.headers.get("content-encoding"), self.max_bytes)
            except BodyTooLarge:
                raise _TooLarge from None
            except BadEncoding as exc:
                return FetchFailure("http", str(exc), HINT_CONTENT)
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            final_url = str(response.url)
            redirected = bool(response.history)
            charset = _known_charset(response.charset_encoding)
        return await self._to_text(body, content_type, charset, final_url, redirected)

    async def _to_text(self, body: bytes, content_type: str, charset: str | None, final_url: str, redirected: bool) -> Fetched | FetchFailure:
        if content_type.startswith(_BINARY_PREFIXES) and not any(t in content_type for t in _TEXTUAL_APPLICATION):
            return FetchFailure("http", f"binary content ({content_type}) cannot be inlined", HINT_CONTENT)
        has_password = False
        if content_type in _HTML_TYPES or (not content_type and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))):
            try:
                page = await page_text(body, charset)  # a large page in a worker, killed at url_timeout
            except RecursionError:  # hostile HTML nested tens of thousands of levels deep
                return FetchFailure("http", "the page is nested too deeply to be turned into text", HINT_CONTENT)
            except RuntimeError as exc:
                return FetchFailure("http", str(exc), HINT_CONTENT)
            text, has_password = page.text, page.has_password_field
        else:
            if not content_type and b"\x00" in body[:4096]:
                return FetchFailure("http", "binary content cannot be inlined", HINT_CONTENT)
            text = body.decode(charset or "utf-8", errors="replace").strip()
        reason = login_page_reason(text, final_url, redirected, has_password)
        if reason:
            return FetchFailure("http", reason, HINT_AUTH)
        if len(text) < MIN_CONTENT_CHARS:
            return FetchFailure("http", f"content too short ({len(text)} characters): not the document?", HINT_CONTENT)
        return Fetched(text, "http")
