"""The skills a run installs, and the load-time check of the `skill_used` assertions against them.

A `skill_used` naming a skill that no variant of the run installs can never pass: it is a typo or
a stale name, reported at load with its file and line and the names that are installed. A variant
without the skill (the baseline of a with/without experiment) is no error: there the check fails,
and its `not: true` form passes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from omk.core.errors import InputError, Problem
from omk.samples.model import AssertionSpec, Sample
from omk.settings.config import Settings
from omk.targets.base import Target

if TYPE_CHECKING:
    from omk.engine.state import EvaluationState

SKILL_USED = "skill_used"


def installed_skills(target: Target, settings: Settings) -> tuple[str, ...] | None:
    """The names of the skills the run installs: as the target says (`claude:`), else as the
    settings name them; None when neither says (a cmd: agent may bring its own skills)."""
    listed = getattr(target, "installed_skills", None)
    if callable(listed):
        return tuple(listed())
    if settings.skill is None and settings.skills is None:
        return None  # the settings name no skill (and the skills' module stays unloaded)
    from omk.domain.skillset import configured_skills

    found = configured_skills(settings.blocks())
    return tuple(s.name for s in found) if found else None


def agree_on_skills(evaluations: Sequence[EvaluationState], check: bool = True) -> None:
    """An experiment's variants: when some variant says which skills it installs, one that names
    none installs none (the baseline of a with/without experiment, whatever its target); then
    the `skill_used` names are checked against all of them together."""
    if any(e.skills is not None for e in evaluations):
        for e in evaluations:
            if e.skills is None:
                e.skills = ()
    if check and evaluations:
        check_skill_names(evaluations[0].samples, [e.skills for e in evaluations])


def skill_specs(specs: Sequence[AssertionSpec]) -> Iterator[AssertionSpec]:
    """Every `skill_used` in `specs`, those inside an assert-set too."""
    for spec in specs:
        if spec.type == SKILL_USED:
            yield spec
        yield from skill_specs(spec.children)


def expected_skills(samples: Sequence[Sample]) -> Iterator[tuple[Sample, AssertionSpec]]:
    for sample in samples:
        for specs in sample.assertion_lists():
            for spec in skill_specs(specs):
                yield sample, spec


def check_skill_names(samples: Sequence[Sample], installed: Sequence[tuple[str, ...] | None]) -> None:
    """Raise an InputError for each `skill_used` naming a skill no variant installs (`installed`:
    one entry per variant; a None one may install anything, so nothing is checked)."""
    if not installed or any(names is None for names in installed):
        return
    known = sorted({name for names in installed if names is not None for name in names})
    problems = []
    for sample, spec in expected_skills(samples):
        name = str(spec.get("value"))
        if name in known:
            continue
        where = spec.source
        item, _, inside = (where.path if where else "").partition(".")
        listed = ", ".join(known) if known else "none (set skill: or skills: in omk.yaml)"
        problems.append(
            Problem(
                where.file if where else "",
                where.line if where else None,
                f"{item} ({sample.sample_id})" if item else f"sample {sample.sample_id}",
                f"{inside}.value" if inside else "value",
                f"skill_used names {name!r}, which this run does not install; installed: {listed}",
            )
        )
    if problems:
        raise InputError(problems)
