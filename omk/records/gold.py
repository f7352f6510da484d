"""The judges checked against people (report.json's `gold` block, `omk gold check --json`): per
judge and per item (the rubric, each dimension), Krippendorff's α between the judge and the
people's labels with its bootstrap interval, the mean bias (judge minus people) and the samples
they disagree on most; Cohen's κ and the confusion table for pass/fail; the people's own α when
several raters labelled; and which judges fall below the bar (`flagged`).

The records are msgspec structs, written and read in their fields' order (omk.records.wire); the
one field worked out rather than kept is `flagged`, the names of the flagged judges, which the
check's `to_json` adds for the people reading the block and its reader does not need.
"""

from __future__ import annotations

from typing import Any

import msgspec

from omk.records.wire import JsonRecord, Number

ALPHA_BAR = 0.667  # below this (or an interval reaching below it) a judge is not trusted


class AlphaBounds(JsonRecord, frozen=True):
    low: Number
    high: Number


class Disagreement(JsonRecord, frozen=True):
    """One sample where the judge and the people differ: the judge's score, the people's mean."""

    sample_id: str = ""
    judge: Number = 0
    people: Number = 0

    @property
    def difference(self) -> float:
        return float(self.judge) - float(self.people)


class ItemAgreement(JsonRecord, frozen=True):
    """One judge on one item (`rubric`, or `dimension NAME`) against the people."""

    item: str = ""
    samples: int = 0  # samples both the judge and the people scored
    alpha: Number | None = None
    ci: AlphaBounds | None = None
    bias: Number | None = None  # mean of judge − people
    disagreements: tuple[Disagreement, ...] = ()

    @property
    def below_bar(self) -> bool:
        return (self.alpha is not None and self.alpha < ALPHA_BAR) or (
            self.ci is not None and self.ci.low < ALPHA_BAR
        )


class PassAgreement(JsonRecord, frozen=True):
    """The judge's pass (its score at or above the threshold) against the people's `pass`."""

    samples: int = 0
    kappa: Number | None = None
    both_pass: int = 0
    judge_pass_people_fail: int = 0
    judge_fail_people_pass: int = 0
    both_fail: int = 0


class JudgeAgreement(JsonRecord, frozen=True):
    """One judge (an ensemble's member, or the ensemble together) against the people."""

    judge: str = ""
    member: bool = False  # one member of an ensemble (False: the judge layer as the run scored it)
    items: tuple[ItemAgreement, ...] = ()
    passes: PassAgreement | None = msgspec.field(default=None, name="pass")
    flagged: bool = False
    reasons: tuple[str, ...] = ()  # why it is flagged: `rubric α=0.52 [0.31, 0.70] < 0.667`


class PeopleAgreement(JsonRecord, frozen=True):
    """The people's own α on one item, over the samples two or more raters labelled."""

    item: str = ""
    samples: int = 0
    raters: int = 0
    alpha: Number | None = None
    ci: AlphaBounds | None = None


class GoldCheck(JsonRecord, frozen=True, kw_only=True):
    """The whole check (see the module text)."""

    level: str = "interval"  # interval | ordinal
    bar: Number = ALPHA_BAR
    labelled: int = 0  # samples with at least one label that the run has a result for
    labels: int = 0  # labels read (one per sample and rater)
    unmatched: tuple[str, ...] = ()  # labelled sample ids the run has no result for
    resamples: int = 1000
    seed: int = 0
    judges: tuple[JudgeAgreement, ...] = ()
    people: tuple[PeopleAgreement, ...] = ()

    @property
    def flagged(self) -> tuple[JudgeAgreement, ...]:
        return tuple(j for j in self.judges if j.flagged)

    def to_json(self) -> dict[str, Any]:
        return super().to_json() | {"flagged": [j.judge for j in self.flagged]}
