"""How close two short texts are, computed on this machine (no model, no network): the cosine of
their TF-IDF vectors.

A text's terms are the tokens of omk.assertions.tokenize (the tokenizer of ROUGE and BLEU: lower-cased
words in alphabetic scripts, one token per CJK ideograph, kana or hangul syllable), less a short
list of function words and bare numbers, English words lightly stemmed, plus each pair of
neighbouring ideographs (or kana, or hangul): a pair carries the meaning of a Chinese word ("部署"
is two ideographs) that its single ideographs do not. Each term is
weighted by its inverse document frequency over all the texts compared (the requests and the
skills' descriptions), so words every request uses count for little.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from omk.assertions.tokenize import tokens

# Words (and ideographs) that say little about what a request is for; the IDF weighs the rest.
STOP_WORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "from", "with", "into", "about", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there", "here", "i", "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "their", "use", "used", "using", "when", "whenever", "user", "users", "asks", "ask", "asked", "want", "wants", "please", "can", "could", "would", "should", "will", "do", "does", "did", "not", "no", "so", "than", "then", "also", "just", "some", "any", "all", "each", "what", "which", "who", "how", "why"]
    + list("的了是在我你他她它们和与就都也这那个吗呢吧啊请把被给")
)  # fmt: skip


def stem(word: str) -> str:
    """A light English stem, so that "tables" and "table", or "renamed", "renaming" and "rename", meet: a plural's
    `s` / `ies`, then `ing` or `ed`, then a final `e` go. Other words (any script) stay as they are."""
    if not word.isascii() or not word.isalpha() or len(word) < 4:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _words(text: str) -> list[str]:
    """The text's tokens less function words and bare numbers ("PR 42": the 42 says nothing of the
    kind of request), stemmed."""
    return [stem(w) for w in tokens(text) if w not in STOP_WORDS and not w.isdigit()]


def terms(text: str) -> Counter[str]:
    """The text's words (function words left out) and neighbouring-token pairs, with their counts."""
    words = _words(text)
    found: Counter[str] = Counter(words)
    found.update(a + b for a, b in zip(words, words[1:], strict=False) if not (a.isascii() or b.isascii()))
    return found


def content_words(text: str) -> int:
    """How many words of the text are not function words: a request of one or two ("yes", "go
    on") says too little to be judged."""
    return len(_words(text))


class TextSpace:
    """TF-IDF vectors of a set of texts, with the document frequencies taken over all of them."""

    def __init__(self, texts: Iterable[str]):
        counted = [terms(t) for t in texts]
        frequency: Counter[str] = Counter()
        for c in counted:
            frequency.update(c.keys())
        n = len(counted)
        self._idf = {term: math.log((1 + n) / (1 + df)) + 1.0 for term, df in frequency.items()}
        self._default_idf = math.log(1 + n) + 1.0

    def vector(self, text: str) -> dict[str, float]:
        """The unit-length TF-IDF vector of `text` (empty when it has no terms)."""
        weights = {term: (1.0 + math.log(count)) * self._idf.get(term, self._default_idf) for term, count in terms(text).items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        return {term: w / norm for term, w in weights.items()} if norm else {}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    """The cosine of two unit vectors from `TextSpace.vector`, in [0, 1]."""
    if len(a) > len(b):
        a, b = b, a
    return min(1.0, sum(w * b.get(term, 0.0) for term, w in a.items()))


class Neighbours:
    """Unit vectors searched by their terms: the one nearest to a query (by cosine) is found from
    the vectors that share a term with it, without comparing the query with every one."""

    def __init__(self, vectors: Sequence[dict[str, float]]):
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, vector in enumerate(vectors):
            for term, weight in vector.items():
                self._postings.setdefault(term, []).append((i, weight))

    def nearest(self, vector: dict[str, float], skip: int = -1) -> tuple[float, int]:
        """The highest cosine of `vector` with one of the vectors (other than the one at `skip`),
        and that one's place: the first of equals; (0.0, -1) when none shares a term with it."""
        sums: dict[int, float] = {}
        for term, weight in vector.items():
            for i, other in self._postings.get(term, ()):
                sums[i] = sums.get(i, 0.0) + weight * other
        sums.pop(skip, None)
        best = max(sums.items(), key=lambda kv: (kv[1], -kv[0]), default=None)
        if best is None or best[1] <= 0:
            return 0.0, -1
        return min(1.0, best[1]), best[0]
