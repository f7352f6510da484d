"""Which part of a split run a report holds: `report.json`'s `shard` member (docs/report-format.md).

A shard's report (`omk eval --shard I/N`) records its index, the number of shards and the plan's
fingerprint; a merged report (`omk merge`) records the shards it holds and those it lacks.

`ShardInfo` is written and read by msgspec through a record of the written layout (`_ShardLine`):
a shard's writes its `index`, a merge's its `merged` and `missing` shards and `partial`, worked out
from `missing`, and run.json keeps the shard's `positions` in it. Read back, each number is checked
against the shard count by hand: no type says "from 1 to the count read beside it".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from omk.core.errors import InputError
from omk.records.wire import HINT, convert, joined, plain

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

    def to_json(self, positions: tuple[int, ...] | UnsetType = UNSET) -> dict[str, Any]:
        """`shard` as written: a shard's index, or a merge's shards held and missing and whether it
        is partial; run.json adds the shard's samples' places in the whole plan (`positions`)."""
        if self.index is not None:
            line = _ShardLine(self.count, self.plan, self.index, positions=positions)
        else:
            line = _ShardLine(self.count, self.plan, merged=self.merged, missing=self.missing, partial=self.partial, positions=positions)
        data: dict[str, Any] = plain(line)
        return data

    @classmethod
    def read(cls, data: Any, origin: str, at: str = "shard", hinted: bool = True) -> ShardInfo:
        """A `shard` object (at `at` of `origin`) read back (`hinted`: a wrong field's error asks
        whether report.json was edited)."""
        return cls.read_placed(data, origin, at, hinted)[0]

    @classmethod
    def read_placed(cls, data: Any, origin: str, at: str = "shard", hinted: bool = True) -> tuple[ShardInfo, tuple[int, ...]]:
        """A `shard` object and the positions run.json keeps in it: typed by msgspec, then each
        number checked against the shard count, which no type can say."""
        hint = HINT if hinted else ""
        line = convert(data, _ShardLine, origin, at, hint, nulls=True)
        count = line.count

        def refuse(key: str, expected: str, found: Any) -> InputError:
            return InputError(f"{origin}: {joined(at, key)}: expected {expected}, found {found!r}{hint}")

        index = line.index if line.index is not UNSET else None
        merged = line.merged if line.merged is not UNSET else ()
        missing = line.missing if line.missing is not UNSET else ()
        if not 1 <= count <= MAX_SHARDS:
            raise refuse("count", f"a number of shards from 1 to {MAX_SHARDS}", count)
        if index is not None and not 1 <= index <= count:
            raise refuse("index", f"a shard number from 1 to its count ({count})", index)
        for key, numbers in (("merged", merged), ("missing", missing)):
            if len(numbers) > count or any(not 1 <= n <= count for n in numbers):
                raise refuse(key, f"shard numbers from 1 to its count ({count})", list(numbers)[:10])
        positions = line.positions if line.positions is not UNSET else ()
        return cls(count=count, plan=line.plan, index=index, merged=merged, missing=missing), positions


class _ShardLine(msgspec.Struct, frozen=True, gc=False):
    """`shard` as written: a shard's `index`, or a merge's `merged`, `missing` and `partial` (worked
    out from `missing`, never read); in run.json also the shard's `positions`."""

    count: int = 1
    plan: str = ""
    index: int | None | UnsetType = UNSET
    merged: tuple[int, ...] | UnsetType = UNSET
    missing: tuple[int, ...] | UnsetType = UNSET
    partial: bool | UnsetType = UNSET
    positions: tuple[int, ...] | UnsetType = UNSET
