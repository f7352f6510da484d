"""The triggering report: per skill, recall and false-trigger rate with Wilson intervals, the
routing matrix, and in an experiment the paired change of each rate with McNemar's exact test.

The cases come from the results' digests (`omk.records.triggering.TriggerCase`: one `skill_used`
on one result). Errored results have no cases: they say nothing about the description.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from omk.records.triggering import (
    NONE,
    NOT_INSTALLED,
    Rate,
    RoutingRow,
    SkillTriggering,
    TriggerCase,
    TriggerChange,
    Triggering,
)
from omk.stats.distributions import binomial_two_sided_p
from omk.stats.winrate import wilson_interval

MAX_LISTED = 50  # sample ids kept per list in the block (the results hold every one)


def rate(k: int, n: int, level: float = 0.95) -> Rate:
    """k out of n with its Wilson interval (no interval when n is 0)."""
    if not n:
        return Rate(k, n, None, None, None, level)
    ci = wilson_interval(k, n, level)
    return Rate(k, n, round(k / n, 4), round(ci.low, 4), round(ci.high, 4), level)


def _ids(cases: Iterable[TriggerCase]) -> tuple[str, ...]:
    found = list(dict.fromkeys(c.sample_id for c in cases))
    return tuple(found[:MAX_LISTED])


def skill_triggering(skill: str, cases: Sequence[TriggerCase], installed: Sequence[str] | None, level: float) -> SkillTriggering:
    positive = [c for c in cases if c.should_fire]
    negative = [c for c in cases if not c.should_fire]
    hits = sum(1 for c in positive if c.fired)
    false = sum(1 for c in negative if c.fired)
    return SkillTriggering(
        skill=skill,
        installed=skill in installed if installed is not None else None,
        recall=rate(hits, len(positive), level),
        false_triggers=rate(false, len(negative), level),
        precision=rate(hits, hits + false, level),
        missed=_ids(c for c in positive if not c.fired),
        false_triggered=_ids(c for c in negative if c.fired),
    )


def routing(cases: Sequence[TriggerCase], installed: Sequence[str] | None = None) -> tuple[RoutingRow, ...]:
    """For each skill some case expected: which skills its positive cases fired. When the run
    says which skills it installs, a call to any other name (a made-up or misspelt skill) is no
    route to a skill: the case counts in `(not installed)`, and the row names what was called."""
    rows: dict[str, dict[str, int]] = {}
    missing: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for case in cases:
        if not case.should_fire:
            continue
        counts = rows.setdefault(case.skill, {})
        unknown = missing.setdefault(case.skill, {})
        totals[case.skill] = totals.get(case.skill, 0) + 1
        names = ([case.skill] if case.fired else []) + list(case.others)
        strays = [n for n in names if installed is not None and n not in installed]
        for name in dict.fromkeys(strays):
            unknown[name] = unknown.get(name, 0) + 1
        routed = [n for n in names if n not in strays] or ([] if strays else [NONE])
        for name in [*routed, *([NOT_INSTALLED] if strays else [])]:
            counts[name] = counts.get(name, 0) + 1
    return tuple(RoutingRow(skill, totals[skill], rows[skill], missing[skill]) for skill in rows)


def triggering(cases: Sequence[TriggerCase], installed: Sequence[str] | None, level: float = 0.95) -> Triggering | None:
    """The block, or None when no result carries a `skill_used` expectation."""
    if not cases:
        return None
    by_skill: dict[str, list[TriggerCase]] = {}
    for case in cases:
        by_skill.setdefault(case.skill, []).append(case)
    skills = tuple(skill_triggering(s, by_skill[s], installed, level) for s in sorted(by_skill))
    several = len(installed or ()) > 1 or len(by_skill) > 1 or any(c.others for c in cases)
    return Triggering(
        installed=tuple(installed) if installed is not None else None,
        skills=skills,
        routing=routing(cases, installed) if several else (),
        level=level,
    )


def _paired(control: Sequence[TriggerCase], treatment: Sequence[TriggerCase]) -> list[tuple[bool, bool]]:
    """The cases both arms have, matched by sample, repeat, turn, skill and sense (in order)."""
    slots: dict[tuple[object, ...], list[TriggerCase]] = {}
    for case in treatment:
        slots.setdefault((*case.key, case.skill, case.should_fire), []).append(case)
    pairs = []
    for case in control:
        waiting = slots.get((*case.key, case.skill, case.should_fire))
        if waiting:
            pairs.append((case.fired, waiting.pop(0).fired))
    return pairs


def trigger_changes(name: str, control: Sequence[TriggerCase], treatment: Sequence[TriggerCase]) -> list[TriggerChange]:
    """Per skill and rate (recall, false-trigger rate), the treatment's change against the control."""
    changes = []
    for skill in sorted({c.skill for c in control}):
        for sense, label in ((True, "recall"), (False, "false_trigger_rate")):
            pick = [c for c in control if c.skill == skill and c.should_fire is sense]
            pairs = _paired(pick, [c for c in treatment if c.skill == skill and c.should_fire is sense])
            if not pairs:
                continue
            lost = sum(1 for c, t in pairs if c and not t)
            gained = sum(1 for c, t in pairs if t and not c)
            changes.append(
                TriggerChange(
                    treatment=name,
                    skill=skill,
                    rate=label,
                    n=len(pairs),
                    control_fired=sum(1 for c, _ in pairs if c),
                    treatment_fired=sum(1 for _, t in pairs if t),
                    lost=lost,
                    gained=gained,
                    p_value=binomial_two_sided_p(lost, lost + gained),
                )
            )
    return changes
