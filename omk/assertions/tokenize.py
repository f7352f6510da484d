"""The tokenizer for ROUGE and BLEU.

Alphabetic scripts give lower-cased runs of Unicode letters, marks and digits ("café", "naïve",
"ｏｎｅ１２３" stay whole); every CJK ideograph (all blocks, compatibility ideographs included),
kana and hangul syllable is a token of its own. Punctuation, symbols and emoji are dropped.
"""

from __future__ import annotations

import regex

from omk.assertions.text import CJK_CLASS

_TOKEN = regex.compile(rf"[{CJK_CLASS}]|[[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]+", regex.V1)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())
