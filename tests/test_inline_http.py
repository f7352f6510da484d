"""The HTTP fetcher against a real loopback server: text, HTML, failures with reasons and hints."""

from __future__ import annotations

import asyncio

import pytest
from inline_doc_server import refused_url

from omk.inline.fetched import (
    HINT_AUTH,
    HINT_NETWORK,
    HINT_NOT_FOUND,
    HINT_SERVER,
    HINT_TOO_LARGE,
    Fetched,
    FetchFailure,
)
from omk.inline.http_fetch import HttpFetcher, login_page_reason
from omk.inline.policy import build_policy

LOOPBACK = build_policy(["127.0.0.1"])  # the test server is reached through the allow-list


def fetch(url: str, **kwargs) -> Fetched | FetchFailure:
    async def go():
        fetcher = HttpFetcher(**{"policy": LOOPBACK, **kwargs})
        try:
            return await fetcher.fetch(url)
        finally:
            await fetcher.aclose()

    return asyncio.run(go())


def test_html_becomes_readable_text_without_scripts_styles_or_chrome(http):
    got = fetch(http.url("/doc.html"))
    assert isinstance(got, Fetched)
    assert got.source == "http"
    text = got.content
    assert text.startswith("# Feature X design")
    assert "export reports" in text
    assert "CSV & JSON" in text
    assert "- At most 10,000 rows per export." in text
    assert "## Limits" in text
    assert "```\nomk export --format csv\n```" in text
    for noise in ("SCRIPT-NOISE", "color: red", "NAV-NOISE", "FOOTER-NOISE", "<p>", "&amp;"):
        assert noise not in text


def test_plain_text_is_trimmed_and_kept_as_is(http):
    got = fetch(http.url("/plain.txt"))
    assert isinstance(got, Fetched)
    assert got.content.startswith("Release notes 2.4\n\nThe importer")
    assert not got.content.endswith("\n")


def test_declared_charset_is_honoured(http):
    got = fetch(http.url("/gbk.html"))
    assert isinstance(got, Fetched)
    assert "这是一个用 GBK 编码的中文页面" in got.content


def test_redirects_are_followed(http):
    got = fetch(http.url("/redirect"))
    assert isinstance(got, Fetched)
    assert "Feature X lets users" in got.content


@pytest.mark.parametrize(
    ("path", "reason", "hint"),
    [
        ("/missing", "404 Not Found", HINT_NOT_FOUND),
        ("/private", "401 Unauthorized", HINT_AUTH),
        ("/forbidden", "403 Forbidden", HINT_AUTH),
        ("/boom", "500 Internal Server Error", HINT_SERVER),
    ],
)
def test_error_statuses_give_the_status_and_a_hint(http, path, reason, hint):
    got = fetch(http.url(path))
    assert isinstance(got, FetchFailure)
    assert (got.source, got.reason, got.hint) == ("http", reason, hint)


def test_login_redirect_and_login_form_are_not_documents(http):
    got = fetch(http.url("/login-redirect"))
    assert isinstance(got, FetchFailure)
    assert got.hint == HINT_AUTH
    assert got.reason.startswith("redirected to a sign-in page")
    assert "/login?next=" in got.reason
    got = fetch(http.url("/login"))
    assert isinstance(got, FetchFailure)
    assert got.reason == "got a sign-in form instead of the document"


def test_size_cap_applies_to_declared_and_streamed_bodies(http):
    got = fetch(http.url("/huge"))
    assert isinstance(got, FetchFailure)
    assert got.reason == "larger than the 2 MB size cap"
    assert got.hint == HINT_TOO_LARGE
    got = fetch(http.url("/stream-big"), max_bytes=1000)
    assert isinstance(got, FetchFailure)
    assert got.reason == "larger than the 1000 bytes size cap"
    assert isinstance(fetch(http.url("/stream-big"), max_bytes=10_000), Fetched)


def test_slow_server_times_out(http):
    got = fetch(http.url("/slow"), timeout=0.3)
    assert isinstance(got, FetchFailure)
    assert (got.reason, got.hint) == ("request timed out (0.3 s)", HINT_NETWORK)


def test_short_and_binary_content_are_refused(http):
    got = fetch(http.url("/short"))
    assert isinstance(got, FetchFailure)
    assert got.reason.startswith("content too short (2 characters)")
    got = fetch(http.url("/image.png"))
    assert isinstance(got, FetchFailure)
    assert got.reason == "binary content (image/png) cannot be inlined"


def test_connection_refused_and_unknown_host_say_so():
    got = fetch(refused_url())
    assert isinstance(got, FetchFailure)
    assert (got.reason, got.hint) == ("connection refused", HINT_NETWORK)
    got = fetch("http://omk-no-such-host.nxdomain/doc")
    assert isinstance(got, FetchFailure)
    assert got.reason == "the host name cannot be resolved (DNS): check the URL"


@pytest.mark.parametrize(
    ("text", "url", "redirected", "password", "expected"),
    [
        ("Please sign in to continue. " * 3, "https://w/x", False, False, "looks like a sign-in page"),
        ("Welcome. " * 100 + "sign in", "https://w/x", False, False, None),  # a long page may mention it
        ("Real document " * 20, "https://w/sso/start?redirect_uri=x", True, False, "redirected to a sign-in page"),
        ("Real document " * 20, "https://w/sso/start", False, False, None),  # not redirected there
        ("Real document " * 20, "https://w/x", False, True, "sign-in form"),
    ],
)
def test_login_page_heuristic(text, url, redirected, password, expected):
    reason = login_page_reason(text, url, redirected, password)
    assert (reason is None) if expected is None else (expected in reason)
