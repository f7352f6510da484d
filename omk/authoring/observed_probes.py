"""Trigger probes from `omk observe --write-probes FILE`: each candidate written as an omk sample
for a person to review, so `omk evolve` and the triggering report work on real phrasing.

A candidate missed trigger becomes a should-fire probe (`skill_used: SKILL`), a candidate false
trigger a near-miss probe (`skill_used: SKILL` with `not: true`). A request that is a candidate for
several skills is one sample with one check per skill. Its prompt is the request's text as the
report keeps it (masked: secret values and the home folder replaced), its provenance
`production-trace`, and the comment above it names the session, the request, the project and the
similarity that made it a candidate. A prompt that nearly duplicates one already written (the
doctor's near-duplicate rule) is left out. The file is ordinary omk YAML that `omk doctor` reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import InputError
from omk.records.observe import MISSED, Candidate, Observation

PROVENANCE = "production-trace"
WHAT = {MISSED: "should fire {skill} (a candidate missed trigger)", "false_trigger": "should not fire {skill} (a candidate false trigger)"}
CLI_NAMES = {"claude": "Claude Code", "codex": "Codex"}


class Probes(msgspec.Struct, frozen=True, gc=False):
    """The YAML text, the samples in it, and the candidates left out as near-duplicates."""

    text: str
    samples: int
    left_out: int


def _groups(observation: Observation) -> list[list[Candidate]]:
    """The candidates grouped by request, in report order (skill by skill, best first)."""
    groups: dict[tuple[str, int], list[Candidate]] = {}
    for skill in observation.skills:
        for c in (*skill.missed, *skill.false_triggers):
            groups.setdefault((c.where.session, c.where.index), []).append(c)
    return list(groups.values())


def _comment(group: list[Candidate]) -> str:
    first = group[0]
    w = first.where
    where = f"{CLI_NAMES.get(w.cli, w.cli)} session {w.session}, request {w.index + 1}"
    where += f", project {w.project}" if w.project else ""
    where += f", {w.time}" if w.time else ""
    why = "; ".join(
        f"{WHAT.get(c.kind, c.kind).format(skill=c.skill)}: similarity {c.description_similarity:.2f} to its description, "
        f"{c.request_similarity:.2f} to a request that fired it"
        for c in group
    )  # fmt: skip
    return f"from {where}: {why}; review it before trusting it"


def _sample(group: list[Candidate], sample_id: str) -> dict[str, Any]:
    checks: list[dict[str, Any]] = []
    for c in group:
        check: dict[str, Any] = {"type": "skill_used", "value": c.skill}
        if c.kind != MISSED:
            check["not"] = True
        checks.append(check)
    return {"sample_id": sample_id, "prompt": group[0].prompt, "provenance": PROVENANCE, "assertions": checks}


def probes(observation: Observation) -> Probes:
    """The probes file for these candidates (`samples: []` when there are none)."""
    from omk.authoring.draft_check import Deduper, block_of

    dedupe = Deduper([])
    blocks: list[str] = []
    left_out = 0
    for group in _groups(observation):
        first = group[0]
        sample_id = f"observed-{len(blocks) + 1}-{'missed' if first.kind == MISSED else 'false'}-{first.skill}"
        if dedupe.duplicate_of(first.prompt) is not None:
            left_out += 1
            continue
        dedupe.keep(sample_id, first.prompt)
        blocks.append(block_of(_sample(group, sample_id), _comment(group)))
    head = [
        "# Trigger probes from real sessions (omk observe): requests where a skill may have failed to fire",
        "# (skill_used) or fired on something unrelated (skill_used, not: true). Each one is a candidate found",
        "# by text similarity alone: review it, fix or delete it, before relying on it.",
        "samples:" if blocks else "samples: []",
    ]
    return Probes("\n".join([*head, *blocks]) + "\n", len(blocks), left_out)


def check_probes_path(path: Path) -> None:
    """InputError unless `path` is a new .yaml or .yml file (checked before any session is read)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(f"{path}: probes are written as omk YAML; name a .yaml or .yml file")
    if path.exists():
        raise InputError(f"{path}: already exists; choose another file for --write-probes (omk does not overwrite samples)")


def write_probes(observation: Observation, path: Path) -> Probes:
    """Write the probes to `path` (a new .yaml or .yml file); InputError when it exists or is not YAML."""
    from omk.io.fileio import write_atomic

    check_probes_path(path)
    made = probes(observation)
    try:
        write_atomic(path, made.text)
    except OSError as exc:
        raise InputError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    return made
