"""Which part of a split run a report holds: `report.json`'s `shard` member (docs/report-format.md).

A shard's report (`omk eval --shard I/N`) records its index, the number of shards and the plan's
fingerprint; a merged report (`omk merge`) records the shards it holds and those it lacks."""

from __future__ import annotations

from typing import Any

from omk.frozen import record
from omk.records.fields import Fields


@record
class ShardInfo:
    count: int  # N: the number of shards the plan was split into
    plan: str  # the fingerprint of the whole plan (samples, settings, targets, seed)
    index: int | None = None  # I (1-based) for one shard; None for a merge
    merged: tuple[int, ...] = ()  # a merge: the shards it holds
    missing: tuple[int, ...] = ()  # a merge: the shards it lacks (only with --partial)

    @property
    def partial(self) -> bool:
        return bool(self.missing)

    def label(self) -> str:
        if self.index is not None:
            return f"shard {self.index}/{self.count}"
        held = f"{len(self.merged)} of {self.count} shards"
        if self.missing:
            return f"partial merge: {held}, missing {', '.join(map(str, self.missing))}"
        return f"merged: {held}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"count": self.count, "plan": self.plan}
        if self.index is not None:
            data["index"] = self.index
        else:
            data.update(merged=list(self.merged), missing=list(self.missing), partial=self.partial)
        return data

    @classmethod
    def from_json(cls, f: Fields | None) -> ShardInfo | None:
        if f is None or not f.data:
            return None
        return cls(
            count=f.int("count", 1),
            plan=f.str("plan", ""),
            index=f.int("index", None),
            merged=tuple(n for n in f.list("merged") if isinstance(n, int)),
            missing=tuple(n for n in f.list("missing") if isinstance(n, int)),
        )
