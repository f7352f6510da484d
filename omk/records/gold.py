"""The judges checked against people (report.json's `gold` block, `omk gold check --json`): per
judge and per item (the rubric, each dimension), Krippendorff's α between the judge and the
people's labels with its bootstrap interval, the mean bias (judge minus people) and the samples
they disagree on most; Cohen's κ and the confusion table for pass/fail; the people's own α when
several raters labelled; and which judges fall below the bar (`flagged`).
"""

from __future__ import annotations

from typing import Any

from omk.frozen import record
from omk.records.fields import Fields, Number

ALPHA_BAR = 0.667  # below this (or an interval reaching below it) a judge is not trusted


@record
class AlphaBounds:
    low: Number
    high: Number

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high}

    @classmethod
    def from_json(cls, f: Fields | None) -> AlphaBounds | None:
        if f is None or f.num("low") is None or f.num("high") is None:
            return None
        return cls(f.num("low"), f.num("high"))


@record
class Disagreement:
    """One sample where the judge and the people differ: the judge's score, the people's mean."""

    sample_id: str
    judge: Number
    people: Number

    @property
    def difference(self) -> float:
        return float(self.judge) - float(self.people)

    def to_json(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "judge": self.judge, "people": self.people}

    @classmethod
    def from_json(cls, f: Fields) -> Disagreement:
        return cls(str(f.str("sample_id", "")), f.num("judge", 0), f.num("people", 0))


@record
class ItemAgreement:
    """One judge on one item (`rubric`, or `dimension NAME`) against the people."""

    item: str
    samples: int  # samples both the judge and the people scored
    alpha: Number | None
    ci: AlphaBounds | None
    bias: Number | None  # mean of judge − people
    disagreements: tuple[Disagreement, ...] = ()

    @property
    def below_bar(self) -> bool:
        return (self.alpha is not None and self.alpha < ALPHA_BAR) or (
            self.ci is not None and self.ci.low < ALPHA_BAR
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "samples": self.samples,
            "alpha": self.alpha,
            "ci": self.ci.to_json() if self.ci else None,
            "bias": self.bias,
            "disagreements": [d.to_json() for d in self.disagreements],
        }

    @classmethod
    def from_json(cls, f: Fields) -> ItemAgreement:
        return cls(
            str(f.str("item", "")), f.int("samples"), f.num("alpha"), AlphaBounds.from_json(f.obj("ci")),
            f.num("bias"), tuple(Disagreement.from_json(d) for d in f.objs("disagreements")),
        )  # fmt: skip


@record
class PassAgreement:
    """The judge's pass (its score at or above the threshold) against the people's `pass`."""

    samples: int
    kappa: Number | None
    both_pass: int
    judge_pass_people_fail: int
    judge_fail_people_pass: int
    both_fail: int

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "kappa": self.kappa,
            "both_pass": self.both_pass,
            "judge_pass_people_fail": self.judge_pass_people_fail,
            "judge_fail_people_pass": self.judge_fail_people_pass,
            "both_fail": self.both_fail,
        }

    @classmethod
    def from_json(cls, f: Fields | None) -> PassAgreement | None:
        if f is None:
            return None
        return cls(
            f.int("samples"), f.num("kappa"), f.int("both_pass"), f.int("judge_pass_people_fail"),
            f.int("judge_fail_people_pass"), f.int("both_fail"),
        )  # fmt: skip


@record
class JudgeAgreement:
    """One judge (an ensemble's member, or the ensemble together) against the people."""

    judge: str
    member: bool  # one member of an ensemble (False: the judge layer as the run scored it)
    items: tuple[ItemAgreement, ...]
    passes: PassAgreement | None
    flagged: bool
    reasons: tuple[str, ...]  # why it is flagged: `rubric α=0.52 [0.31, 0.70] < 0.667`

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "member": self.member,
            "items": [i.to_json() for i in self.items],
            "pass": self.passes.to_json() if self.passes else None,
            "flagged": self.flagged,
            "reasons": list(self.reasons),
        }

    @classmethod
    def from_json(cls, f: Fields) -> JudgeAgreement:
        return cls(
            str(f.str("judge", "")), f.bool("member"), tuple(ItemAgreement.from_json(i) for i in f.objs("items")),
            PassAgreement.from_json(f.obj("pass")), f.bool("flagged"), f.strs("reasons"),
        )  # fmt: skip


@record
class PeopleAgreement:
    """The people's own α on one item, over the samples two or more raters labelled."""

    item: str
    samples: int
    raters: int
    alpha: Number | None
    ci: AlphaBounds | None

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "samples": self.samples,
            "raters": self.raters,
            "alpha": self.alpha,
            "ci": self.ci.to_json() if self.ci else None,
        }

    @classmethod
    def from_json(cls, f: Fields) -> PeopleAgreement:
        return cls(
            str(f.str("item", "")),
            f.int("samples"),
            f.int("raters"),
            f.num("alpha"),
            AlphaBounds.from_json(f.obj("ci")),
        )


@record
class GoldCheck:
    """The whole check (see the module text)."""

    level: str  # interval | ordinal
    bar: Number
    labelled: int  # samples with at least one label that the run has a result for
    labels: int  # labels read (one per sample and rater)
    unmatched: tuple[str, ...]  # labelled sample ids the run has no result for
    judges: tuple[JudgeAgreement, ...]
    people: tuple[PeopleAgreement, ...]
    resamples: int = 1000
    seed: int = 0

    @property
    def flagged(self) -> tuple[JudgeAgreement, ...]:
        return tuple(j for j in self.judges if j.flagged)

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "bar": self.bar,
            "labelled": self.labelled,
            "labels": self.labels,
            "unmatched": list(self.unmatched),
            "resamples": self.resamples,
            "seed": self.seed,
            "judges": [j.to_json() for j in self.judges],
            "people": [p.to_json() for p in self.people],
            "flagged": [j.judge for j in self.flagged],
        }

    @classmethod
    def from_json(cls, f: Fields | None) -> GoldCheck | None:
        if f is None:
            return None
        return cls(
            level=str(f.str("level", "interval")),
            bar=f.num("bar", ALPHA_BAR),
            labelled=f.int("labelled"),
            labels=f.int("labels"),
            unmatched=f.strs("unmatched"),
            judges=tuple(JudgeAgreement.from_json(j) for j in f.objs("judges")),
            people=tuple(PeopleAgreement.from_json(p) for p in f.objs("people")),
            resamples=f.int("resamples", 1000),
            seed=f.int("seed"),
        )
