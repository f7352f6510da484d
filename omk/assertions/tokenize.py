"""The tokenizer for ROUGE and BLEU.

Alphabetic scripts give lower-cased runs of Unicode letters, marks and digits ("café", "naïve",
"ｏｎｅ１２３" stay whole); every CJK ideograph (all blocks, compatibility ideographs included),
kana and hangul syllable is a token of its own. Punctuation, symbols and emoji are dropped.
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

from omk.assertions.text import CJK_CLASS

_TOKEN = regex.compile(rf"[{CJK_CLASS}]|[[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]+", regex.V1)
# In ASCII text the letters, marks and digits are [a-z0-9] once lower-cased, and there is no CJK:
# the same tokens, found by the standard library's faster engine.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return list(tokens(text))


@lru_cache(maxsize=8)  # an output is tokenized by each of its similarity checks, one after another
def tokens(text: str) -> tuple[str, ...]:
    """`tokenize`, as a tuple shared by the calls for the same text."""
    pattern = _ASCII_TOKEN if text.isascii() else _TOKEN
    return tuple(pattern.findall(text.lower()))
