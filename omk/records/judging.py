"""A result's (or a turn's) judge block as omk writes and reads it (docs/report-format.md, "judge"):
the layer score, the rubric and each dimension, an ensemble's members and agreement, typed.

Read by msgspec's typed decoding (`JudgeBlock.read`: a wrong field is worded by omk.records.wire,
a missing or null field takes its default) into records of the written layout (`_BlockLine`,
`_ItemLine`, `_AgreementLine`), each then paired with the object it was read from: what the judge
wrote comes back in the same order (`keys`: the fields as they were written), so a result read and
written again is the text it was, and a field omk does not write (a hand-made or a much older
report's) is kept as written in `others` and shown, never interpreted. That order and those extra
fields are why these records keep their own `to_json` rather than msgspec's encoding of their
fields (omk.records.wire's `JsonRecord`), and why the typed read is paired with the plain one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.records.wire import HINT, Number, convert

ITEM_KEYS = ("judge", "score", "reason", "reasoning", "cost_usd", "detail", "samples", "stddev", "failures", "judges", "agreement", "errors", "raw_replies", "error")  # fmt: skip
BLOCK_KEYS = ("score", "rubric", "dimensions", "cost_usd", "error", "judges", "agreement", "ensemble")
AGREEMENT_KEYS = ("mean_abs_diff", "pair_count", "stddev")
Others = tuple[tuple[str, Any], ...]


def _emit(values: Mapping[str, Any], keys: tuple[str, ...], others: Others) -> dict[str, Any]:
    """The fields in the order they were written: typed ones from `values`, the rest as written."""
    rest = dict(others)
    return {k: values[k] if k in values else rest.get(k) for k in keys}


def _items(items: tuple[JudgeItem, ...] | None) -> list[dict[str, Any]] | None:
    return [i.to_json() for i in items] if items is not None else None


class SampleAgreement(msgspec.Struct, frozen=True, gc=False):
    """How far an ensemble's judges agree on one sample or item: the mean |difference| over the
    pairs of judges, their number, and the spread of the scores (omk/judge/agreement.py)."""

    mean_abs_diff: Number | None = None
    pair_count: int | None = None
    stddev: Number | None = None
    keys: tuple[str, ...] = AGREEMENT_KEYS
    others: Others = ()

    def to_json(self) -> dict[str, Any]:
        values = {"mean_abs_diff": self.mean_abs_diff, "pair_count": self.pair_count, "stddev": self.stddev}
        return _emit(values, self.keys, self.others)



class JudgeItem(msgspec.Struct, frozen=True, gc=False):
    """The rubric, one dimension, or one judge's part of either: `judge` (the member's spec; None
    on an ensemble's item), the score (1–5, the mean of its repeats), reason and reasoning, cost;
    under `--judge-repeat` each call's score (`samples`), their `stddev` and the `failures`; an
    ensemble's item its members (`judges`) and their `agreement`; what went wrong (`errors` of the
    calls, `raw_replies` that could not be read, `error` when nothing scored). An ensemble's
    per-sample member entry (`judges` of the block) is a `JudgeItem` with `judge` and `score` only."""

    score: Number | None
    reason: str | None = None
    judge: str | None = None
    reasoning: str | None = None
    cost_usd: Number | None = None
    detail: Any = None  # what a judge-scored check adds (plain JSON, only shown)
    samples: tuple[Number | None, ...] | None = None
    stddev: Number | None = None
    failures: int | None = None
    judges: tuple[JudgeItem, ...] | None = None
    agreement: SampleAgreement | None = None
    errors: tuple[str, ...] | None = None
    raw_replies: tuple[str, ...] | None = None
    error: str | None = None
    keys: tuple[str, ...] = ("score", "reason")
    others: Others = ()

    def to_json(self) -> dict[str, Any]:
        values = {
            "judge": self.judge, "score": self.score, "reason": self.reason, "reasoning": self.reasoning,
            "cost_usd": self.cost_usd, "detail": self.detail, "stddev": self.stddev, "failures": self.failures,
            "samples": list(self.samples) if self.samples is not None else None, "judges": _items(self.judges),
            "agreement": self.agreement.to_json() if self.agreement is not None else None,
            "errors": list(self.errors) if self.errors is not None else None, "error": self.error,
            "raw_replies": list(self.raw_replies) if self.raw_replies is not None else None,
        }  # fmt: skip
        return _emit(values, self.keys, self.others)

    def scores_by_judge(self) -> dict[str | None, float | None]:
        """The item's score under None, then each member's by its spec."""
        found: dict[str | None, float | None] = {None: _float(self.score)}
        for m in self.judges or ():
            if m.judge is not None:
                found[m.judge] = _float(m.score)
        return found


def _float(value: Number | None) -> float | None:
    return float(value) if value is not None else None


class JudgeBlock(msgspec.Struct, frozen=True, gc=False):
    """A result's (or a turn's) judge block: the layer score, the rubric, each dimension, the
    cost and the error; for an ensemble each member's score on the sample (`judges`) and how far
    they agree (`agreement`). `ensemble` is the members as an older omk named them."""

    score: Number | None
    rubric: JudgeItem | None
    dimensions: tuple[tuple[str, JudgeItem], ...]
    cost_usd: Number | None
    error: str | None
    judges: tuple[JudgeItem, ...] | None = None
    agreement: SampleAgreement | None = None
    ensemble: tuple[JudgeItem, ...] | None = None
    dimensions_null: bool = True  # `dimensions` written as null when there are none
    keys: tuple[str, ...] = ("score", "rubric", "dimensions", "cost_usd", "error")
    others: Others = ()

    def to_json(self) -> dict[str, Any]:
        dims = {name: d.to_json() for name, d in self.dimensions} if self.dimensions or not self.dimensions_null else None
        values = {
            "score": self.score, "rubric": self.rubric.to_json() if self.rubric is not None else None, "dimensions": dims,
            "cost_usd": self.cost_usd, "error": self.error, "judges": _items(self.judges), "ensemble": _items(self.ensemble),
            "agreement": self.agreement.to_json() if self.agreement is not None else None,
        }  # fmt: skip
        return _emit(values, self.keys, self.others)

    @property
    def members(self) -> dict[str | None, Number | None] | None:
        """An ensemble's scores by member (`judges`), None for a single judge."""
        return {m.judge: m.score for m in self.judges} if self.judges is not None else None

    @property
    def member_scores(self) -> list[Number]:
        """The numeric scores of an ensemble's members (`judges`, or `ensemble` as older omk wrote)."""
        return [m.score for m in self.ensemble or self.judges or () if m.score is not None]

    @property
    def agreement_stddev(self) -> float | None:
        """The spread of an ensemble's scores, as its `agreement` block says."""
        return _float(self.agreement.stddev) if self.agreement is not None else None

    def item_scores(self) -> dict[str, dict[str | None, float | None]]:
        """Per item (`rubric`, `dimension NAME`): the score by judge, None keying the item's own
        score (an ensemble's mean, or the single judge's)."""
        found = {"rubric": self.rubric.scores_by_judge()} if self.rubric is not None else {}
        return found | {f"dimension {name}": d.scores_by_judge() for name, d in self.dimensions}

    @property
    def extra(self) -> dict[str, Any]:
        """The block's fields besides the score, the rubric and the dimensions."""
        return {k: v for k, v in self.to_json().items() if k not in ("score", "rubric", "dimensions")}

    def items(self) -> list[tuple[str, Any, str]]:
        """(what, score, reason) for the rubric and each dimension."""
        found = [("rubric", self.rubric.score, self.rubric.reason or "")] if self.rubric else []
        return found + [(f"dimension {name}", d.score, d.reason or "") for name, d in self.dimensions]

    @classmethod
    def read(cls, data: Mapping[str, Any] | None, origin: str = "judge", at: str = "") -> JudgeBlock | None:
        """A judge block (what a judge returned, or a result's `judge` found at `at` of `origin`) as
        a record; None for none (or `{}`)."""
        if not data:
            return None
        return convert(data, _BlockLine, origin, at, HINT, nulls=True).record(data)


# What a judge block is read from: its fields typed as written (msgspec checks them), each paired
# with the object it was read from for the order of its keys and the fields omk does not know.


class _AgreementLine(msgspec.Struct, frozen=True, gc=False):
    mean_abs_diff: Number | None = None
    pair_count: int | None = None
    stddev: Number | None = None

    def record(self, raw: Mapping[str, Any]) -> SampleAgreement:
        return SampleAgreement(self.mean_abs_diff, self.pair_count, self.stddev, tuple(raw), _others(raw, AGREEMENT_KEYS))


class _ItemLine(msgspec.Struct, frozen=True, gc=False):
    score: Number | None = None
    reason: str | None = None
    judge: str | None = None
    reasoning: str | None = None
    cost_usd: Number | None = None
    detail: Any = None
    samples: tuple[Number | None, ...] | None = None
    stddev: Number | None = None
    failures: int | None = None
    judges: tuple[_ItemLine, ...] | None = None
    agreement: _AgreementLine | None = None
    errors: tuple[str, ...] | None = None
    raw_replies: tuple[str, ...] | None = None
    error: str | None = None

    def record(self, raw: Mapping[str, Any]) -> JudgeItem:
        return JudgeItem(
            score=self.score, reason=self.reason, judge=self.judge, reasoning=self.reasoning, cost_usd=self.cost_usd,
            detail=self.detail, samples=self.samples, stddev=self.stddev, failures=self.failures,
            judges=_items_of(self.judges, raw.get("judges")), agreement=_agreement_of(self.agreement, raw),
            errors=self.errors, raw_replies=self.raw_replies, error=self.error, keys=tuple(raw), others=_others(raw, ITEM_KEYS),
        )  # fmt: skip


class _BlockLine(msgspec.Struct, frozen=True, gc=False):
    score: Number | None = None
    rubric: _ItemLine | None = None
    dimensions: Mapping[str, _ItemLine] | None = None
    cost_usd: Number | None = None
    error: str | None = None
    judges: tuple[_ItemLine, ...] | None = None
    agreement: _AgreementLine | None = None
    ensemble: tuple[_ItemLine, ...] | None = None

    def record(self, raw: Mapping[str, Any]) -> JudgeBlock:
        dims = raw.get("dimensions") or {}
        return JudgeBlock(
            score=self.score,
            rubric=self.rubric.record(raw["rubric"]) if self.rubric is not None else None,
            dimensions=tuple((name, d.record(dims[name])) for name, d in self.dimensions.items()) if self.dimensions else (),
            cost_usd=self.cost_usd,
            error=self.error,
            judges=_items_of(self.judges, raw.get("judges")),
            agreement=_agreement_of(self.agreement, raw),
            ensemble=_items_of(self.ensemble, raw.get("ensemble")),
            dimensions_null=self.dimensions is None,
            keys=tuple(raw),
            others=_others(raw, BLOCK_KEYS),
        )


def _items_of(lines: tuple[_ItemLine, ...] | None, raw: list[Any] | None) -> tuple[JudgeItem, ...] | None:
    return tuple(line.record(r) for line, r in zip(lines, raw or (), strict=True)) if lines is not None else None


def _agreement_of(line: _AgreementLine | None, raw: Mapping[str, Any]) -> SampleAgreement | None:
    return line.record(raw["agreement"]) if line is not None else None


def _others(raw: Mapping[str, Any], typed: tuple[str, ...]) -> Others:
    return tuple((k, v) for k, v in raw.items() if k not in typed)
