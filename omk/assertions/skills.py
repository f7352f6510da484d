"""Skill assertions: did the agent invoke a skill (Claude Code's `Skill` tool, or a read of its
SKILL.md; omk.domain.skillset says exactly what counts), and how many times."""

from __future__ import annotations

from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.registry import NON_NEGATIVE, PrepareError, assertion
from omk.assertions.text import js_text
from omk.samples.model import AssertionSpec, Layer, Outcome

SKILL_NAME: dict[str, Any] = {"type": "string", "minLength": 1}


def _prepare(spec: AssertionSpec) -> None:
    name = str(spec.get("value"))
    if any(c.isspace() or c in "/\\" for c in name):
        raise PrepareError("value", f"{name!r} is not a skill name: a skill is named after its folder (no spaces, / or \\)")
    least, most = spec.get("threshold", 1), spec.get("max")
    if most is not None and most < least:
        raise PrepareError("max", f"max ({js_text(most)}) is below threshold ({js_text(least)}): nothing could pass")


def _others(counts: dict[str, int], name: str) -> str:
    others = [f"{skill} ×{n}" if n > 1 else skill for skill, n in counts.items() if skill != name]
    return f"; fired instead: {', '.join(others)}" if others else ""


@assertion(
    "skill_used",
    layer=Layer.BEHAVIOR,
    schema={
        "required": ["value"],
        "properties": {"value": SKILL_NAME, "threshold": NON_NEGATIVE, "max": NON_NEGATIVE},
    },
    prepare=_prepare,
)
def skill_used(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The agent invoked the skill `value` at least `threshold` (default 1) and at most `max` times."""
    name = str(spec.get("value"))
    least, most = spec.get("threshold", 1), spec.get("max")
    from omk.domain.skillset import fired  # loaded by the first run that checks a skill

    counts = fired(ctx.trace.tool_calls)
    if ctx.skills is not None and name not in ctx.skills:
        installed = ", ".join(ctx.skills) or "none"
        return Outcome(False, metric=0, message=f"skill {name} is not installed in this run (installed: {installed})")
    count = counts.get(name, 0)
    ok = count >= least and (most is None or count <= most)
    bound = f">= {js_text(least)}" if count >= least else f"< {js_text(least)}"
    if most is not None and count > most:
        bound = f"> max {js_text(most)}"
    elif most is not None and ok:
        bound = f"within {js_text(least)}..{js_text(most)}"
    return Outcome(ok, metric=count, message=f"skill {name} invoked {count} time(s) {bound}{_others(counts, name)}")
