"""Which part of a split run a report holds: `report.json`'s `shard` member (docs/report-format.md).

A shard's report (`omk eval --shard I/N`) records its index, the number of shards and the plan's
fingerprint; a merged report (`omk merge`) records the shards it holds and those it lacks.

`ShardInfo` keeps its own `to_json`: a shard's writes its `index`, a merge's its `merged` and
`missing` shards and `partial`, worked out from `missing`. It is read by msgspec's typed decoding
(`ShardInfo.read`, through `_ShardLine`), then each number is checked against the shard count by
hand: no type says "from 1 to the count read beside it".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from omk.core.errors import InputError
from omk.records.fields import Fields
from omk.records.wire import HINT, convert, joined

# The most shards a run may be split into. A CI matrix has at most a few hundred jobs; a count
# read from a report beyond this is refused, so no one can make `omk merge` build a list of every
# missing number of a split into 10**15 parts.
MAX_SHARDS = 10_000


def number_ranges(numbers: Iterable[int], shown: int = 10) -> str:
    """`1, 3–5, 9 and 990 more`: sorted numbers as runs of consecutive ones (two in a row are
    written both), at most `shown` runs written out and the numbers after them counted."""
    runs: list[tuple[int, int]] = []
    more = 0
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        elif len(runs) < shown:
            runs.append((n, n))
        else:
            more += 1
    text = ", ".join(str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}–{b}" for a, b in runs)
    return text + (f" and {more} more" if more else "")


class ShardInfo(msgspec.Struct, frozen=True, gc=False):
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
            return f"partial merge: {held}, missing {number_ranges(self.missing)}"
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
        """report.json's `shard` object in `f` (read by the report's field reader); None for none."""
        return cls.read(f.data, f.origin, f.path) if f is not None and f.data else None

    @classmethod
    def read(cls, data: Any, origin: str, at: str = "shard", hinted: bool = True) -> ShardInfo:
        """A `shard` object (at `at` of `origin`) read back: typed by msgspec, then each number checked
        against the shard count (`hinted`: a wrong one's error asks whether report.json was edited)."""
        hint = HINT if hinted else ""
        line = convert(data, _ShardLine, origin, at, hint, nulls=True)
        count = line.count

        def refuse(key: str, expected: str, found: Any) -> InputError:
            return InputError(f"{origin}: {joined(at, key)}: expected {expected}, found {found!r}{hint}")

        if not 1 <= count <= MAX_SHARDS:
            raise refuse("count", f"a number of shards from 1 to {MAX_SHARDS}", count)
        if line.index is not None and not 1 <= line.index <= count:
            raise refuse("index", f"a shard number from 1 to its count ({count})", line.index)
        for key in ("merged", "missing"):
            numbers = getattr(line, key)
            if len(numbers) > count or any(not 1 <= n <= count for n in numbers):
                raise refuse(key, f"shard numbers from 1 to its count ({count})", list(numbers)[:10])
        return cls(count=count, plan=line.plan, index=line.index, merged=line.merged, missing=line.missing)


class _ShardLine(msgspec.Struct, frozen=True, gc=False):
    """`shard` as written (a merge's `partial` is worked out from `missing`, not read)."""

    count: int = 1
    plan: str = ""
    index: int | None = None
    merged: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
