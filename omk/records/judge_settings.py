"""The run's judge as report.json records it (`judge`: its models and settings, and how far an
ensemble's judges agree across the run): loaded only when a run has a judge, or a report read
back has the block.

The agreement records are msgspec structs (omk.records.wire). The judge models stay written by
hand: each keeps the fields its kind adds (`details`) in the order the kind gave them, which no
fixed set of fields can say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.records.fields import Fields, Number
from omk.records.parts import details
from omk.records.wire import JsonRecord


class PairAgreement(JsonRecord, frozen=True):
    """Two judges of an ensemble across the run: their mean |difference| and Pearson's r."""

    judges: tuple[str, ...] = ()
    mean_abs_diff: Number | None = None
    pearson: Number | None = None


class RunAgreement(JsonRecord, frozen=True):
    """How far an ensemble's judges agree across the samples every one of them scored
    (`judge.agreement`, omk/judge/agreement.py): the means over the pairs, and each pair."""

    sample_count: int = 0
    pair_count: int = 0
    mean_abs_diff: Number | None = None
    pearson: Number | None = None
    pairs: tuple[PairAgreement, ...] = ()

    @classmethod
    def read(cls, data: Mapping[str, Any] | None) -> RunAgreement | None:
        """What omk.judge.agreement.run_agreement returned, as a record."""
        return cls.from_json(Fields.of(data, "report", "judge.agreement")) if data is not None else None


class JudgeModel(msgspec.Struct, frozen=True, gc=False):
    """One judge model of the run (`judge.judges[]`): its `spec` and `kind`, then what the kind
    adds (`details`: a model's `model` and `base_url`, a command's `command`); never a key."""

    spec: str | None
    kind: str | None
    details: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "kind": self.kind, **dict(self.details)}

    @classmethod
    def from_json(cls, f: Fields) -> JudgeModel:
        return cls(f.str("spec"), f.str("kind"), details(f, ("spec", "kind")))


class JudgeSettings(msgspec.Struct, frozen=True, gc=False):
    """The run's judge (report.json's `judge`, null when no judge ran): its models, each model's
    description, the rubric template's version and hash, language, length debiasing, repeats
    (`--judge-repeat`), every template's version or hash, and an ensemble's agreement."""

    models: tuple[str, ...]
    judges: tuple[JudgeModel, ...] = ()
    prompt_version: str | None = None
    prompt_hash: str | None = None
    lang: str | None = None
    debias_length: bool | None = None
    repeat: int | None = None
    templates: tuple[tuple[str, Any], ...] = ()  # name: a hash, or the rubric's {version, hash}
    agreement: RunAgreement | None = None  # an ensemble's, across the samples
    ensemble: bool = False  # whether `agreement` is written (an ensemble's block has it, null or not)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "models": list(self.models),
            "judges": [j.to_json() for j in self.judges],
            "prompt_version": self.prompt_version,
            "prompt_hash": self.prompt_hash,
            "lang": self.lang,
            "debias_length": self.debias_length,
            "repeat": self.repeat,
            "templates": dict(self.templates),
        }
        if self.ensemble:
            out["agreement"] = self.agreement.to_json() if self.agreement is not None else None
        return out

    @classmethod
    def from_json(cls, f: Fields | None) -> JudgeSettings | None:
        if f is None or not f.data:
            return None
        templates = f.obj("templates")
        return cls(
            f.strs("models"), tuple(JudgeModel.from_json(j) for j in f.objs("judges")), f.str("prompt_version"),
            f.str("prompt_hash"), f.str("lang"), f.bool("debias_length", None), f.int("repeat", None),
            tuple(templates.data.items()) if templates is not None else (), RunAgreement.from_json(f.obj("agreement")),
            "agreement" in f.data,
        )  # fmt: skip

    @classmethod
    def read(cls, described: Mapping[str, Any] | None) -> JudgeSettings | None:
        """A judge's `describe()` as a record; None for none."""
        return cls.from_json(Fields.of(described, "report", "judge")) if described else None
