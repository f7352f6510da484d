"""The tokenizer for ROUGE and BLEU.

Alphabetic scripts give lower-cased runs of Unicode letters, marks and digits ("café", "naïve",
"ｏｎｅ１２３" stay whole); every CJK ideograph (all blocks, compatibility ideographs included),
kana and hangul syllable is a token of its own. Punctuation, symbols and emoji are dropped.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from omk.assertions.text import CJK_CLASS

_TOKEN = regex.compile(rf"[{CJK_CLASS}]|[[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]+", regex.V1)
# In ASCII text the letters, marks and digits are [A-Za-z0-9] and there is no CJK: the same tokens
# come from one pass over the bytes that lower-cases letters and turns every other byte into a
# space, then a split on the spaces.
_ASCII_TABLE = bytes(b if chr(b).isascii() and chr(b).isalnum() else 0x20 for b in range(256)).lower()


def tokenize(text: str) -> list[str]:
    return list(tokens(text))


@lru_cache(maxsize=8)  # an output is tokenized by each of its similarity checks, one after another
def tokens(text: str) -> tuple[str, ...]:
    """`tokenize`, as a tuple shared by the calls for the same text."""
    if text.isascii():
        return tuple(text.encode("ascii").translate(_ASCII_TABLE).decode("ascii").split())
    return tuple(_TOKEN.findall(text.lower()))
