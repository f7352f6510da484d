"""HTML → readable text for inlining into a prompt.

BeautifulSoup (stdlib `html.parser` backend, so no lxml) parses whatever the page is, and
markdownify renders it as Markdown-like text: headings, lists, tables, links and code blocks
keep their shape, which a model reads better than tag-stripped text. Both are MIT-licensed,
pure Python and widely used (html2text is GPL; trafilatura pulls a dozen packages and may drop
parts of a page it judges boilerplate).

Converting takes time that grows faster than the page (2 MB of `x<br>` is tens of seconds of
CPU), and pure-Python work cannot be interrupted where it runs. `page_text` therefore turns a
page of more than `IN_PROCESS_BYTES` into text in a worker process of its own, under the
deadline of the fetch it belongs to (`url_timeout`): at the deadline the worker is killed, and
the event loop (other samples, other fetches) is never held meanwhile. Smaller pages are
converted in place, where the time they can take is small.
"""

from __future__ import annotations

import json
import re
import sys

import msgspec

# Never content: code, styling, embedded media, and page chrome around the document.
_DROPPED_TAGS = ["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head", "nav", "footer"]
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
IN_PROCESS_BYTES = 32 * 1024  # pages up to this size are converted in place; larger ones in a worker
_TOO_DEEP = "too deep"


class PageText(msgspec.Struct, frozen=True, gc=False):
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


async def page_text(html: bytes, encoding: str | None = None) -> PageText:
    """`html_to_text`, held to the deadline of the caller's `asyncio.timeout`: a page larger than
    `IN_PROCESS_BYTES` is converted in a worker process that is killed when the caller is
    cancelled or times out. RecursionError for a page nested too deeply, as in place."""
    if len(html) <= IN_PROCESS_BYTES:
        return html_to_text(html, encoding)
    from omk.io.process import start_program, stop_program

    proc = await start_program([sys.executable, "-m", "omk.inline.html_text", encoding or ""])
    try:
        out, err = await proc.communicate(html)
    finally:
        await stop_program(proc)
    try:
        data = json.loads(out)
    except ValueError:
        raise RuntimeError(f"the page could not be turned into text: {err.decode('utf-8', 'replace').strip()[-300:]}") from None
    if data.get("error") == _TOO_DEEP:
        raise RecursionError(_TOO_DEEP)
    return PageText(**data)


def _worker() -> None:
    """The worker `page_text` starts: the page on stdin, the charset as the argument, the PageText
    as JSON on stdout."""
    html = sys.stdin.buffer.read()
    try:
        reply = msgspec.structs.asdict(html_to_text(html, sys.argv[1] or None))
    except RecursionError:
        reply = {"error": _TOO_DEEP}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    _worker()
