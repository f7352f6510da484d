"""How far an ensemble's judges agree across a run (report.json's `judge.agreement`): loaded
only when a run's judge is an ensemble, or a report read back has the block."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omk.records.fields import Fields, Number


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Two judges of an ensemble across the run: their mean |difference| and Pearson's r."""

    judges: tuple[str, ...]
    mean_abs_diff: Number | None
    pearson: Number | None

    def to_json(self) -> dict[str, Any]:
        return {"judges": list(self.judges), "mean_abs_diff": self.mean_abs_diff, "pearson": self.pearson}

    @classmethod
    def from_json(cls, f: Fields) -> PairAgreement:
        return cls(f.strs("judges"), f.num("mean_abs_diff"), f.num("pearson"))


@dataclass(frozen=True, slots=True)
class RunAgreement:
    """How far an ensemble's judges agree across the samples every one of them scored
    (`judge.agreement`, omk/judge/agreement.py): the means over the pairs, and each pair."""

    sample_count: int
    pair_count: int
    mean_abs_diff: Number | None
    pearson: Number | None
    pairs: tuple[PairAgreement, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "sample_count": self.sample_count,
            "pair_count": self.pair_count,
            "mean_abs_diff": self.mean_abs_diff,
            "pearson": self.pearson,
            "pairs": [p.to_json() for p in self.pairs],
        }

    @classmethod
    def from_json(cls, f: Fields | None) -> RunAgreement | None:
        if f is None:
            return None
        pairs = tuple(PairAgreement.from_json(p) for p in f.objs("pairs"))
        return cls(f.int("sample_count"), f.int("pair_count"), f.num("mean_abs_diff"), f.num("pearson"), pairs)

    @classmethod
    def read(cls, data: Mapping[str, Any] | None) -> RunAgreement | None:
        """What omk.judge.agreement.run_agreement returned, as a record."""
        return cls.from_json(Fields.of(data, "report", "judge.agreement")) if data is not None else None
