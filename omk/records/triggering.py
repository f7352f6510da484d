"""report.json's `triggering` block (docs/report-format.md): did each skill fire when a sample
said it should, and stay quiet when a sample said it must not.

A *case* is one `skill_used` assertion on one result (a sample's, or a conversation turn's, once
per repeat): `should_fire` is its sense (`not: true` is a negative control), `fired` whether the
skill was invoked at least once, `others` the other skills the same trace invoked. The block holds,
per skill, recall (fired / should fire), the false-trigger rate (fired / must not fire) and the
precision (right firings / all firings among its cases), each with its Wilson interval, and the
samples that went wrong on each side; with several skills, the routing matrix: for each skill a
case expected, which skills fired instead (none, the right one, another one), and apart from
them the calls to a skill the run does not install (a made-up or misspelt name).

In an experiment, `experiment.triggering` holds, per treatment and skill, the paired change of
each rate with McNemar's exact test (`TriggerChange`).

The block's records are msgspec structs (omk.records.wire), written and read as their fields. A
case is not written (it lives in the results' digests). `TriggerChange` is read as its fields (the
rates written beside them are not read) but written by hand: it writes the rates and the change
worked out from its counts, rounded, between its counted fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.records.wire import JsonRecord, Number

NONE = "(none)"  # the routing matrix's column for "no skill fired"
NOT_INSTALLED = "(not installed)"  # its column for "called a skill the run does not install"


class TriggerCase(msgspec.Struct, frozen=True, gc=False):
    """One `skill_used` expectation on one result (kept in each result's digest)."""

    skill: str
    should_fire: bool
    fired: bool
    sample_id: str
    repeat: int = 0
    turn: int | None = None  # the turn of a conversation (0-based), None for a single prompt
    others: tuple[str, ...] = ()  # the other skills this result's trace invoked

    @property
    def wrong(self) -> bool:
        return self.fired != self.should_fire

    @property
    def key(self) -> tuple[str, int, int | None]:
        """What pairs this case with the same case on another variant (with the skill and sense)."""
        return self.sample_id, self.repeat, self.turn


class Rate(JsonRecord, frozen=True):
    """k out of n, with its Wilson score interval at `level`; `value` None when n is 0."""

    k: int = 0
    n: int = 0
    value: Number | None = None
    low: Number | None = None
    high: Number | None = None
    level: Number = 0.95


class SkillTriggering(JsonRecord, frozen=True):
    """One skill: its positive cases (should fire) and its negative controls (must not fire)."""

    skill: str = ""
    installed: bool | None = None  # None: the run did not say which skills it installs
    recall: Rate = Rate()  # positive cases that fired
    false_triggers: Rate = msgspec.field(default=Rate(), name="false_trigger_rate")  # negative controls that fired
    precision: Rate = Rate()  # among its cases that fired, those that should have
    missed: tuple[str, ...] = ()  # samples where it should have fired and did not
    false_triggered: tuple[str, ...] = ()  # samples where it fired and must not

    @property
    def warnings(self) -> list[str]:
        found = []
        if not self.false_triggers.n:
            found.append("no negative controls: a description that fires on everything scores perfect recall")
        if self.recall.n and not self.recall.k:
            found.append("never fired on the samples that expect it")
        return found


class RoutingRow(JsonRecord, frozen=True):
    """For the cases that expected `expected` to fire: how many times each skill fired (`(none)`:
    no skill at all); a case where two skills fired counts in both columns. A case that called a
    skill the run does not install counts once in `(not installed)`, and `not_installed` names
    those skills (name → cases): they are not routes to a skill of the library."""

    expected: str = ""
    cases: int = 0
    fired: Mapping[str, int] = {}  # read only: the record is frozen
    not_installed: Mapping[str, int] = {}  # read only, as `fired`

    @property
    def right(self) -> int:
        return self.fired.get(self.expected, 0)

    @property
    def none(self) -> int:
        return self.fired.get(NONE, 0)


class Triggering(JsonRecord, frozen=True, kw_only=True):
    """The whole block: the skills the run installs, each skill's rates, the routing matrix."""

    level: Number = 0.95
    installed: tuple[str, ...] | None = None
    skills: tuple[SkillTriggering, ...] = ()
    routing: tuple[RoutingRow, ...] = ()  # only when the run installs (or its samples expect) several skills

    @property
    def columns(self) -> list[str]:
        """The routing matrix's columns: every skill that fired in it, `(not installed)` when some
        case called a skill the run does not install, then `(none)`."""
        names = list(self.installed or ())
        for row in self.routing:
            names += [n for n in row.fired if n not in names and n not in (NONE, NOT_INSTALLED)]
        missing = [NOT_INSTALLED] if any(r.fired.get(NOT_INSTALLED) for r in self.routing) else []
        return [*names, *missing, NONE]


class TriggerChange(JsonRecord, frozen=True, gc=False):
    """One skill in one treatment against the control: each rate on the cases both arms have, and
    McNemar's exact test on the discordant pairs (as the pass rate's)."""

    treatment: str = ""
    skill: str = ""
    rate: str = "recall"  # "recall" (cases that should fire) or "false_trigger_rate" (negative controls)
    n: int = 0
    control_fired: int = 0
    treatment_fired: int = 0
    lost: int = 0  # fired on control, not on treatment
    gained: int = 0  # fired on treatment, not on control
    p_value: Number = 1.0

    @property
    def change(self) -> float | None:
        return (self.treatment_fired - self.control_fired) / self.n if self.n else None

    def to_json(self) -> dict[str, Any]:
        return {
            "treatment": self.treatment,
            "skill": self.skill,
            "rate": self.rate,
            "n": self.n,
            "control_fired": self.control_fired,
            "treatment_fired": self.treatment_fired,
            "control_rate": round(self.control_fired / self.n, 4) if self.n else None,
            "treatment_rate": round(self.treatment_fired / self.n, 4) if self.n else None,
            "change": round(c, 4) if (c := self.change) is not None else None,
            "lost": self.lost,
            "gained": self.gained,
            "p_value": self.p_value,
        }
