"""What changed, sample by sample, between two runs of the same samples (run A, then run B):
a pull request's run against main's, or yesterday's run against today's.

Each side is a mapping sample id → its record (or its records, one per repeat, folded as in an
experiment). A sample changes when it appears or disappears, starts or stops erroring, flips
between passed and failed, or its composite moves by at least `trivial` either way. Changes are
listed worst first: regressions (pass_to_fail, new_error, score_down), then improvements
(fail_to_pass, error_fixed, score_up), then samples only one run has (new, removed). Each
change is grouped by its first kind; within a group regressions come largest drop first and
improvements largest gain first.

A sample that flipped between passed and failed also lists its assertions whose verdict changed
(`assertion_changes`, over the first run of each side): which check now fails, or now passes,
with what it says on each side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

import msgspec

from omk.stats.data import Record, SampleOutcome, fold
from omk.stats.paired import EPS, _r

KINDS = ("pass_to_fail", "new_error", "score_down", "fail_to_pass", "error_fixed", "score_up", "new", "removed")
REGRESSIONS = frozenset({"pass_to_fail", "new_error", "score_down"})
Status = Literal["ok", "error"]


class CheckView(Protocol):
    """What the diff reads of an assertion's result (omk.records' AssertionResult has it)."""

    @property
    def type(self) -> str: ...
    @property
    def status(self) -> Any: ...
    @property
    def negate(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def message(self) -> str | None: ...


class TurnView(Protocol):
    @property
    def assertions(self) -> Sequence[CheckView]: ...


class ResultView(Protocol):
    """What the diff reads of a sample's result (omk.records' SampleResult has it)."""

    @property
    def assertions(self) -> Sequence[CheckView]: ...
    @property
    def turns(self) -> Sequence[TurnView]: ...


class AssertionChange(msgspec.Struct, frozen=True, gc=False):
    """One assertion whose verdict differs between run A and run B."""

    where: str  # `assertions[1]`, `turns[0].assertions[2]`
    label: str  # its type and value: `contains '30 days'`
    a: str  # passed, failed, skipped; absent when that run has no such assertion
    b: str
    a_message: str
    b_message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "label": self.label,
            "a": {"status": self.a, "message": self.a_message},
            "b": {"status": self.b, "message": self.b_message},
        }


def _label(a: CheckView) -> str:
    value = a.value if isinstance(a.value, str) else None if a.value is None else str(a.value)
    shown = f" {value[:60]!r}" if value else ""
    return f"{'not ' if a.negate else ''}{a.type}{shown}"


def _assertions(result: ResultView) -> dict[str, CheckView]:
    found = {f"assertions[{i}]": a for i, a in enumerate(result.assertions)}
    for t, turn in enumerate(result.turns):
        found.update({f"turns[{t}].assertions[{i}]": a for i, a in enumerate(turn.assertions)})
    return found


def assertion_changes(a: ResultView, b: ResultView) -> tuple[AssertionChange, ...]:
    """The assertions whose status differs from A to B, in B's order (A's own after them)."""
    on_a, on_b = _assertions(a), _assertions(b)
    out = []
    for where in [*on_b, *(w for w in on_a if w not in on_b)]:
        x, y = on_a.get(where), on_b.get(where)
        if x is not None and y is not None and (x.status, x.type) == (y.status, y.type):
            continue
        shown = y if y is not None else x
        if shown is None:  # a place is on one side at least
            continue
        label = _label(shown)
        out.append(
            AssertionChange(
                where,
                label,
                str(x.status) if x is not None else "absent",
                str(y.status) if y is not None else "absent",
                (x.message or "") if x is not None else "",
                (y.message or "") if y is not None else "",
            )
        )
    return tuple(out)


class SampleChange(msgspec.Struct, frozen=True, gc=False):
    sample_id: str
    kinds: tuple[str, ...]  # in the order of KINDS
    a_status: Status | None  # None: the sample is not in that run
    b_status: Status | None
    a_passed: bool | None
    b_passed: bool | None
    a_composite: float | None
    b_composite: float | None
    assertions: tuple[AssertionChange, ...] = ()  # of a sample that flipped: the checks that changed

    @property
    def flipped(self) -> bool:
        return "pass_to_fail" in self.kinds or "fail_to_pass" in self.kinds

    @property
    def delta(self) -> float | None:
        if self.a_composite is None or self.b_composite is None:
            return None
        return self.b_composite - self.a_composite

    @property
    def regressed(self) -> bool:
        return any(k in REGRESSIONS for k in self.kinds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "kinds": list(self.kinds),
            "a": {"status": self.a_status, "passed": self.a_passed, "composite": _r(self.a_composite)},
            "b": {"status": self.b_status, "passed": self.b_passed, "composite": _r(self.b_composite)},
            "delta": _r(self.delta),
            "assertions": [c.to_dict() for c in self.assertions],
        }


class RunDiff(msgspec.Struct, frozen=True, gc=False):
    a_samples: int
    b_samples: int
    unchanged: int  # samples in both runs with no change
    changes: tuple[SampleChange, ...]
    trivial: float
    a_target: str | None = None  # what produced each run's outputs (`replay:…`, `cmd:…`), as recorded
    b_target: str | None = None

    def with_assertions(self, a: Mapping[str, ResultView], b: Mapping[str, ResultView]) -> RunDiff:
        """This diff with each flipped sample's assertion changes, from each run's result for it."""
        changes = tuple(
            msgspec.structs.replace(c, assertions=assertion_changes(a[c.sample_id], b[c.sample_id]))
            if c.flipped and c.sample_id in a and c.sample_id in b
            else c
            for c in self.changes
        )
        return msgspec.structs.replace(self, changes=changes)

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes if kind in c.kinds)

    @property
    def regressed(self) -> int:
        return sum(1 for c in self.changes if c.regressed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a_target": self.a_target,
            "b_target": self.b_target,
            "a_samples": self.a_samples,
            "b_samples": self.b_samples,
            "unchanged": self.unchanged,
            "regressed": self.regressed,
            "trivial": self.trivial,
            "counts": {k: self.count(k) for k in KINDS},
            "changes": [c.to_dict() for c in self.changes],
        }


RunRecords = Mapping[str, Record | Sequence[Record]]


def _outcomes(run: RunRecords) -> dict[str, SampleOutcome]:
    out = {}
    for sid, value in run.items():
        records = [value] if isinstance(value, Record) else list(value)
        if records:
            out[sid] = fold(sid, records)
    return out


def _side(o: SampleOutcome | None) -> tuple[Status | None, bool | None, float | None]:
    if o is None:
        return None, None, None
    return ("error" if o.errored else "ok"), o.passed, (None if o.errored else o.composite)


def _kinds(a: SampleOutcome | None, b: SampleOutcome | None, trivial: float) -> list[str]:
    if a is None or b is None:
        return ["new" if a is None else "removed"]
    kinds = []
    if a.passed and not b.passed:
        kinds.append("pass_to_fail")
    if b.errored and not a.errored:
        kinds.append("new_error")
    if a.composite is not None and b.composite is not None and not (a.errored or b.errored):
        delta = b.composite - a.composite
        if delta <= -trivial + EPS:
            kinds.append("score_down")
        elif delta >= trivial - EPS:
            kinds.append("score_up")
    if b.passed and not a.passed:
        kinds.append("fail_to_pass")
    if a.errored and not b.errored:
        kinds.append("error_fixed")
    return sorted(kinds, key=KINDS.index)


def diff_runs(
    a: RunRecords, b: RunRecords, trivial: float = 0.1, targets: tuple[str | None, str | None] = (None, None)
) -> RunDiff:
    """List what changed from run A to run B, sample by sample (see the module text)."""
    if trivial <= 0.0:
        raise ValueError(f"trivial must be above 0, got {trivial}")
    oa, ob = _outcomes(a), _outcomes(b)
    changes = []
    for sid in [*oa, *(s for s in ob if s not in oa)]:
        kinds = _kinds(oa.get(sid), ob.get(sid), trivial)
        if kinds:
            changes.append(SampleChange(sid, tuple(kinds), *_interleave(_side(oa.get(sid)), _side(ob.get(sid)))))
    changes.sort(key=_order)
    unchanged = sum(1 for sid in oa if sid in ob) - sum(1 for c in changes if c.a_status and c.b_status)
    return RunDiff(len(oa), len(ob), unchanged, tuple(changes), trivial, *targets)


def _order(change: SampleChange) -> tuple[int, float]:
    delta = change.delta if change.delta is not None else 0.0
    return KINDS.index(change.kinds[0]), (delta if change.regressed else -delta)


def _interleave(sa: tuple[Any, Any, Any], sb: tuple[Any, Any, Any]) -> tuple[Any, ...]:
    return sa[0], sb[0], sa[1], sb[1], sa[2], sb[2]
