"""What `omk observe --json` prints (format `omk-observe/1`): how the installed skills fired in the
Claude Code and Codex sessions read, per skill.

Per skill: the requests where it was installed and how many of them fired it (a `Rate`, with its
Wilson interval), per project; the tool calls after a firing that failed or were refused; the
candidate missed triggers (requests that did not fire it but whose text is close to its
description or to requests that did) and the candidate false triggers (requests that fired it but
whose text is far from both), each ranked by its score (docs/skills.md, "Skills in the wild").
Prompts are masked and cut before they are kept here.

The records keep their own `to_json` and `from_json`: the output starts with its `format`, which
no field holds; `Candidate` writes its score and similarities rounded to 4 places, and
`SkillObservation` its firings by how they were seen (`how`, kept as pairs) as an object; the
readers take a missing or null field as its default.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from omk.records.fields import Fields
from omk.records.triggering import Rate

FORMAT = "omk-observe/1"
MISSED = "missed"
FALSE_TRIGGER = "false_trigger"


class RequestRef(msgspec.Struct, frozen=True, gc=False):
    """Where a request is: its session file, the request's place in it (0-based), its project and time."""

    session: str
    index: int
    cli: str
    project: str = ""
    time: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "index": self.index, "cli": self.cli, "project": self.project, "time": self.time}

    @classmethod
    def from_json(cls, f: Fields) -> RequestRef:
        return cls(f.str("session", ""), f.int("index"), f.str("cli", ""), f.str("project", ""), f.str("time", ""))


class Candidate(msgspec.Struct, frozen=True, gc=False):
    """A request a person should look at: `kind` is `missed` (the skill did not fire, the text is
    close) or `false_trigger` (it fired, the text is far). `score` ranks (higher: more likely);
    the similarities are the text's to the skill's description and to the nearest other request
    that fired it (`nearest_request`, `SESSION#INDEX`; "" when none shares a word with it)."""

    kind: str
    skill: str
    where: RequestRef
    prompt: str
    score: float
    description_similarity: float
    request_similarity: float
    nearest_request: str = ""
    fired_instead: tuple[str, ...] = ()  # the other skills the request fired

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "skill": self.skill, "where": self.where.to_json(), "prompt": self.prompt,
            "score": round(self.score, 4), "description_similarity": round(self.description_similarity, 4),
            "request_similarity": round(self.request_similarity, 4), "nearest_request": self.nearest_request,
            "fired_instead": list(self.fired_instead),
        }  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields) -> Candidate:
        where = f.obj("where")
        return cls(
            kind=f.str("kind", ""), skill=f.str("skill", ""),
            where=RequestRef.from_json(where) if where is not None else RequestRef("", 0, ""),
            prompt=f.str("prompt", ""), score=f.num("score", 0.0),
            description_similarity=f.num("description_similarity", 0.0), request_similarity=f.num("request_similarity", 0.0),
            nearest_request=f.str("nearest_request", ""), fired_instead=f.strs("fired_instead"),
        )  # fmt: skip


class ToolProblem(msgspec.Struct, frozen=True, gc=False):
    """A tool call after the skill fired, in the same request, that failed (`failed`) or that the
    user or the permission rules refused (`denied`); `output` is its masked, cut output."""

    kind: str
    tool: str
    where: RequestRef
    output: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "tool": self.tool, "where": self.where.to_json(), "output": self.output}

    @classmethod
    def from_json(cls, f: Fields) -> ToolProblem:
        where = f.obj("where")
        ref = RequestRef.from_json(where) if where is not None else RequestRef("", 0, "")
        return cls(f.str("kind", ""), f.str("tool", ""), ref, f.str("output", ""))


class ProjectFiring(msgspec.Struct, frozen=True, gc=False):
    """One project: the requests that fired the skill of those where it was installed, with the
    rate's Wilson interval."""

    project: str
    firing: Rate

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "firing": self.firing.to_json()}

    @classmethod
    def from_json(cls, f: Fields) -> ProjectFiring:
        return cls(f.str("project", ""), Rate.from_json(f.obj("firing")) or Rate(0, 0))


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

    @classmethod
    def from_json(cls, f: Fields) -> SkillObservation:
        how = f.obj("how")
        return cls(
            skill=f.str("skill", ""), description=f.str("description", ""), source=f.str("source", ""),
            firing=Rate.from_json(f.obj("firing")) or Rate(0, 0),
            how=tuple((k, how.int(k)) for k in how.data) if how is not None else (),
            subagent_firings=f.int("subagent_firings"), projects=tuple(ProjectFiring.from_json(p) for p in f.objs("projects")),
            calls_after=f.int("calls_after"), failed_after=f.int("failed_after"), denied_after=f.int("denied_after"),
            troubled=Rate.from_json(f.obj("troubled")) or Rate(0, 0),
            problems=tuple(ToolProblem.from_json(p) for p in f.objs("problems")),
            missed=tuple(Candidate.from_json(c) for c in f.objs("missed")),
            false_triggers=tuple(Candidate.from_json(c) for c in f.objs("false_triggers")),
        )  # fmt: skip


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
    def from_json(cls, f: Fields) -> Observation:
        if f.str("format", "") != FORMAT:
            raise f.fail("format", repr(FORMAT))
        return cls(
            sessions=f.int("sessions"), subagent_sessions=f.int("subagent_sessions"), requests=f.int("requests"),
            skills=tuple(SkillObservation.from_json(s) for s in f.objs("skills")), since=f.str("since", ""),
            not_found=f.strs("not_found"), skipped_records=f.int("skipped_records"), warnings=f.strs("warnings"),
        )  # fmt: skip

    @classmethod
    def loads(cls, text: str, origin: str = "observe.json") -> Observation:
        return cls.from_json(Fields.of(json.loads(text), origin, ""))
