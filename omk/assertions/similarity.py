"""Similarity to a reference text: ROUGE-N recall, BLEU-4, Levenshtein distance.

The reference is `reference`, else `value` (as in omk 0.54). ROUGE and BLEU use omk.assertions.tokenize.
ROUGE-N recall and BLEU-4 are counted here (a few lines each): rouge-score cost a slow import and
more time a call, and sacrebleu pulls numpy and lxml into every install (docs/benchmarks.md). The
tests check BLEU-4 against sacrebleu (a test-only dependency) on random texts.
"""

from __future__ import annotations

import math
from collections import Counter, _count_elements  # type: ignore[attr-defined]  # CPython's C counter (Counter.update's), not in typeshed
from collections.abc import Callable, Iterable
from functools import cache, lru_cache

from omk.assertions.context import CheckContext
from omk.assertions.registry import NON_NEGATIVE, RATIO, assertion
from omk.assertions.text import SAME_OUTCOMES, js_text
from omk.assertions.tokenize import tokens
from omk.samples.model import AssertionSpec, Layer, Outcome

DEFAULT_THRESHOLD = 0.5
_REFERENCE = {"type": "string", "minLength": 1}


def _reference(spec: AssertionSpec) -> str:
    return js_text(spec.raw.get("reference"))


def _ngrams(words: tuple[str, ...], n: int) -> Counter:
    """The n-grams of `words` with their counts (unigrams as the words themselves)."""
    if n == 1:
        return Counter(words)
    return Counter(zip(*(words[i:] for i in range(n)), strict=False))


def _counted(grams: Iterable[object]) -> dict[object, int]:
    """Each item of `grams` with its count, as a plain dict: counted in C by the function
    `Counter.update` counts with, without Counter's checks around it."""
    counts: dict[object, int] = {}
    _count_elements(counts, grams)
    return counts


def rouge_n_recall(candidate: str, reference: str, n: int = 1) -> float:
    """Clipped n-gram overlap / reference n-gram count; 0 when the reference has none."""
    words = tokens(reference)
    total = len(words) - n + 1  # the reference's n-grams
    if total <= 0:
        return 0.0
    if n == 1:
        ref, counts = _counted(words), _counted(tokens(candidate)).get
    else:
        out = tokens(candidate)
        ref = _counted(zip(*(words[i:] for i in range(n)), strict=False))
        counts = _counted(zip(*(out[i:] for i in range(n)), strict=False)).get
    overlap = 0
    for gram, wanted in ref.items():  # a plain loop: faster than map(min, ...) over a few dozen grams
        found = counts(gram, 0)
        overlap += wanted if wanted < found else found
    return overlap / total


def bleu4(candidate: str, reference: str, smooth: bool = False) -> float:
    """BLEU-4 in [0, 1] as sacrebleu's corpus BLEU of one segment (our tokens, no effective order);
    with `smooth`, add-one on the 2..4-gram precisions (short texts otherwise score 0)."""
    cand, ref = tokens(candidate), tokens(reference)
    if not cand or not ref:
        return 0.0
    log_sum = 0.0
    for n in range(1, 5):
        grams, ref_grams = _ngrams(cand, n), _ngrams(ref, n)
        correct = sum(min(count, ref_grams[gram]) for gram, count in grams.items())
        total = sum(grams.values())
        if smooth and n > 1:
            correct, total = correct + 1, total + 1
        if correct == 0 or total == 0:
            return 0.0  # a zero precision (or no n-gram in common at all) makes the score 0
        log_sum += math.log(correct / total)
    brevity = math.exp(1 - len(ref) / len(cand)) if len(cand) < len(ref) else 1.0
    return min(1.0, brevity * math.exp(log_sum / 4))


def levenshtein(a: str, b: str) -> int:
    """Unit-cost edit distance over code points."""
    return int(_distance()(a, b))


@cache
def _distance() -> Callable[[str, str], int]:
    """rapidfuzz's edit distance, imported on first use (and not again on every check)."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance


@lru_cache(maxsize=SAME_OUTCOMES, typed=True)  # scores repeat (a recall of 1.0 most of all), and so does their outcome
def _min_check(name: str, value: float, threshold: float) -> Outcome:
    ok = value >= threshold
    sign = ">=" if ok else "<"
    return Outcome(ok, metric=value, message=f"{name} {value:.2f} {sign} {js_text(threshold)}")


@assertion(
    "rouge_n_min",
    layer=Layer.FACT,
    schema={
        "properties": {
            "reference": _REFERENCE,
            "n": {"type": "integer", "minimum": 1, "maximum": 9},  # rouge-score's rouge1..rouge9
            "threshold": RATIO,
        },
        "required": ["reference"],  # as in omk 0.54; the pass mark is `threshold`, never `value`
    },
)
def rouge_n_min(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """ROUGE-N recall of the output against `reference` is at least `threshold` (default 0.5)."""
    raw = spec.raw
    n = int(raw.get("n") or 1)
    return _min_check(f"ROUGE-{n} recall", rouge_n_recall(ctx.output, _reference(spec), n), raw.get("threshold", DEFAULT_THRESHOLD))


@assertion(
    "bleu_min",
    layer=Layer.FACT,
    schema={
        "properties": {
            "reference": _REFERENCE,
            "threshold": RATIO,
            "smooth": {"type": "boolean"},
        },
        "required": ["reference"],  # as in omk 0.54; the pass mark is `threshold`, never `value`
    },
)
def bleu_min(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """BLEU-4 of the output against `reference` is at least `threshold` (default 0.5)."""
    threshold = spec.get("threshold", DEFAULT_THRESHOLD)
    smooth = bool(spec.get("smooth", False))
    name = "BLEU-4 (smoothed)" if smooth else "BLEU-4"
    return _min_check(name, bleu4(ctx.output, _reference(spec), smooth), threshold)


@assertion(
    "levenshtein_max",
    layer=Layer.FACT,
    schema={
        "required": ["value", "reference"],
        "properties": {"value": NON_NEGATIVE, "reference": _REFERENCE},
    },
)
def levenshtein_max(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The edit distance from the output to `reference` is at most `value` (no trim, case-sensitive)."""
    return _within(levenshtein(ctx.output, _reference(spec)), spec.raw.get("value"))


@lru_cache(maxsize=SAME_OUTCOMES, typed=True)  # distances repeat, and so does their outcome
def _within(distance: int, limit: float) -> Outcome:
    ok = distance <= limit
    sign = "<=" if ok else ">"
    return Outcome(ok, metric=distance, message=f"edit distance {distance} {sign} max {js_text(limit)}")
