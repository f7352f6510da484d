"""rouge_n_min, bleu_min, levenshtein_max and omk's tokenizer (each CJK character a token)."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from helpers import check
from hypothesis import given, settings
from hypothesis import strategies as st

from omk.assertions.similarity import bleu4, levenshtein, rouge_n_recall
from omk.assertions.tokenize import tokenize

# --- the 0.54 formulas, written out, over our tokens ----------------------------------------


def ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)] if n > 0 else []


def clipped(cand: list, ref: list) -> int:
    c, r = Counter(cand), Counter(ref)
    return sum(min(count, r[g]) for g, count in c.items())


def rouge_054(out: str, ref: str, n: int) -> float:
    r = ngrams(tokenize(ref), n)
    return clipped(ngrams(tokenize(out), n), r) / len(r) if r else 0.0


def bleu_054(out: str, ref: str, smooth: bool = False) -> float:
    c, r = tokenize(out), tokenize(ref)
    if not c or not r:
        return 0.0
    total = 0.0
    for n in range(1, 5):
        cn = ngrams(c, n)
        overlap = clipped(cn, ngrams(r, n))
        count = len(cn)
        if smooth and n > 1:  # add-one on the higher orders (`smooth: true`)
            overlap, count = overlap + 1, count + 1
        if count == 0 or overlap == 0:
            return 0.0
        total += math.log(overlap / count)
    bp = 1.0 if len(c) >= len(r) else math.exp(1 - len(r) / len(c))
    return bp * math.exp(total / 4)


# --- tokenizer -------------------------------------------------------------------------------


def test_tokenizer_keeps_accents_fullwidth_kana_hangul_and_all_han_blocks():
    assert tokenize("Café NAÏVE, x_y!") == ["café", "naïve", "x", "y"]
    assert tokenize("ｏｎｅ１２３") == ["ｏｎｅ１２３"]
    assert tokenize("今天很好") == ["今", "天", "很", "好"]
    assert tokenize("㐀𠀀𪜀丽") == ["㐀", "𠀀", "𪜀", "丽"]  # Ext-A, Ext-B, Ext-C, compatibility
    assert tokenize("かなカナ한국") == ["か", "な", "カ", "ナ", "한", "국"]
    assert tokenize("GPT4o 🎉 v2.0") == ["gpt4o", "v2", "0"]


# --- hand-computed values ----------------------------------------------------------------------

CAND, REF = "The cat sat on the mat.", "the cat sat on a mat"


def test_rouge_matches_hand_computed_values():
    assert rouge_n_recall(CAND, REF, 1) == pytest.approx(5 / 6)
    assert rouge_n_recall(CAND, REF, 2) == pytest.approx(3 / 5)
    assert rouge_n_recall("x", "", 1) == 0.0


def test_bleu_matches_hand_computed_values():
    assert bleu4(CAND, REF) == pytest.approx((5 / 6 * 3 / 5 * 1 / 2 * 1 / 3) ** 0.25)
    assert bleu4("the cat sat on", "the cat sat on the mat") == pytest.approx(math.exp(1 - 6 / 4))
    assert bleu4("hello world", "hello world") == 0.0  # unsmoothed: shorter than 4 tokens
    assert bleu4("", "hello") == 0.0


def test_smoothed_bleu_is_add_one_on_higher_orders():
    assert bleu4("hello world", "hello world", smooth=True) == pytest.approx(1.0)
    assert bleu4("hello there world", "hello world", smooth=True) == pytest.approx(
        (2 / 3 * 1 / 3 * 1 / 2) ** 0.25
    )
    assert bleu4("nothing shared", "hello world", smooth=True) == 0.0


def test_chinese_scores_sensibly():
    out, ref = "今天天气很好，我们去公园散步", "今天天气不错，我们去公园走走"
    assert rouge_n_recall(out, ref, 1) == pytest.approx(rouge_054(out, ref, 1))
    assert 0.5 < rouge_n_recall(out, ref, 1) < 1
    assert 0 < bleu4(out, ref) < 1
    assert bleu4(out, ref) == pytest.approx(bleu_054(out, ref))


WORDS = st.sampled_from(["a", "b", "c", "d", "中", "文", "Ab", "x1"])
TEXTS = st.lists(WORDS, max_size=12).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(out=TEXTS, ref=TEXTS, n=st.integers(1, 4))
def test_rouge_equals_the_054_formula(out, ref, n):
    assert rouge_n_recall(out, ref, n) == pytest.approx(rouge_054(out, ref, n))


@settings(max_examples=150, deadline=None)
@given(out=TEXTS, ref=TEXTS, smooth=st.booleans())
def test_bleu_equals_the_054_formula(out, ref, smooth):
    assert bleu4(out, ref, smooth) == pytest.approx(bleu_054(out, ref, smooth), abs=1e-9)


# --- the assertions ----------------------------------------------------------------------------


def test_rouge_n_min_defaults_and_message():
    result = check("rouge_n_min", "the cat", reference="the cat sat on a mat")
    assert not result.passed
    assert result.metric == pytest.approx(2 / 6)
    assert result.message == "ROUGE-1 recall 0.33 < 0.5"
    assert check("rouge_n_min", "the cat sat", reference="the cat sat on a mat").passed  # 0.5 >= 0.5


def test_rouge_n_min_honours_n():
    assert check("rouge_n_min", "the cat sat", reference="cat the", n=1, threshold=1).passed
    assert not check("rouge_n_min", "the cat sat", reference="cat the", n=2, threshold=0.1).passed


def test_rouge_threshold_zero_passes_even_at_zero():
    assert check("rouge_n_min", "abc", reference="xyz", threshold=0).passed


def test_bleu_min():
    result = check("bleu_min", CAND, reference=REF, threshold=0.5)
    assert result.passed
    assert result.metric == pytest.approx(0.5373, abs=1e-4)
    short = check("bleu_min", "hello world", reference="hello world")
    assert not short.passed
    assert short.message == "BLEU-4 0.00 < 0.5"
    assert check("bleu_min", "hello world", reference="hello world", smooth=True).passed


def test_levenshtein_counts_code_points_case_sensitive_no_trim():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("a👍", "a") == 1
    assert levenshtein("Abc", "abc") == 1
    assert levenshtein("abc ", "abc") == 1
    assert levenshtein("中文", "中国") == 1


def test_levenshtein_max_limit_is_inclusive():
    assert check("levenshtein_max", "kitten", reference="sitting", value=3).passed
    result = check("levenshtein_max", "kitten", reference="sitting", value=2)
    assert not result.passed
    assert result.metric == 3
    assert result.message == "edit distance 3 > max 2"
    assert check("levenshtein_max", "", reference="", value=0).passed


def test_bleu_of_identical_texts_is_exactly_one():
    from omk.assertions.similarity import bleu4

    text = "the quick brown fox jumps over the lazy dog today"
    assert bleu4(text, text) == 1.0
    assert bleu4(text, text, smooth=True) == 1.0


_WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "猫", "犬"]), max_size=14).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(_WORDS, _WORDS, st.booleans())
def test_bleu_equals_sacrebleu(out, ref, smooth):
    # bleu4 is counted here so the default install needs no sacrebleu (numpy, lxml); sacrebleu's
    # corpus BLEU of one segment, over our tokens, is the reference (a test-only dependency).
    from sacrebleu.metrics import BLEU

    metric = BLEU(tokenize="none", smooth_method="add-k" if smooth else "none", smooth_value=1)
    cand, refs = " ".join(tokenize(out)), " ".join(tokenize(ref))
    expected = metric.corpus_score([cand], [[refs]]).score / 100 if cand and refs else 0.0
    assert bleu4(out, ref, smooth) == pytest.approx(min(1.0, expected), abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=80))
def test_ascii_text_is_tokenized_as_the_unicode_rule_does(text):
    """ASCII text takes a shortcut (bytes translated, then split): the same tokens as the full rule."""
    from omk.assertions.tokenize import _TOKEN, tokens

    assert tokenize(text) == list(tokens(text)) == _TOKEN.findall(text.lower())
    assert tokenize("Snake_case, CamelCase42 x-y") == ["snake", "case", "camelcase42", "x", "y"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Ab", "x1", "中文", "かな", "한", "Café", "ｏｎｅ", " ", ",", "_", "\t", "\x1c", "🎉", "9"]), max_size=20).map("".join))
def test_mixed_text_is_tokenized_as_the_unicode_rule_does(text):
    """Text with CJK, accents or emoji in it, and the same text's ASCII runs: the full rule's tokens."""
    from omk.assertions.tokenize import _TOKEN, tokens

    assert list(tokens(text)) == _TOKEN.findall(text.lower())
    ascii_only = "".join(c for c in text if c.isascii())
    assert list(tokens(ascii_only)) == _TOKEN.findall(ascii_only.lower())
