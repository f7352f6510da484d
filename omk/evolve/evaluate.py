"""One skill evaluated on some of the samples, through the engine as `omk eval` runs it (the
settings of omk.yaml and the command line, the response cache, the judge), with the skill folder
as the run's only skill (an experiment variant's `skill:`). Nothing is written to a run folder;
what the loop keeps of each sample is an `EvolveOutcome`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from omk.engine.evaluation import Evaluation
    from omk.engine.options import EvalOptions
    from omk.records.result import AssertionResult, SampleResult
    from omk.samples.model import Sample

NOTE_CHARS = 600  # of an output or a message, in an improver request


class EvolveOutcome(msgspec.Struct, frozen=True):
    """One sample on one skill, over its repeats; as the loop's ledger keeps it (state.json)."""

    sample_id: str
    composite: float | None = None  # the mean composite of the repeats that ran; None when all errored
    passed: bool = False  # every repeat passed
    probes: tuple[bool, ...] = ()  # each `skill_used` check, right or wrong, repeat by repeat
    cost_usd: float = 0.0  # what its runs cost this time (`spent`), rounded to a millionth of a dollar
    notes: tuple[str, ...] = ()  # what went wrong: failed checks with their messages, judge reasons, errors
    output: str = ""  # the first repeat's output (cut)


def _cut(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + " …"


def _checks(result: SampleResult) -> list[AssertionResult]:
    checks = list(result.assertions)
    for turn in result.turns:
        checks.extend(turn.assertions)
    return checks


def _notes(result: SampleResult) -> list[str]:
    from omk.samples.model import Status

    notes = [f"error: {_cut(result.error)}"] if result.error else []
    for check in _checks(result):
        if check.status == Status.FAILED and check.type == "skill_used":
            what = "false trigger: the skill was used on a prompt it must not take" if check.negate else "missed trigger: the skill was not used"
            notes.append(_cut(f"{what} ({check.message or ''})"))
        elif check.status == Status.FAILED:
            negated = "not " if check.negate else ""
            notes.append(_cut(f"failed {negated}{check.type}: {check.message or check.value or ''}"))
    judge = result.judge
    if judge is not None and not result.passed:
        items = ([("rubric", judge.rubric)] if judge.rubric is not None else []) + list(judge.dimensions)
        notes.extend(_cut(f"judge on {name}: {item.score} — {item.reason}") for name, item in items if item.reason)
    return notes


def spent(result: SampleResult) -> float:
    """What a result cost this run, by the rule of the engine's budget (omk.engine.budget): the
    target's cost unless its answer came from the response cache (a cached answer costs nothing
    now; its trace keeps what it cost when it was made), plus the judge's calls made for it (a
    judge reply from the cache costs nothing either). A cost nobody reported counts as nothing."""
    target = 0.0 if result.cached else float(result.trace.cost_usd or 0.0)
    return target + float((result.judge.cost_usd if result.judge is not None else None) or 0.0)


def fold(sample_id: str, results: Sequence[SampleResult]) -> EvolveOutcome:
    """A sample's outcome from its results (one per repeat)."""
    from omk.samples.model import Status

    scores = [r.scores.composite for r in results if r.status != "error" and r.error is None]
    probes = tuple(c.status == Status.PASSED for r in results for c in _checks(r) if c.type == "skill_used")
    notes: list[str] = []
    for r in results:
        notes.extend(n for n in _notes(r) if n not in notes)
    cost = sum(spent(r) for r in results)
    first = results[0].output if results else ""
    passed = bool(results) and all(r.passed for r in results)
    return EvolveOutcome(sample_id, fmean(scores) if scores else None, passed, probes, round(cost, 6), tuple(notes), _cut(first))


def prepare(options: EvalOptions, cwd: Path, samples: list[Sample] | None, skill: Path) -> Evaluation:
    """The evaluation of `skill` on `samples` (None: the samples `options` name), in memory; omk.yaml
    is looked for beside the sample files, as for `omk eval`."""
    from omk.engine.evaluation import Evaluation
    from omk.engine.inputs import sample_paths
    from omk.engine.variants import Variant

    variant = Variant("evolve", skill=str(skill))
    paths = sample_paths(options, cwd) if samples is not None else None
    return Evaluation.prepare(options, cwd=cwd, samples=samples, adjust=variant.apply, write=False, paths=paths)


class Evaluated(msgspec.Struct, frozen=True):
    """What one evaluation of a skill on some samples did: the outcome of each sample whose every
    repeat ran, what all its calls cost (the samples the budget cut short included), and whether
    the budget left any call out."""

    outcomes: dict[str, EvolveOutcome]
    cost_usd: float
    complete: bool


def evaluate(options: EvalOptions, cwd: Path, samples: list[Sample], skill: Path, budget_usd: float | None = None) -> Evaluated:
    """Each sample's outcome with this skill, by sample id. With `budget_usd`, the engine starts no
    new call once the calls of this evaluation have cost that much (it checks before each one);
    a sample with a repeat left out then has no outcome."""
    if budget_usd is not None:
        given = options.budget_usd
        options = dataclasses.replace(options, budget_usd=budget_usd if given is None else min(given, budget_usd))
    evaluation = prepare(options, cwd, samples, skill)
    asyncio.run(evaluation.execute())
    report = evaluation.finish()
    grouped: dict[str, list[SampleResult]] = {}
    for result in report.results:
        grouped.setdefault(result.sample_id, []).append(result)
    cut = {sample_id for sample_id, _ in evaluation.not_run}
    folded = {sample_id: fold(sample_id, grouped.get(sample_id, [])) for sample_id in (s.sample_id for s in samples)}
    kept = {sample_id: o for sample_id, o in folded.items() if sample_id not in cut}
    return Evaluated(kept, sum(o.cost_usd for o in folded.values()), not cut)
