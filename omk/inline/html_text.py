"""HTML → readable text for inlining into a prompt.

BeautifulSoup (stdlib `html.parser` backend, so no lxml) parses whatever the page is, and
markdownify renders it as Markdown-like text: headings, lists, tables, links and code blocks
keep their shape, which a model reads better than tag-stripped text. Both are MIT-licensed,
pure Python and widely used (html2text is GPL; trafilatura pulls a dozen packages and may drop
parts of a page it judges boilerplate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Never content: code, styling, embedded media, and page chrome around the document.
_DROPPED_TAGS = ["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head", "nav", "footer"]
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


@dataclass(frozen=True, slots=True)
class PageText:
    text: str
    title: str
    has_password_field: bool  # a login form, for the login-page heuristic


def html_to_text(html: str | bytes, encoding: str | None = None) -> PageText:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    if isinstance(html, bytes):
        soup = BeautifulSoup(html, "html.parser", from_encoding=encoding)
    else:
        soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    has_password = soup.find("input", attrs={"type": re.compile("^password$", re.I)}) is not None
    for tag in soup.find_all(_DROPPED_TAGS):
        tag.decompose()
    converter = MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        strip=["img"],
        escape_underscores=False,
        escape_asterisks=False,
        escape_misc=False,
    )
    text = converter.convert_soup(soup)
    text = _TRAILING_SPACE.sub("\n", text.replace("\r\n", "\n").replace("\xa0", " "))
    text = _BLANK_RUNS.sub("\n\n", text).strip()
    if title and title not in text:
        text = f"# {title}\n\n{text}" if text else title
    return PageText(text, title, has_password)
