"""Finding URLs in sample text and splicing fetched content in after them (reference 0.23 §1.4)."""

from __future__ import annotations

import re

# `http(s)://` then RFC 3986 characters only: matching stops at whitespace, CJK, full-width
# punctuation, quotes and angle brackets. A trailing `.` or `)` is part of the URL, as in 0.23.
URL_RE = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")

# Hosts reserved for documentation (RFC 2606/6761) and their subdomains: never fetched.
PLACEHOLDER_RE = re.compile(
    r"^https?://(?:[^/?#]*\.)?(?:example\.(?:com|org|net)|localhost|test|invalid|example)(?::\d+)?(?:[/?#]|$)",
    re.IGNORECASE,
)

SCANNED_FIELDS = ("prompt", "context")


def is_placeholder(url: str) -> bool:
    return PLACEHOLDER_RE.match(url) is not None


def find_urls(text: str | None) -> list[str]:
    """Fetchable URLs in `text`, first occurrence order, each once; placeholders left out."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for m in URL_RE.finditer(text):
        url = m.group(0)
        if not is_placeholder(url):
            seen.setdefault(url, None)
    return list(seen)


def inline_block(url: str, content: str) -> str:
    return f"{url}\n\n---\n{content}\n---"


def splice(text: str, contents: dict[str, str]) -> str:
    """Insert each URL's content after its first occurrence in `text`.

    0.23 does `text.replace(url, block)` one URL after another, which can hit a longer URL that
    starts with the same characters, or a URL inside content inlined a moment before. Here every
    position comes from one scan of the original text, so only the URL as written is expanded.
    """
    firsts: dict[str, tuple[int, int]] = {}
    for m in URL_RE.finditer(text):
        if m.group(0) in contents:
            firsts.setdefault(m.group(0), m.span())
    out = text
    for url, (start, end) in sorted(firsts.items(), key=lambda item: item[1][0], reverse=True):
        out = out[:start] + inline_block(url, contents[url]) + out[end:]
    return out
