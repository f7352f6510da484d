"""Finding URLs in sample text and splicing fetched content in after them, as omk 0.23 does."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

# `http(s)://` then RFC 3986 characters only: matching stops at whitespace, CJK, full-width
# punctuation, quotes and angle brackets.
URL_RE = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
# Sentence punctuation right after a URL ends the URL, not the path (0.23 kept it, so "see
# https://a.com/x." fetched "/x."): the rule Markdown autolinks follow (GFM).
TRAILING = ".,:;!?'*"
CLOSERS = {")": "(", "]": "["}

# Hosts reserved for documentation (RFC 2606/6761) and their subdomains: never fetched.
PLACEHOLDER_RE = re.compile(
    r"^https?://(?:[^/?#]*\.)?(?:example\.(?:com|org|net)|localhost|test|invalid|example)(?::\d+)?(?:[/?#]|$)",
    re.IGNORECASE,
)

SCANNED_FIELDS = ("prompt", "context")


def is_placeholder(url: str) -> bool:
    return PLACEHOLDER_RE.match(url) is not None


def _trimmed(url: str) -> str:
    """`url` without the punctuation a sentence put after it: trailing `.,:;!?'*`, and a closing
    `)` or `]` that has no opening partner inside the URL (`(see https://a.com/x)`), while
    `https://en.wikipedia.org/wiki/Python_(language)` keeps its own."""
    while url:
        last = url[-1]
        if last in TRAILING or (last in CLOSERS and url.count(last) > url.count(CLOSERS[last])):
            url = url[:-1]
        else:
            break
    return url


def url_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """(url, start, end) of every URL in `text`, in order, trailing punctuation left out."""
    for m in URL_RE.finditer(text):
        url = _trimmed(m.group(0))
        if len(url) > len(m.group(0).split("://", 1)[0]) + 3:  # something after the scheme is left
            yield url, m.start(), m.start() + len(url)


def find_urls(text: str | None, wanted_placeholder: Callable[[str], bool] | None = None) -> list[str]:
    """Fetchable URLs in `text`, first occurrence order, each once; placeholders left out unless
    `wanted_placeholder(url)` says so (a `localhost` the user allowed by name)."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for url, _, _ in url_spans(text):
        if not is_placeholder(url) or (wanted_placeholder is not None and wanted_placeholder(url)):
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
    for url, start, end in url_spans(text):
        if url in contents:
            firsts.setdefault(url, (start, end))
    out = text
    for url, (start, end) in sorted(firsts.items(), key=lambda item: item[1][0], reverse=True):
        out = out[:start] + inline_block(url, contents[url]) + out[end:]
    return out
