"""The small records several blocks of report.json share: a confidence interval (`Bounds`),
the mean of each score layer and their intervals (`LayerMeans`, `LayerBounds`) and what produced
the outputs (`RunTarget`). The summary (omk.records.document), the experiment block, the
`--repeat` block and the judge settings all read them from here, so none of those modules imports
another for them.

They keep their own `to_json` and `from_json` (not msgspec's encoding of their fields, as
omk.records.wire's `JsonRecord`s have): `Bounds` reads an interval without both ends as none,
`RunTarget` writes what its kind adds (`details`) in the order the kind gave it, and every
reader takes a missing or null field as its default (a report of an older omk lacks the fields
added since; msgspec's typed read refuses a null where the type has none) and keeps a number as
written (an integer stays one, where msgspec reads it into a `float` field as a float and the
report would be written back with `.0`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.records.fields import Fields, Number


class Bounds(msgspec.Struct, frozen=True, gc=False):
    """A confidence interval as report.json keeps it: its ends, level and how it was made."""

    low: Number
    high: Number
    level: Number | None = None
    method: str | None = None
    resamples: int | None = None
    seed: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "level": self.level, "method": self.method, "resamples": self.resamples, "seed": self.seed}

    @classmethod
    def from_json(cls, f: Fields | None) -> Bounds | None:
        if f is None or f.num("low") is None or f.num("high") is None:
            return None
        return cls(f.num("low"), f.num("high"), f.num("level"), f.str("method"), f.int("resamples", None), f.raw("seed"))


def bounds_json(b: Bounds | None) -> dict[str, Any] | None:
    return b.to_json() if b is not None else None


class LayerBounds(msgspec.Struct, frozen=True, gc=False):
    """The 95% interval of each mean in `LayerMeans` (`summary.scores_ci`); None where the mean
    is over fewer than 2 samples (or there is no mean)."""

    fact: Bounds | None = None
    behavior: Bounds | None = None
    judge: Bounds | None = None
    composite: Bounds | None = None

    def layer(self, name: str) -> Bounds | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)

    def to_json(self) -> dict[str, Any]:
        return {k: bounds_json(self.layer(k)) for k in ("fact", "behavior", "judge", "composite")}

    @classmethod
    def from_json(cls, f: Fields | None) -> LayerBounds | None:
        if f is None:
            return None
        return cls(*(Bounds.from_json(f.obj(k)) for k in ("fact", "behavior", "judge", "composite")))


class LayerMeans(msgspec.Struct, frozen=True, gc=False):
    """Mean scores over the samples that ran; None where no sample had that layer."""

    fact: float | None = None
    behavior: float | None = None
    judge: float | None = None
    composite: float | None = None

    def layer(self, name: str) -> float | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)

    def to_json(self) -> dict[str, float | None]:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}

    @classmethod
    def from_json(cls, f: Fields | None) -> LayerMeans:
        if f is None:
            return cls()
        return cls(f.num("fact"), f.num("behavior"), f.num("judge"), f.num("composite"))


def details(f: Fields, typed: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """The fields of `f` besides the `typed` ones, as written and in order: what a kind adds."""
    return tuple((k, v) for k, v in f.data.items() if k not in typed)


class RunTarget(msgspec.Struct, frozen=True, gc=False):
    """What produced the outputs (report.json's `target`, the target's `describe()`): `kind` and
    `spec` (`KIND:ARG`), then what the kind adds (`details`, in order: replay's `file`, a command's
    `command` and `system`, a model's `model`, `base_url` and `params`, an agent CLI's `cli`,
    `skills`, `isolation`…), plain JSON that the formats only show."""

    kind: str | None = None
    spec: str | None = None
    details: tuple[tuple[str, Any], ...] = ()
    keys: tuple[str, ...] = ()  # the fields in the order written (a Python target's may lack kind or spec)

    def to_json(self) -> dict[str, Any]:
        values = {"kind": self.kind, "spec": self.spec, **dict(self.details)}
        return {k: values.get(k) for k in self.keys} if self.keys else values

    def get(self, key: str) -> Any:
        """One of the fields the kind adds (None when it has none of that name)."""
        return dict(self.details).get(key)

    @classmethod
    def from_json(cls, f: Fields | None) -> RunTarget:
        return cls(f.str("kind"), f.str("spec"), details(f, ("kind", "spec")), tuple(f.data)) if f is not None else cls()

    @classmethod
    def read(cls, described: Mapping[str, Any]) -> RunTarget:
        """A target's `describe()` as a record (a bad field is an InputError naming it)."""
        return cls.from_json(Fields.of(described, "report", "target"))

    @property
    def name(self) -> str | None:
        return self.spec or self.kind
