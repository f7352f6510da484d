"""The Microsoft 365 Agents Toolkit string evaluators: `citations`, `exact_match`, `partial_match`.

M365 eval datasets name them `Citations`, `ExactMatch` and `PartialMatch` (omk.loader.formats.m365 maps
them here); omk samples can use them directly. The choices where the M365 sources disagree are
recorded in docs/formats.md:

* `exact_match` is a containment check by default (the M365 documentation: "the response passes
  if it contains the expected string"), `mode: equals` gives trimmed equality; case-insensitive
  unless `case_sensitive: true`; runs of whitespace compare as one space.
* `partial_match` is the SQuAD-style token F1 the Azure AI Evaluation SDK computes, with every
  CJK character a token of its own, so Chinese answers score as words do.
* `citations` counts *distinct* citations (a repeated `[1]` is one source), in any of the
  formats unless `citation_format` names one.
* `m365_telemetry` stands for the evaluators that read Microsoft 365 Copilot telemetry
  (`RetrievalQuery`, `RetrievalResult`, `ToolCallSelection`, `ToolCallExecution`): no omk target
  reports it, so the check is never scored; it is reported as not applicable, with the reason, and
  the item's other evaluators run.
"""

from __future__ import annotations

import string
import unicodedata
from collections import Counter
from typing import Any

import msgspec
import regex

from omk.assertions.context import CheckContext
from omk.assertions.registry import RATIO, TEXT, assertion
from omk.assertions.text import CJK_CLASS, JS_WHITESPACE, js_text
from omk.samples.model import AssertionSpec, Layer, Outcome

# --- citations --------------------------------------------------------------------------------

CITATION_FORMATS = ("oai_unicode", "bracket", "markdown", "inline", "mixed")
DEFAULT_CITATION_FORMAT = "mixed"

# `[1](https://…)`: a numbered link (CLI 1.13 "markdown" citations).
_MARKDOWN = regex.compile(r"\[(\d{1,4})\]\((?:[^()\s]|\([^()\s]*\))+\)")
# `[1]`, `[1, 2]`, `[^1]`, `[^1^]` — but not the label of a markdown link.
_BRACKET = regex.compile(r"\[\^?(\d{1,4}(?:\s*[,，]\s*\d{1,4})*)\^?\](?!\()")
# What is code, not prose: fenced blocks, inline code spans, and an assignment to an indexed name
# (`arr[1] = 2`). Brackets there are indexes, never citations.
_CODE = regex.compile(r"(?ms)^[ \t]*(```|~~~).*?(?:^[ \t]*\1|\Z)|(`+)(?!`)[^\n]+?(?<!`)\2(?!`)")
_INDEX_ASSIGNMENT = regex.compile(r"(?<=[A-Za-z0-9_)])(?:\[\d{1,4}\])+\s*=(?!=)")
# OpenAI / Copilot markers: `【4:0†source】` (lenticular brackets, dagger) and the private-use
# span `\ue200cite\ue202turn0search3\ue201`.
_OAI_LENTICULAR = regex.compile(r"【([^【】†]{0,40})†([^【】]{0,200})】")
_OAI_PRIVATE = regex.compile(r"\ue200cite\ue202([^\ue200\ue201]{1,200})\ue201")


class Citation(msgspec.Struct, frozen=True, gc=False):
    key: str  # what makes two citations the same one: "1", or the marker text
    text: str  # as written
    format: str


def find_citations(text: str, fmt: str = DEFAULT_CITATION_FORMAT) -> list[Citation]:
    """Distinct citations in `text`, in order of first appearance, for one format or all."""
    found: list[tuple[int, Citation]] = []
    if fmt in ("markdown", "inline", "mixed"):
        for m in _MARKDOWN.finditer(text):
            found.append((m.start(), Citation(str(int(m.group(1))), m.group(0), "markdown")))
    if fmt in ("bracket", "inline", "mixed"):
        code = [m.span() for m in _CODE.finditer(text)] + [m.span() for m in _INDEX_ASSIGNMENT.finditer(text)]
        for m in _BRACKET.finditer(text):
            numbers = [int(n) for n in regex.split(r"\s*[,，]\s*", m.group(1))]
            if 0 in numbers or any(start <= m.start() < end for start, end in code):
                continue  # sources are numbered from 1 (runevals: index >= 1); `arr[0]` is code
            for number in numbers:
                found.append((m.start(), Citation(str(number), m.group(0), "bracket")))
    if fmt in ("oai_unicode", "mixed"):
        for m in _OAI_LENTICULAR.finditer(text):
            found.append((m.start(), Citation("oai:" + m.group(1).strip(), m.group(0), "oai_unicode")))
        for m in _OAI_PRIVATE.finditer(text):
            found.append((m.start(), Citation("oai:" + m.group(1), m.group(0), "oai_unicode")))
    distinct: dict[str, Citation] = {}
    for _, citation in sorted(found, key=lambda pair: pair[0]):
        distinct.setdefault(citation.key, citation)
    return list(distinct.values())


@assertion(
    "citations",
    layer=Layer.FACT,
    schema={
        "properties": {
            "threshold": {"type": "integer", "minimum": 1},
            "citation_format": {"enum": list(CITATION_FORMATS)},
        }
    },
)
def citations(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output cites at least `threshold` (default 1) distinct sources."""
    fmt = spec.get("citation_format") or DEFAULT_CITATION_FORMAT
    threshold = spec.get("threshold", 1)
    found = find_citations(ctx.output, fmt)
    count = len(found)
    ok = count >= threshold
    shown = ", ".join(c.text if len(c.text) <= 30 else c.text[:29] + "…" for c in found[:8])
    more = f", … {count - 8} more" if count > 8 else ""
    formats = sorted({c.format for c in found})
    detected = f"; detected {', '.join(formats)}" if fmt == "mixed" and formats else ""
    where = f" ({shown}{more})" if found else ""
    return Outcome(
        ok,
        metric=count,
        message=f"{count} distinct citation(s){where} {'>=' if ok else '<'} {threshold} (format {fmt}{detected})",
    )


# --- exact match ------------------------------------------------------------------------------

_SPACES = regex.compile(f"[{regex.escape(JS_WHITESPACE)}]+")


def _normalized(text: str, case_sensitive: bool) -> str:
    text = _SPACES.sub(" ", text).strip(" ")
    return text if case_sensitive else text.casefold()


@assertion(
    "exact_match",
    layer=Layer.FACT,
    schema={
        "required": ["value"],
        "properties": {
            "value": TEXT,
            "case_sensitive": {"type": "boolean"},
            "mode": {"enum": ["contains", "equals"]},
        },
    },
)
def exact_match(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output contains `value` (or equals it, `mode: equals`); case-insensitive by default."""
    case_sensitive = spec.get("case_sensitive", False) is True
    mode = spec.get("mode", "contains")
    expected = _normalized(js_text(spec.get("value")), case_sensitive)
    actual = _normalized(ctx.output, case_sensitive)
    ok = expected == actual if mode == "equals" else expected in actual
    how = "equals" if mode == "equals" else "contains"
    case = "case-sensitive" if case_sensitive else "ignoring case"
    verdict = how if ok else ("does not equal" if mode == "equals" else "does not contain")
    return Outcome(ok, metric=1.0 if ok else 0.0, message=f"output {verdict} the expected text ({case})")


# --- partial match (token F1) -----------------------------------------------------------------

_ARTICLES = regex.compile(r"\b(?:a|an|the)\b", regex.IGNORECASE)
_PIECES = regex.compile(rf"[{CJK_CLASS}]|[^{CJK_CLASS}]+", regex.V1)
_ASCII_PUNCT = set(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def f1_tokens(text: str, case_sensitive: bool = False) -> list[str]:
    """SQuAD normalisation (lower-case, drop punctuation and a/an/the, split on whitespace), then
    every CJK character a token of its own."""
    if not case_sensitive:
        text = text.lower()
    text = "".join(" " if _is_punct(ch) else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    tokens: list[str] = []
    for word in text.split():
        tokens.extend(_PIECES.findall(word))
    return tokens


def token_f1(prediction: str, reference: str, case_sensitive: bool = False) -> tuple[float, float, float]:
    """(f1, precision, recall). Both texts empty of tokens → 1; one empty → 0."""
    pred, gold = f1_tokens(prediction, case_sensitive), f1_tokens(reference, case_sensitive)
    if not pred or not gold:
        same = float(pred == gold)
        return same, same, same
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall), precision, recall


@assertion(
    "partial_match",
    layer=Layer.FACT,
    schema={
        "required": ["reference"],
        "properties": {
            "reference": {"type": ["string", "number"]},
            "threshold": RATIO,
            "case_sensitive": {"type": "boolean"},
        },
    },
)
def partial_match(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Token-overlap F1 of the output against `reference` is at least `threshold` (default 0.5)."""
    reference: Any = js_text(spec.get("reference"))
    threshold = spec.get("threshold", 0.5)
    f1, precision, recall = token_f1(ctx.output, reference, spec.get("case_sensitive", False) is True)
    ok = f1 >= threshold
    return Outcome(
        ok,
        metric=round(f1, 4),
        message=f"token F1 {f1:.2f} (precision {precision:.2f}, recall {recall:.2f}) "
        f"{'>=' if ok else '<'} threshold {threshold:g}",
    )


# --- telemetry evaluators ----------------------------------------------------------------------

TELEMETRY_EVALUATORS = ("RetrievalQuery", "RetrievalResult", "ToolCallSelection", "ToolCallExecution")


def not_applicable(evaluator: str) -> str:
    return (
        f"not applicable: {evaluator} reads Microsoft 365 Copilot telemetry (retrieval or tool-call diagnostics) "
        "that no omk target reports; runevals runs it"
    )


@assertion(
    "m365_telemetry",
    layer=Layer.BEHAVIOR,
    schema={"required": ["evaluator"], "properties": {"evaluator": {"enum": list(TELEMETRY_EVALUATORS)}}},
)
def m365_telemetry(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """An M365 telemetry evaluator: never scored, reported as not applicable with the reason."""
    return Outcome(False, message=not_applicable(str(spec.get("evaluator"))), skipped=True)
