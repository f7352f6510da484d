"""A result's digest: the few figures the run summary needs from it, so a run need not keep its
results in memory to summarise them (omk/engine/results.py keeps these, the results go to disk)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from itertools import repeat
from typing import TYPE_CHECKING, Any

import msgspec

from omk.records import AssertionResult, SampleResult, Scores, TurnResult
from omk.samples.model import JUDGE_OFF, NO_JUDGE, Status

if TYPE_CHECKING:
    from omk.records.judging import JudgeBlock
    from omk.records.triggering import TriggerCase
    from omk.scoring.variance import JudgeNoise

LAYERS = ("fact", "behavior", "judge")


JUDGE_SKIPS = frozenset({f"skipped: {NO_JUDGE}", f"skipped: {JUDGE_OFF}"})

# The members as plain module names: reading a member from its enum class is slow (Python 3.11
# looks it up through the class's machinery each time), and these are read for every check.
_SKIPPED = Status.SKIPPED


class Digest(msgspec.Struct, frozen=True, gc=False):
    """What the run summary, the categories and capabilities, the `--repeat` spread and an ensemble's agreement
    need from one result; it reads like a `SampleResult` for those fields."""

    sample_id: str
    category: str | None
    repeat: int
    status: str
    passed: bool
    scores: Scores
    cost_usd: float | None
    cached: bool
    skipped_judge_items: int  # judge work skipped: whole judge passes and judge-scored assertions
    judge_scores: tuple[dict[Any, Any], ...] = ()  # per graded unit: ensemble member -> score
    triggers: tuple[TriggerCase, ...] = ()  # its `skill_used` expectations (the triggering report)
    judge: JudgeNoise | None = None  # what `summary.variance` needs of its judge blocks
    capabilities: tuple[str, ...] = ()  # the sample's capabilities, as spelled (`summary.capabilities`)

    @property
    def graded(self) -> bool:
        """Ran, and some layer scored it (a sample with no checks at all has no composite)."""
        s = self.scores  # the three layers spelled out: the summary asks this of every result, often
        return self.status == "ok" and (s.fact is not None or s.behavior is not None or s.judge is not None)

    @classmethod
    def of(cls, r: SampleResult) -> Digest:
        ok = r.status == "ok"
        if r.turns or r.judge is not None:  # a conversation is checked turn by turn; a judge block has its figures
            return cls._of_units(r, ok)
        skipped, skills = _one_pass(r) if ok else (0, False)
        spelled = r.capability if r.capability is _SPELLED[0] else _capabilities(r.capability)
        return cls._made(r, skipped, trigger_cases(r) if skills else (), spelled)

    @classmethod
    def _of_units(cls, r: SampleResult, ok: bool) -> Digest:
        units: tuple[SampleResult | TurnResult, ...] = (r, *r.turns)
        return cls._made(
            r,
            _skipped_judge_items(units) if ok else 0,
            trigger_cases(r) if ok and any(_checks_skill(u.assertions) for u in units) else (),
            _capabilities(r.capability),
            judge_scores=tuple(m for u in units if (m := _members(u.judge)) is not None),
            judge=judge_noise(r) if ok else None,
        )

    @classmethod
    def _made(
        cls,
        r: SampleResult,
        skipped: int,
        triggers: tuple[TriggerCase, ...],
        capabilities: tuple[str, ...],
        judge_scores: tuple[dict[Any, Any], ...] = (),
        judge: JudgeNoise | None = None,
    ) -> Digest:
        """The digest of `r` with what its kind of result worked out."""
        return cls(
            r.sample_id, r.category, r.repeat, r.status, r.passed, r.scores, r.trace.cost_usd, r.cached, skipped,
            judge_scores, triggers, judge, capabilities,
        )  # fmt: skip


def _one_pass(r: SampleResult) -> tuple[int, bool]:
    """A result without turns or judge block that ran: its judge work skipped (as
    `_skipped_judge_items` counts it) and whether it checks a skill, in one pass over its checks."""
    skipped = 1 if r.judge_skipped else 0
    skills = False
    for a in r.assertions:
        if a.status is _SKIPPED and a.message in JUDGE_SKIPS:
            skipped += 1
        if a.type == "skill_used" or (a.children and _checks_skill(a.children)):
            skills = True
    return skipped, skills


def _skipped_judge_items(units: tuple[SampleResult | TurnResult, ...]) -> int:
    """Judge work skipped: whole judge passes, and judge-scored assertions skipped for want of a
    judge (not one skipped for a reason of its own, such as an M365 telemetry evaluator that does
    not apply)."""
    skipped = 0
    for u in units:
        if u.judge_skipped:
            skipped += 1
        for a in u.assertions:
            if a.status is _SKIPPED and a.message in JUDGE_SKIPS:
                skipped += 1
    return skipped


def _checks_skill(assertions: Iterable[AssertionResult]) -> bool:
    """Whether any of these checks (or their children) is a `skill_used`."""
    for a in assertions:  # noqa: SIM110 - a loop, not any() over a generator: this runs for every result
        if a.type == "skill_used" or (a.children and _checks_skill(a.children)):
            return True
    return False


def judge_noise(r: SampleResult) -> JudgeNoise | None:
    """What `summary.variance` needs of a result's judge blocks; None (nothing loaded) without any."""
    if r.judge is None and all(t.judge is None for t in r.turns):
        return None
    from omk.scoring.variance import judge_noise as noise_of

    return noise_of(r)


def _capabilities(names: tuple[str, ...]) -> tuple[str, ...]:
    """The sample's capabilities as spelled, blanks dropped, one string per name: the result's own
    tuple when its names are already those strings (a loaded sample's, shared by its results, so
    a digest adds no copy), else a new tuple of them (results read back from a report)."""
    if names is _SPELLED[0]:  # the tuple just looked at: samples that write the same capabilities share it
        return names
    if all(name and name == name.strip() and sys.intern(name) is name for name in names):
        _SPELLED[0] = names
        return names
    return tuple(sys.intern(c.strip()) for c in names if c.strip())


_SPELLED: list[tuple[str, ...]] = [()]  # the last tuple found spelled as it should be (tuples are read-only)


def _skill_checks(assertions: Iterable[AssertionResult]) -> Iterable[AssertionResult]:
    for a in assertions:
        if a.type == "skill_used" and not a.error and a.passed is not None:
            yield a
        elif a.children:
            yield from _skill_checks(a.children)


def trigger_cases(r: SampleResult) -> tuple[TriggerCase, ...]:
    """Each `skill_used` of a result that ran (its turns' too): did the skill fire, was it to."""
    units: list[tuple[int | None, SampleResult | TurnResult]] = [(None, r), *((t.index, t) for t in r.turns)]
    cases = []
    for turn, unit in units:
        checks = list(_skill_checks(unit.assertions))
        if not checks:
            continue
        from omk.domain.skillset import fired
        from omk.records.triggering import TriggerCase  # loaded only when a result checks a skill

        invoked = list(fired(unit.trace.tool_calls))
        for a in checks:
            skill = str(a.value)
            others = tuple(n for n in invoked if n != skill)
            cases.append(TriggerCase(skill, not a.negate, (a.metric or 0) >= 1, r.sample_id, r.repeat, turn, others))
    return tuple(cases)


def _members(judge: JudgeBlock | None) -> dict[Any, Any] | None:
    return judge.members if judge is not None else None


def digests(results: Iterable[SampleResult | Digest]) -> list[Digest]:
    """Digests of results (a digest is kept as it is; a list of digests is the list itself, read
    only by the summary's parts, which each ask for it)."""
    if isinstance(results, list) and all(map(isinstance, results, repeat(Digest))):
        return results
    return [r if isinstance(r, Digest) else Digest.of(r) for r in results]
