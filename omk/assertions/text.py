"""Text assertions: substrings, equality, prefixes, regex, length and word count.

Matching follows omk 0.54 (case-insensitive substrings, case-sensitive trimmed `equals`), except
that any non-empty value is accepted, a number compares as its JavaScript text, lengths count
code points, each CJK character is a word, and `regex` uses the `regex` package (JS-style groups
and flags) with a time limit.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from functools import lru_cache
from typing import Any

import regex

from omk.assertions.context import CheckContext
from omk.assertions.registry import NON_NEGATIVE, STRINGS, TEXT, PrepareError, assertion
from omk.samples.model import AssertionSpec, Layer, Outcome

# JavaScript's `\s` and String.prototype.trim set: WhiteSpace + LineTerminator (incl. NBSP,
# U+3000 and the BOM, but not U+200B).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# One word each (word counts) and one token each (ROUGE, BLEU): every CJK ideograph (all blocks,
# compatibility ideographs included, which the Han script covers), kana (with the prolonged sound
# mark) and hangul.
CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\uff70"
# CJK punctuation (、。「」 and full-width ，！？：；…) separates words like whitespace does, so
# "你好，世界" is four words, not five.
_CJK_PUNCT = r"\u3001-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_WORD = regex.compile(rf"[{CJK_CLASS}]|[^{regex.escape(JS_WHITESPACE)}{_CJK_PUNCT}{CJK_CLASS}]+")
# Zero-width space/joiners and the word joiner are invisible: dropped before counting, so they never
# make a word of their own ("我\u200b们" is 2) and, as in 0.54, do not split "a\u200bb".
_INVISIBLE = regex.compile("[\u200b\u200c\u200d\u2060]")


def js_text(value: Any) -> str:
    """JavaScript's String(value) for the strings and numbers a sample may hold: a number compares
    as its text."""
    if value.__class__ is str:  # most values are text
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        text = repr(value)  # shortest round-trip digits, like JS
        if "e" in text:
            mantissa, exp = text.split("e")
            if -7 < int(exp) < 21:  # JS writes these positionally
                return format(Decimal(text), "f")
            return f"{mantissa}e{'+' if int(exp) > 0 else '-'}{abs(int(exp))}"
        return text
    if value is None:
        return ""
    return str(value)


def low(text: str) -> str:
    """JS toLowerCase(): full Unicode lowercasing, no case folding ("ß" stays "ß")."""
    return text.lower()


@lru_cache(maxsize=8)  # an output is lower-cased once for all of its checks that ignore case
def low_output(text: str) -> str:
    """`low(text)` for an output, which several checks of one sample look at in turn."""
    return text.lower()


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


@lru_cache(maxsize=8)  # word_count_min and word_count_max of one output count it once
def word_count(text: str) -> int:
    """Each CJK ideograph, kana or hangul syllable is a word; other text splits on JS `\\s`."""
    if text.isascii():  # words split on exactly JS's ASCII whitespace (space, \t \n \v \f \r)
        # every such byte made a space and every other one an "x": a word is where " x" is, the
        # words `bytes.split()` would give, counted without making them
        return (b" " + text.encode("ascii")).translate(_WORD_STARTS).count(b" x")
    return _unicode_word_count(text)


_WORD_STARTS = bytes(0x20 if chr(b) in " \t\n\v\f\r" else 0x78 for b in range(256))


def _unicode_word_count(text: str) -> int:
    return len(_WORD.findall(_INVISIBLE.sub("", text)))


def _quote(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return '"' + shown.replace("\n", "\\n") + '"'


# --- substrings -------------------------------------------------------------------------


def _contains(output: str, needle: Any) -> bool:
    return low(js_text(needle)) in low_output(output)


# A check's outcome is the same object whenever its verdict and words are the same (the engine
# then reuses the result record it made from it, omk.assertions.evaluate): the outcomes of a
# value are made once, kept for the values most recently checked.
SAME_OUTCOMES = 1024


@lru_cache(maxsize=SAME_OUTCOMES)
def _substring(needle: str) -> tuple[str, tuple[Outcome, Outcome], tuple[Outcome, Outcome]]:
    """(the lower-cased needle, `contains`'s outcomes and `not_contains`'s, each as (when the
    output has it, when it does not))."""
    shown = _quote(needle)
    has, lacks = f"output contains {shown}", f"output does not contain {shown}"
    return low(needle), (Outcome(True, message=has), Outcome(False, message=lacks)), (Outcome(False, message=has), Outcome(True, message=lacks))


def _substring_of(spec: AssertionSpec, ctx: CheckContext) -> tuple[bool, tuple[Outcome, Outcome], tuple[Outcome, Outcome]]:
    value = spec.raw.get("value")
    needle, contains_, not_contains_ = _substring(value if value.__class__ is str else js_text(value))
    return needle in low_output(ctx.output), contains_, not_contains_


@assertion("contains", layer=Layer.FACT, schema={"required": ["value"], "properties": {"value": TEXT}})
def contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output contains `value`, ignoring case."""
    found, outcomes, _ = _substring_of(spec, ctx)
    return outcomes[0] if found else outcomes[1]


@assertion("not_contains", layer=Layer.FACT, schema={"required": ["value"], "properties": {"value": TEXT}})
def not_contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output does not contain `value`, ignoring case."""
    found, _, outcomes = _substring_of(spec, ctx)
    return outcomes[0] if found else outcomes[1]


@assertion(
    "contains_all", layer=Layer.FACT, schema={"required": ["values"], "properties": {"values": STRINGS}}
)
def contains_all(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output contains every one of `values`, ignoring case."""
    values = [js_text(v) for v in spec.get("values") or []]
    missing = [v for v in values if not _contains(ctx.output, v)]
    ratio = (len(values) - len(missing)) / len(values) if values else 1.0
    if missing:
        shown = ", ".join(_quote(v, 40) for v in missing)
        return Outcome(False, metric=ratio, message=f"output does not contain {shown}")
    return Outcome(True, metric=ratio, message=f"output contains all {len(values)} values")


@assertion(
    "contains_any", layer=Layer.FACT, schema={"required": ["values"], "properties": {"values": STRINGS}}
)
def contains_any(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output contains at least one of `values`, ignoring case."""
    values = [js_text(v) for v in spec.get("values") or []]
    found = [v for v in values if _contains(ctx.output, v)]
    ratio = len(found) / len(values) if values else 0.0
    if found:
        shown = ", ".join(_quote(v, 40) for v in found)
        return Outcome(True, metric=ratio, message=f"output contains {shown}")
    return Outcome(False, metric=ratio, message=f"output contains none of {len(values)} values")


# --- equality and affixes -----------------------------------------------------------------


@assertion("equals", layer=Layer.FACT, schema={"required": ["value"], "properties": {"value": TEXT}})
def equals(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The trimmed output equals the trimmed `value`, case-sensitively."""
    expected = js_trim(js_text(spec.get("value")))
    if js_trim(ctx.output) == expected:
        return Outcome(True, message=f"output equals {_quote(expected)}")
    return Outcome(False, message=f"output {_quote(js_trim(ctx.output))} does not equal {_quote(expected)}")


@assertion("not_equals", layer=Layer.FACT, schema={"required": ["value"], "properties": {"value": TEXT}})
def not_equals(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The trimmed output differs from the trimmed `value`."""
    expected = js_trim(js_text(spec.get("value")))
    if js_trim(ctx.output) == expected:
        return Outcome(False, message=f"output equals {_quote(expected)}")
    return Outcome(True, message=f"output does not equal {_quote(expected)}")


@lru_cache(maxsize=SAME_OUTCOMES)
def _prefix(prefix: str) -> tuple[str, Outcome]:
    """(the lower-cased prefix, the outcome when the output starts with it)."""
    return low(prefix), Outcome(True, message=f"output starts with {_quote(prefix)}")


@assertion("starts_with", layer=Layer.BEHAVIOR, schema={"required": ["value"], "properties": {"value": TEXT}})
def starts_with(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output starts with `value`, ignoring case; nothing is trimmed."""
    value = spec.raw.get("value")
    prefix = value if value.__class__ is str else js_text(value)
    lowered, yes = _prefix(prefix)
    if low_output(ctx.output).startswith(lowered):
        return yes
    return Outcome(False, message=f"output starts with {_quote(ctx.output[:40])}, not {_quote(prefix)}")


@assertion("ends_with", layer=Layer.BEHAVIOR, schema={"required": ["value"], "properties": {"value": TEXT}})
def ends_with(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output ends with `value`, ignoring case; nothing is trimmed."""
    suffix = js_text(spec.get("value"))
    if low_output(ctx.output).endswith(low(suffix)):
        return Outcome(True, message=f"output ends with {_quote(suffix)}")
    tail = ctx.output[-40:]
    return Outcome(False, message=f"output ends with {_quote(tail)}, not {_quote(suffix)}")


# --- regex ----------------------------------------------------------------------------------

_FLAG_BITS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "u": 0, "g": 0, "d": 0}


class CompiledRegex:
    __slots__ = ("pattern", "flags", "sticky", "shown", "no_match")

    def __init__(self, pattern: regex.Pattern[str], flags: str, sticky: bool):
        self.pattern = pattern
        self.flags = flags
        self.sticky = sticky
        self.shown = _quote(pattern.pattern)  # the pattern as the check's words quote it
        self.no_match = Outcome(False, message=f"output does not match {self.shown}")


@lru_cache(maxsize=SAME_OUTCOMES)
def _matched(compiled: CompiledRegex, text: str) -> Outcome:
    """The outcome of `compiled` matching `text`: matches repeat, and so does their outcome."""
    return Outcome(True, message=f"output matches {compiled.shown} at {_quote(text, 40)}")


def prepare_regex(spec: AssertionSpec) -> CompiledRegex:
    """Compile once at load. Flags are JS-style: explicit flags replace the default "i"."""
    return compile_regex(spec.get("pattern", ""), spec.get("flags") or "i")  # `flags: ""` is falsy in JS: back to "i"


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str, flags: str) -> CompiledRegex:
    """One compiled pattern per distinct (pattern, flags), shared by every assertion that writes
    it (read-only); the cache is bounded, so a long-lived process does not grow with it."""
    bits = 0
    sticky = False
    for flag in flags:
        if flags.count(flag) > 1:
            raise PrepareError("flags", f"invalid regular expression flags {flags!r}: {flag!r} repeated")
        if flag == "y":
            sticky = True
        elif flag in _FLAG_BITS:
            bits |= _FLAG_BITS[flag]
        else:
            raise PrepareError(
                "flags", f"unsupported regular expression flag {flag!r} (use any of i, m, s, u, g, y)"
            )
    try:
        compiled = regex.compile(pattern, bits)
    except regex.error as exc:
        raise PrepareError("pattern", f"invalid regular expression: {exc}") from None
    return CompiledRegex(compiled, flags, sticky)


@assertion(
    "regex",
    layer=Layer.FACT,
    schema={
        "required": ["pattern"],
        "properties": {"pattern": {"type": "string", "minLength": 1}, "flags": {"type": "string"}},
    },
    prepare=prepare_regex,
)
def regex_(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output matches `pattern` (JS-style flags, default "i"), within a time limit."""
    compiled = spec.compiled if isinstance(spec.compiled, CompiledRegex) else prepare_regex(spec)
    find = compiled.pattern.match if compiled.sticky else compiled.pattern.search
    try:
        match = find(ctx.output, timeout=ctx.regex_timeout_s)
    except TimeoutError:
        return Outcome(
            False,
            error=True,
            message=f"regex {compiled.shown} ran out of time ({ctx.regex_timeout_s:g}s); "
            "the pattern probably backtracks catastrophically",
        )
    return compiled.no_match if match is None else _matched(compiled, match.group(0))


# --- length and word count ----------------------------------------------------------------

_COUNT = {"required": ["value"], "properties": {"value": NON_NEGATIVE}}


@lru_cache(maxsize=SAME_OUTCOMES, typed=True)  # typed: a limit of 1 and of 1.0 are worded alike, True is not a limit
def _bound(kind: str, actual: int, limit: float, at_least: bool) -> Outcome:
    limit_text = js_text(limit)
    if at_least:
        ok = actual >= limit
        return Outcome(ok, metric=actual, message=f"{kind} {actual} {'>=' if ok else '<'} min {limit_text}")
    ok = actual <= limit
    return Outcome(ok, metric=actual, message=f"{kind} {actual} {'<=' if ok else '>'} max {limit_text}")


@assertion("min_length", layer=Layer.BEHAVIOR, schema=_COUNT)
def min_length(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output has at least `value` characters (Unicode code points)."""
    return _bound("length", len(ctx.output), spec.get("value"), at_least=True)


@assertion("max_length", layer=Layer.BEHAVIOR, schema=_COUNT)
def max_length(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output has at most `value` characters (Unicode code points)."""
    return _bound("length", len(ctx.output), spec.get("value"), at_least=False)


@assertion("word_count_min", layer=Layer.BEHAVIOR, schema=_COUNT)
def word_count_min(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output has at least `value` words (each CJK character is a word)."""
    return _bound("word count", word_count(ctx.output), spec.get("value"), at_least=True)


@assertion("word_count_max", layer=Layer.BEHAVIOR, schema=_COUNT)
def word_count_max(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output has at most `value` words (each CJK character is a word)."""
    return _bound("word count", word_count(ctx.output), spec.get("value"), at_least=False)
