"""Text from outside (sample files, model replies, programs' output) made safe to keep and show.

* Lone surrogates (`"\\ud800"` in a JSON string) are valid in a Python `str` but cannot be
  written as UTF-8: one in a reply would stop the run when results.jsonl or the cache is written.
  They become U+FFFD, the replacement character, where the text enters omk.
* Control characters in text printed to a terminal (an escape sequence in a model's reply or a
  sample id) could recolour, hide or rewrite what the user sees: `for_terminal` shows them as
  `\\x1b`-style escapes. Unicode's bidirectional controls (U+202A–202E, U+2066–2069, and the
  marks U+200E, U+200F, U+061C) would show an id or a verdict reordered: they are shown as
  `\\u202e`-style escapes, in the terminal and in the Markdown summary (`show_bidi`).
* A Markdown link in an output (`[docs](javascript:…)`) would be live in a rendered summary:
  `safe_markdown_links` leaves links to http, https and mailto, and turns any other into text.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON or YAML escape that can produce a lone surrogate: only then is a parsed document walked.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BIDI_CHARS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI = re.compile(f"[{_BIDI_CHARS}]")
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CHARS}]")
# `](target` of an inline link and `]: target` of a link definition, whose target has a scheme
# other than http, https or mailto (`javascript:`, `data:`, `vbscript:`, `file:`…).
_UNSAFE_LINK = re.compile(r"\](\(\s*<?|:[ \t]*<?)(?!(?:https?|mailto):)(?=[a-z][a-z0-9+.\-]*:)", re.IGNORECASE)


def scrub(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (a no-op for ordinary text)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)


def scrub_value(value: Any) -> Any:
    """`value` with every string inside it scrubbed (dicts, lists and tuples walked)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_value(k): scrub_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_value(v) for v in value)
    return value


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def for_terminal(text: object) -> str:
    """Control characters (but tab and newline) written as `\\x1b`, bidirectional controls as
    `\\u202e`; lone surrogates as U+FFFD."""
    return _CONTROL.sub(_escape, scrub(str(text)))


def show_bidi(text: str) -> str:
    """`text` with its bidirectional controls written as `\\u202e`-style escapes."""
    return _BIDI.sub(_escape, text)


def safe_markdown_links(text: str) -> str:
    """Markdown `text` whose links (inline `[x](…)` or defined `[x]: …`) lead only to http, https
    or mailto: the closing bracket of any other is written as the character reference `&#93;`
    (which shows as `]` and closes nothing, whatever backslashes come before it), so the link
    shows as text."""
    return _UNSAFE_LINK.sub(lambda m: "&#93;" + m.group(1), text)


def plural(n: int, singular: str, plural_form: str) -> str:
    """`1 sample`, `3 samples`: an English count with the word that agrees with it."""
    return f"{n} {singular if n == 1 else plural_form}"
