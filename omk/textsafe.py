"""Text from outside (sample files, model replies, programs' output) made safe to keep and show.

* Lone surrogates (`"\\ud800"` in a JSON string) are valid in a Python `str` but cannot be
  written as UTF-8: one in a reply would stop the run when results.jsonl or the cache is written.
  They become U+FFFD, the replacement character, where the text enters omk.
* Control characters in text printed to a terminal (an escape sequence in a model's reply or a
  sample id) could recolour, hide or rewrite what the user sees: `for_terminal` shows them as
  `\\x1b`-style escapes.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON or YAML escape that can produce a lone surrogate: only then is a parsed document walked.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


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


def for_terminal(text: object) -> str:
    """Control characters (but tab and newline) written as `\\x1b`; lone surrogates as U+FFFD."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", scrub(str(text)))
