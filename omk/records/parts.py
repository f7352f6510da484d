"""The small records several blocks of report.json share: a confidence interval (`Bounds`),
the mean of each score layer and their intervals (`LayerMeans`, `LayerBounds`) and what produced
the outputs (`RunTarget`). The summary (omk.records.document), the experiment block, the
`--repeat` block and the judge settings all read them from here, so none of those modules imports
another for them.

`Bounds`, `LayerMeans` and `LayerBounds` are written and read as their fields (omk.records.wire's
`JsonRecord`). `RunTarget` writes what its kind adds (`details`) in the order the kind gave it and
keeps the order its fields were read in: only its `kind` and `spec` are read through msgspec, the
rest kept as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.records.wire import HINT, JsonRecord, Number, convert


class Bounds(JsonRecord, frozen=True, gc=False):
    """A confidence interval as report.json keeps it: its ends, level and how it was made."""

    low: Number
    high: Number
    level: Number | None = None
    method: str | None = None
    resamples: int | None = None
    seed: Any = None


def bounds_json(b: Bounds | None) -> dict[str, Any] | None:
    return b.to_json() if b is not None else None


class LayerBounds(JsonRecord, frozen=True, gc=False):
    """The 95% interval of each mean in `LayerMeans` (`summary.scores_ci`); None where the mean
    is over fewer than 2 samples (or there is no mean)."""

    fact: Bounds | None = None
    behavior: Bounds | None = None
    judge: Bounds | None = None
    composite: Bounds | None = None

    def layer(self, name: str) -> Bounds | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)


class LayerMeans(JsonRecord, frozen=True, gc=False):
    """Mean scores over the samples that ran; None where no sample had that layer."""

    fact: Number | None = None
    behavior: Number | None = None
    judge: Number | None = None
    composite: Number | None = None

    def layer(self, name: str) -> float | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)


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
    def read(cls, described: Mapping[str, Any], origin: str = "report", at: str = "target") -> RunTarget:
        """A target's `describe()` (or report.json's `target`, at `at` of `origin`) as a record: its
        kind and spec checked by msgspec (a bad one is an InputError naming it), the rest as written."""
        named = convert(described, _Named, origin, at, HINT, nulls=True)
        return cls(named.kind, named.spec, tuple((k, v) for k, v in described.items() if k not in ("kind", "spec")), tuple(described))

    @property
    def name(self) -> str | None:
        return self.spec or self.kind


class _Named(msgspec.Struct, frozen=True, gc=False):
    kind: str | None = None
    spec: str | None = None
