"""The checks a candidate SKILL.md must pass before anything is paid for.

A candidate is refused, with the reason fed back to the improver, when its front matter is not a
YAML mapping between `---` lines, its `name` differs from the current skill's, its description is
missing or over 1,024 characters, the file is over `MAX_BYTES`, it changes more than the edit
budget (a share of the current skill's lines, 20% by default), it changes what the focus leaves
alone (the body under `--focus description`, the front matter under `--focus body`), or it is a
duplicate of the current skill or of a candidate already tried.

Lines changed: difflib's matching of the two files' lines; each replaced, removed or added
block counts the larger of its two sides.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Collection
from typing import Any

import msgspec

MAX_DESCRIPTION = 1024  # the limit Claude Code and the Agent Skills format put on a description
MAX_BYTES = 48 * 1024  # of SKILL.md, as much as omk shows a model of a skill (omk.authoring.skill_source)
DEFAULT_EDIT_BUDGET = 0.2
FOCUSES = ("description", "body", "both")


class SkillDoc(msgspec.Struct, frozen=True, gc=False):
    """A SKILL.md read for the checks: its front matter (as text and as a mapping) and its body."""

    front: str
    meta: dict[str, Any]
    body: str


def read_doc(text: str) -> SkillDoc | str:
    """The document, or why its front matter is not valid."""
    import yaml

    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return "the file does not start with a `---` front matter line"
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return "the front matter has no closing `---` line"
    front = "".join(lines[1:end])
    try:
        meta = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        return f"the front matter is not valid YAML{where}"
    if not isinstance(meta, dict):
        return "the front matter is not a mapping of `key: value` lines"
    return SkillDoc("".join(lines[: end + 1]), meta, "".join(lines[end + 1 :]))


def digest(text: str) -> str:
    """A candidate's identity for the duplicate check: its text with line ends and trailing
    spaces made uniform."""
    canonical = "\n".join(line.rstrip() for line in text.strip().splitlines())
    return hashlib.sha256(canonical.encode()).hexdigest()


def lines_changed(before: str, after: str) -> int:
    """The lines a change touches (see the module)."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def refusal(
    candidate: str,
    current: str,
    *,
    focus: str = "both",
    edit_budget: float = DEFAULT_EDIT_BUDGET,
    seen: Collection[str] = (),
) -> str | None:
    """Why the candidate is refused, or None when it may be evaluated. `seen` holds the digests of
    the candidates already tried; the current skill always counts as seen."""
    if len(candidate.encode("utf-8")) > MAX_BYTES:
        return f"SKILL.md is {len(candidate.encode('utf-8')):,} bytes, over the limit of {MAX_BYTES:,}"
    doc, base = read_doc(candidate), read_doc(current)
    if isinstance(doc, str):
        return doc
    if isinstance(base, str):
        raise ValueError(f"the current skill's SKILL.md: {base}")
    if doc.meta.get("name") != base.meta.get("name"):
        return f"the name changed from {base.meta.get('name')!r} to {doc.meta.get('name')!r}"
    description = doc.meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return "the front matter has no description"
    if len(description) > MAX_DESCRIPTION:
        return f"the description is {len(description):,} characters, over the limit of {MAX_DESCRIPTION:,}"
    key = digest(candidate)
    if key == digest(current) or key in seen:
        return "a duplicate of the current skill" if key == digest(current) else "a duplicate of a candidate already tried"
    outside = _outside_focus(doc, base, focus)
    if outside:
        return outside
    changed, total = lines_changed(current, candidate), max(1, len(current.splitlines()))
    if changed > edit_budget * total:
        return f"{changed} of {total} lines changed, over the edit budget of {edit_budget:.0%} ({int(edit_budget * total)} lines)"
    return None


def _outside_focus(doc: SkillDoc, base: SkillDoc, focus: str) -> str | None:
    if focus == "description":
        if doc.body.strip() != base.body.strip():
            return "the body changed, and --focus description changes only the description"
        others = {k: v for k, v in doc.meta.items() if k != "description"}
        if others != {k: v for k, v in base.meta.items() if k != "description"}:
            return "a front matter field other than the description changed, and --focus description changes only the description"
    if focus == "body" and doc.meta != base.meta:
        return "the front matter changed, and --focus body changes only the body"
    return None
