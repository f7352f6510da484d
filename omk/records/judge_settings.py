"""The run's judge as report.json records it (`judge`: its models and settings, and how far an
ensemble's judges agree across the run): loaded only when a run has a judge, or a report read
back has the block.

Read by msgspec's typed decoding (`JudgeSettings.read`; a wrong field is worded by omk.records.wire,
a missing or null field takes its default). The agreement records are written and read as their
fields. The judge settings and models keep their own `to_json` and read through a record of the
written layout (`_SettingsLine`): each model keeps the fields its kind adds (`details`) in the
order the kind gave them, which no fixed set of fields can say (only its `spec` and `kind` are
typed, the rest kept as written), and `agreement` is written only in an ensemble's block."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.records.wire import HINT, JsonRecord, Number, convert


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
    def of(cls, data: Mapping[str, Any] | None) -> RunAgreement | None:
        """What omk.judge.agreement.run_agreement returned, as a record."""
        return convert(data, cls, "report", "judge.agreement", HINT, nulls=True) if data is not None else None


class JudgeModel(msgspec.Struct, frozen=True, gc=False):
    """One judge model of the run (`judge.judges[]`): its `spec` and `kind`, then what the kind
    adds (`details`: a model's `model` and `base_url`, a command's `command`); never a key."""

    spec: str | None
    kind: str | None
    details: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "kind": self.kind, **dict(self.details)}



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
    def read(cls, described: Mapping[str, Any] | None, origin: str = "report", at: str = "judge") -> JudgeSettings | None:
        """A judge's `describe()` (or report.json's `judge`, at `at` of `origin`) as a record; None for none."""
        if not described:
            return None
        line = convert(described, _SettingsLine, origin, at, HINT, nulls=True)
        models = zip(line.judges, described.get("judges") or (), strict=True)
        agreement = line.agreement if line.agreement is not msgspec.UNSET else None
        return cls(
            line.models, tuple(JudgeModel(m.spec, m.kind, _details(raw)) for m, raw in models), line.prompt_version,
            line.prompt_hash, line.lang, line.debias_length, line.repeat, tuple((line.templates or {}).items()),
            agreement, line.agreement is not msgspec.UNSET,
        )  # fmt: skip


class _ModelLine(msgspec.Struct, frozen=True, gc=False):
    spec: str | None = None
    kind: str | None = None


class _SettingsLine(msgspec.Struct, frozen=True, gc=False):
    """`judge` as written: each model's fields besides its spec and kind are kept as written (its
    `details`), the templates as a mapping, and `agreement` only in an ensemble's block (even null)."""

    models: tuple[str, ...] = ()
    judges: tuple[_ModelLine, ...] = ()
    prompt_version: str | None = None
    prompt_hash: str | None = None
    lang: str | None = None
    debias_length: bool | None = None
    repeat: int | None = None
    templates: Mapping[str, Any] | None = None
    agreement: RunAgreement | None | msgspec.UnsetType = msgspec.UNSET


def _details(raw: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, v) for k, v in raw.items() if k not in ("spec", "kind"))
