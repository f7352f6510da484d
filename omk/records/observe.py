"""What `omk observe --json` prints (format `omk-observe/1`): how the installed skills fired in the
Claude Code and Codex sessions read, per skill.

Per skill: the requests where it was installed and how many of them fired it (a `Rate`, with its
Wilson interval), per project; the tool calls after a firing that failed or were refused; the
candidate missed triggers (requests that did not fire it but whose text is close to its
description or to requests that did) and the candidate false triggers (requests that fired it but
whose text is far from both), each ranked by its score (docs/skills.md, "Skills in the wild").
Prompts are masked and cut before they are kept here.

Read back by msgspec's typed decoding (`Observation.loads`; a wrong field is worded by
omk.records.wire, a missing or null field takes its default): `RequestRef`, `Candidate`,
`ToolProblem` and `ProjectFiring` as themselves, the rest through records of the written layout
(`_ObservationLine`, `_SkillLine`): the output starts with its `format`, which no field holds, and
`SkillObservation` writes its firings by how they were seen (`how`, kept as pairs) as an object.
Their `to_json` stay written by hand for that, and because `Candidate` writes its score and
similarities rounded to 4 places.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from omk.core.errors import InputError
from omk.records.triggering import Rate
from omk.records.wire import Number, decode

FORMAT = "omk-observe/1"
MISSED = "missed"
FALSE_TRIGGER = "false_trigger"


class RequestRef(msgspec.Struct, frozen=True, gc=False):
    """Where a request is: its session file, the request's place in it (0-based), its project and time."""

    session: str = ""
    index: int = 0
    cli: str = ""
    project: str = ""
    time: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "index": self.index, "cli": self.cli, "project": self.project, "time": self.time}

class Candidate(msgspec.Struct, frozen=True, gc=False):
    """A request a person should look at: `kind` is `missed` (the skill did not fire, the text is
    close) or `false_trigger` (it fired, the text is far). `score` ranks (higher: more likely);
    the similarities are the text's to the skill's description and to the nearest other request
    that fired it (`nearest_request`, `SESSION#INDEX`; "" when none shares a word with it)."""

    kind: str = ""
    skill: str = ""
    where: RequestRef = RequestRef()
    prompt: str = ""
    score: Number = 0.0
    description_similarity: Number = 0.0
    request_similarity: Number = 0.0
    nearest_request: str = ""
    fired_instead: tuple[str, ...] = ()  # the other skills the request fired

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "skill": self.skill, "where": self.where.to_json(), "prompt": self.prompt,
            "score": round(self.score, 4), "description_similarity": round(self.description_similarity, 4),
            "request_similarity": round(self.request_similarity, 4), "nearest_request": self.nearest_request,
            "fired_instead": list(self.fired_instead),
        }  # fmt: skip

class ToolProblem(msgspec.Struct, frozen=True, gc=False):
    """A tool call after the skill fired, in the same request, that failed (`failed`) or that the
    user or the permission rules refused (`denied`); `output` is its masked, cut output."""

    kind: str = ""
    tool: str = ""
    where: RequestRef = RequestRef()
    output: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "tool": self.tool, "where": self.where.to_json(), "output": self.output}

class ProjectFiring(msgspec.Struct, frozen=True, gc=False):
    """One project: the requests that fired the skill of those where it was installed, with the
    rate's Wilson interval."""

    project: str = ""
    firing: Rate = Rate(0, 0)

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "firing": self.firing.to_json()}

class SkillObservation(msgspec.Struct, frozen=True, gc=False):
    """One skill across the sessions read."""

    skill: str
    description: str  # "" when no SKILL.md of that name was found
    source: str  # where its SKILL.md is ("" when not found)
    firing: Rate  # requests that fired it / requests where it was installed
    how: tuple[tuple[str, int], ...] = ()  # firings by how they were seen (skill_call, skill_md_read, codex_injection)
    subagent_firings: int = 0  # firings inside subagents (not in `firing`, whose requests are people's)
    projects: tuple[ProjectFiring, ...] = ()
    calls_after: int = 0  # tool calls after a firing
    troubled: Rate = Rate(0, 0)  # requests that fired it with a failed or denied call after the firing / requests that fired it
    failed_after: int = 0
    denied_after: int = 0
    problems: tuple[ToolProblem, ...] = ()  # the first few failed or denied calls
    missed: tuple[Candidate, ...] = ()
    false_triggers: tuple[Candidate, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill, "description": self.description, "source": self.source, "firing": self.firing.to_json(),
            "how": {name: n for name, n in self.how}, "subagent_firings": self.subagent_firings,
            "projects": [p.to_json() for p in self.projects], "calls_after": self.calls_after,
            "failed_after": self.failed_after, "denied_after": self.denied_after, "troubled": self.troubled.to_json(),
            "problems": [p.to_json() for p in self.problems], "missed": [c.to_json() for c in self.missed],
            "false_triggers": [c.to_json() for c in self.false_triggers],
        }  # fmt: skip

class Observation(msgspec.Struct, frozen=True, gc=False):
    """The whole report: what was read, and one entry per skill (most firings first)."""

    sessions: int
    subagent_sessions: int
    requests: int
    skills: tuple[SkillObservation, ...]
    since: str = ""
    not_found: tuple[str, ...] = ()  # skills the sessions list that never fired and have no SKILL.md here (the CLI's own, removed ones)
    skipped_records: int = 0  # lines the reader skipped (unknown record types)
    warnings: tuple[str, ...] = ()  # the reader's located warnings, and sessions it could not read

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "sessions": self.sessions, "subagent_sessions": self.subagent_sessions,
            "requests": self.requests, "since": self.since, "not_found": list(self.not_found), "skipped_records": self.skipped_records,
            "warnings": list(self.warnings), "skills": [s.to_json() for s in self.skills],
        }  # fmt: skip

    @classmethod
    def loads(cls, text: str, origin: str = "observe.json") -> Observation:
        """`omk observe --json`'s output read back (a wrong field is an InputError naming it)."""
        line = decode(text, _ObservationLine, origin, nulls=True)
        if line.format != FORMAT:
            raise InputError(f"{origin}: format: expected {FORMAT!r}, found {line.format!r}")
        return cls(
            line.sessions, line.subagent_sessions, line.requests, tuple(s.record() for s in line.skills), line.since,
            line.not_found, line.skipped_records, line.warnings,
        )  # fmt: skip


class _SkillLine(msgspec.Struct, frozen=True, gc=False):
    """A skill as written: its firings by how they were seen as an object."""

    skill: str = ""
    description: str = ""
    source: str = ""
    firing: Rate = Rate(0, 0)
    how: Mapping[str, int] = msgspec.field(default_factory=dict)
    subagent_firings: int = 0
    projects: tuple[ProjectFiring, ...] = ()
    calls_after: int = 0
    troubled: Rate = Rate(0, 0)
    failed_after: int = 0
    denied_after: int = 0
    problems: tuple[ToolProblem, ...] = ()
    missed: tuple[Candidate, ...] = ()
    false_triggers: tuple[Candidate, ...] = ()

    def record(self) -> SkillObservation:
        return SkillObservation(
            self.skill, self.description, self.source, self.firing, tuple(self.how.items()), self.subagent_firings,
            self.projects, self.calls_after, self.troubled, self.failed_after, self.denied_after, self.problems,
            self.missed, self.false_triggers,
        )  # fmt: skip


class _ObservationLine(msgspec.Struct, frozen=True, gc=False):
    """The output as written: it starts with its `format`."""

    format: str = ""
    sessions: int = 0
    subagent_sessions: int = 0
    requests: int = 0
    skills: tuple[_SkillLine, ...] = ()
    since: str = ""
    not_found: tuple[str, ...] = ()
    skipped_records: int = 0
    warnings: tuple[str, ...] = ()
