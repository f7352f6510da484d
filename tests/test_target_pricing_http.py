"""The price table and the HTTP helpers' pure parts (Retry-After, redaction, local URLs)."""

from __future__ import annotations

import pytest

from omk.llm.http import is_local_url, parse_retry_after, public_url, redact
from omk.llm.pricing import cost_usd, price_of


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gpt-4o", (2.50, 10.00)),
        ("gpt-4o-2024-08-06", (2.50, 10.00)),
        ("gpt-4o-mini", (0.15, 0.60)),
        ("openai/gpt-4o-mini", (0.15, 0.60)),
        ("claude-3-5-sonnet-20241022", (3.00, 15.00)),
        ("claude-3-5-haiku-latest", (0.80, 4.00)),
        ("gpt-4o-audio-preview", None),
        ("llama3.1:8b", None),
    ],
)
def test_price_lookup(model, price):
    assert price_of(model) == price


def test_cost_needs_price_and_tokens():
    assert cost_usd((2.5, 10.0), 1000, 100) == pytest.approx(0.0035)
    assert cost_usd(None, 1000, 100) is None
    assert cost_usd((2.5, 10.0), None, 100) is None


def test_retry_after_seconds_and_http_date():
    assert parse_retry_after("12") == 12
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    # an HTTP date 30 s after a fixed "now"
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480.0) == pytest.approx(30.0)
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412600.0) == 0.0


def test_redact_local_and_public_urls():
    assert redact("key sk-1 and sk-1 again", ["sk-1", ""]) == "key [redacted] and [redacted] again"
    assert is_local_url("http://127.0.0.1:8000/v1")
    assert is_local_url("http://localhost/v1")
    assert not is_local_url("https://api.openai.com/v1")
    assert public_url("https://u:p@host.example:8443/v1") == "https://host.example:8443/v1"
