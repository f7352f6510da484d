"""How skills fire in the wild (`omk observe`): from Claude Code and Codex sessions already on
disk, per skill, how often it fired, where, what went wrong after it fired, and the requests a
person should look at: candidate missed triggers and candidate false triggers.

Everything is computed here, on this machine: no model is called, and the session files are only
read. A *request* is one prompt a person typed (a subagent's prompt is written by the agent, so
a subagent's firings are counted apart and its prompts are never candidates). A skill is
*available* in a request when the session lists it as installed, or, when the session lists no
skills, unless it is a project's skill and the session is another project's.

Ranking (omk.sessions.likeness gives the similarity, a TF-IDF cosine in [0, 1]):
- a request that fired the skill is a candidate false trigger when its text is far from the skill's
  description and from every other request that fired it: its relatedness (the larger of the two
  similarities) is below `FALSE_MAX`; the score is 1 − relatedness. A request that names the skill
  itself (`/name`, `$name`, a Codex `$skill` injection) asked for it and is never one;
- the firings that are not candidate false triggers are the skill's *anchors*; a request where the
  skill was available and did not fire is a candidate missed trigger when its similarity to the
  description or to an anchor (the larger: the score) is at least `MISSED_MIN`.
A request with fewer than `MIN_WORDS` content words ("yes", "go on") is never a candidate.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.records.observe import (
    FALSE_TRIGGER,
    MISSED,
    Candidate,
    Observation,
    ProjectFiring,
    RequestRef,
    SkillObservation,
    ToolProblem,
)
from omk.records.triggering import Rate
from omk.sessions.finding import made_before
from omk.sessions.likeness import Neighbours, TextSpace, content_words, cosine
from omk.sessions.skill_catalog import KnownSkill

if TYPE_CHECKING:
    from omk.sessions import Session, SessionRequest

MISSED_MIN = 0.15
FALSE_MAX = 0.05
MIN_WORDS = 3
DEFAULT_LIMIT = 10  # candidates of each kind listed per skill
PROBLEMS_KEPT = 5  # failed or denied calls kept per skill
PROMPT_CHARS = 4000  # of a prompt kept in the report (and written as a probe); the terminal shows less
OUTPUT_CHARS = 200  # of a failed call's output
USER_INVOKED = "codex_injection"


@dataclass(slots=True)
class _Request:
    """One request, as the analysis sees it."""

    ref: RequestRef
    prompt: str  # masked, whole
    fired: dict[str, str]  # skill -> how it was first seen firing
    available: Callable[[str], bool]
    vector: dict[str, float] = field(default_factory=dict)
    words: int = 0


@dataclass(slots=True)
class ObserveOptions:
    """What `omk observe` was asked: the cut-off time, the candidates listed per skill, the masker."""

    since: datetime | None = None
    limit: int = DEFAULT_LIMIT
    mask: Callable[[str], str] = str
    missed_min: float = MISSED_MIN
    false_max: float = FALSE_MAX
    env: Mapping[str, str] = field(default_factory=dict)  # HOME, to read a project written `~/…`


def _time_text(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return value if isinstance(value, str) else ""


def _availability(session: Session, catalog: Mapping[str, KnownSkill], env: Mapping[str, str]) -> Callable[[str], bool]:
    from omk.sessions.skill_catalog import home_of, project_folder

    installed = set(session.installed_skills)
    project = project_folder(session.project, env) if session.project else None
    home = home_of(env)

    def available(skill: str) -> bool:
        if installed:
            return skill in installed
        known = catalog.get(skill)
        if known is None or project is None:
            return True
        owner = next((p for p in known.path.parents if p.name in (".claude", ".codex", ".agents")), None)
        return owner is None or owner.parent in (home, project)

    return available


def _ref(session: Session, request: SessionRequest, mask: Callable[[str], str]) -> RequestRef:
    project = mask(str(session.project)) if session.project else ""
    return RequestRef(mask(str(session.path)), request.index, session.cli, project, _time_text(request.time))


def names_itself(prompt: str, skill: str) -> bool:
    """Whether the prompt asks for the skill by name (`/skill`, `$skill`, `/plugin:skill`)."""
    return re.search(rf"(?:^|\s)[/$](?:[\w.-]+:)?{re.escape(skill)}(?![\w-])", prompt) is not None


@dataclass(slots=True)
class _Tally:
    """What the sessions say of one skill before the candidates are ranked."""

    requests: Counter[str] = field(default_factory=Counter)  # project -> requests where it was available
    fired: Counter[str] = field(default_factory=Counter)  # project -> requests that fired it
    how: Counter[str] = field(default_factory=Counter)
    subagent: int = 0
    calls_after: int = 0
    firings: int = 0  # requests that fired it, subagents' included
    troubled: int = 0  # of those, the ones with a failed or denied call after the firing
    failed: int = 0
    denied: int = 0
    problems: list[ToolProblem] = field(default_factory=list)


def _after_firing(tally: _Tally, skill: str, session: Session, request: SessionRequest, mask: Callable[[str], str]) -> None:
    """Count the tool calls after the skill's first firing in this request, and the failed or denied ones."""
    firing = next(f for f in request.skills if f.skill == skill)
    calls = list(request.tool_calls)
    start = next((i + 1 for i, c in enumerate(calls) if firing.call_id is not None and c.id == firing.call_id), 0)
    tally.firings += 1
    tally.troubled += any(c.is_error or c.denied for c in calls[start:])
    for call in calls[start:]:
        tally.calls_after += 1
        if not (call.is_error or call.denied):
            continue
        kind = "denied" if call.denied else "failed"
        tally.denied += call.denied
        tally.failed += not call.denied
        if len(tally.problems) < PROBLEMS_KEPT:
            output = " ".join(mask(call.output or "").split())[:OUTPUT_CHARS]
            tally.problems.append(ToolProblem(kind, call.name, _ref(session, request, mask), output))


def _collect(sessions: Sequence[Session], catalog: Mapping[str, KnownSkill], options: ObserveOptions) -> tuple[list[_Request], dict[str, _Tally]]:
    """The people's requests, and each skill's counts (every skill installed, known or fired)."""
    requests: list[_Request] = []
    tallies: dict[str, _Tally] = {name: _Tally() for name in catalog}
    for session in sessions:
        available = _availability(session, catalog, options.env)
        for name in session.installed_skills:
            tallies.setdefault(name, _Tally())
        for request in session.requests:
            if made_before(request.time, options.since):
                continue
            fired: dict[str, str] = {}
            for firing in request.skills:
                fired.setdefault(firing.skill, firing.how)
            for skill, how in fired.items():
                tally = tallies.setdefault(skill, _Tally())
                _after_firing(tally, skill, session, request, options.mask)
                if session.subagent:
                    tally.subagent += 1
                else:
                    tally.how[how] += 1
            if session.subagent or not (request.prompt or "").strip():
                continue
            ref = _ref(session, request, options.mask)
            requests.append(_Request(ref, options.mask(request.prompt), fired, available))
    for req in requests:
        for skill, tally in tallies.items():
            if skill in req.fired or req.available(skill):
                tally.requests[req.ref.project] += 1
                tally.fired[req.ref.project] += skill in req.fired
    return requests, tallies


def rate(k: int, n: int) -> Rate:
    """k of n with its 95% Wilson interval (no interval when n is 0)."""
    if not n:
        return Rate(k, n)
    from omk.stats.winrate import wilson_interval

    interval = wilson_interval(k, n)
    return Rate(k, n, k / n, interval.low, interval.high)


def _candidate(kind: str, skill: str, req: _Request, score: float, sims: tuple[float, float], nearest: _Request | None) -> Candidate:
    prompt = req.prompt.strip()
    prompt = prompt if len(prompt) <= PROMPT_CHARS else prompt[: PROMPT_CHARS - 1] + "…"
    others = tuple(sorted(s for s in req.fired if s != skill))
    return Candidate(kind, skill, req.ref, prompt, score, sims[0], sims[1], _where(nearest) if nearest else "", others)


def _where(req: _Request) -> str:
    return f"{req.ref.session}#{req.ref.index}"


def _false_triggers(skill: str, description: dict[str, float], firings: list[_Request], options: ObserveOptions) -> list[Candidate]:
    found = []
    neighbours = Neighbours([r.vector for r in firings])
    for i, req in enumerate(firings):
        if req.words < MIN_WORDS or req.fired[skill] == USER_INVOKED or names_itself(req.prompt, skill):
            continue
        to_description = cosine(req.vector, description)
        to_request, j = neighbours.nearest(req.vector, skip=i)
        relatedness = max(to_description, to_request)
        if relatedness < options.false_max:
            found.append(_candidate(FALSE_TRIGGER, skill, req, 1 - relatedness, (to_description, to_request), firings[j] if j >= 0 else None))
    return found


def _missed(skill: str, description: dict[str, float], requests: list[_Request], anchors: list[_Request], options: ObserveOptions) -> list[Candidate]:
    found = []
    neighbours = Neighbours([a.vector for a in anchors])
    for req in requests:
        if skill in req.fired or req.words < MIN_WORDS or not req.available(skill):
            continue
        to_description = cosine(req.vector, description)
        to_request, j = neighbours.nearest(req.vector)
        score = max(to_description, to_request)
        if score >= options.missed_min:
            found.append(_candidate(MISSED, skill, req, score, (to_description, to_request), anchors[j] if j >= 0 else None))
    return found


def _ranked(found: list[Candidate], limit: int) -> tuple[Candidate, ...]:
    return tuple(sorted(found, key=lambda c: (-c.score, c.where.session, c.where.index))[:limit])


def _skill_observation(name: str, tally: _Tally, known: KnownSkill | None, requests: list[_Request], space: TextSpace, options: ObserveOptions) -> SkillObservation:
    text = f"{name.replace('-', ' ').replace('_', ' ')}. {known.description}" if known and known.description else ""
    description = space.vector(text) if text else {}
    firings = [r for r in requests if name in r.fired]
    false = _false_triggers(name, description, firings, options)
    flagged = {(c.where.session, c.where.index) for c in false}
    anchors = [r for r in firings if (r.ref.session, r.ref.index) not in flagged]
    missed = _missed(name, description, requests, anchors, options)
    order = sorted(tally.requests.items(), key=lambda kv: (-tally.fired[kv[0]], -kv[1], kv[0]))
    projects = tuple(ProjectFiring(p, rate(tally.fired[p], n)) for p, n in order)
    return SkillObservation(
        skill=name, description=known.description if known else "", source=options.mask(str(known.path)) if known else "",
        firing=rate(sum(tally.fired.values()), sum(tally.requests.values())), how=tuple(sorted(tally.how.items())),
        subagent_firings=tally.subagent, projects=projects, calls_after=tally.calls_after,
        troubled=rate(tally.troubled, tally.firings), failed_after=tally.failed,
        denied_after=tally.denied, problems=tuple(tally.problems), missed=_ranked(missed, options.limit),
        false_triggers=_ranked(false, options.limit),
    )  # fmt: skip


def observe(sessions: Sequence[Session], catalog: Mapping[str, KnownSkill], options: ObserveOptions | None = None) -> Observation:
    """The report on these sessions, for the skills of `catalog` and every skill that fired."""
    options = options or ObserveOptions()
    requests, tallies = _collect(sessions, catalog, options)
    descriptions = [f"{n.replace('-', ' ')}. {k.description}" for n, k in catalog.items() if k.description]
    space = TextSpace([r.prompt for r in requests] + descriptions)
    for req in requests:
        req.vector, req.words = space.vector(req.prompt), content_words(req.prompt)
    unseen = sorted(name for name, tally in tallies.items() if name not in catalog and not tally.firings)
    kept = {name: tally for name, tally in tallies.items() if name not in unseen}
    skills = [_skill_observation(name, tally, catalog.get(name), requests, space, options) for name, tally in kept.items()]
    skills.sort(key=lambda s: (-s.firing.k, s.skill))
    warnings = tuple(options.mask(w) for s in sessions for w in s.warnings)  # each names its file and line
    return Observation(
        sessions=sum(not s.subagent for s in sessions), subagent_sessions=sum(s.subagent for s in sessions), requests=len(requests),
        skills=tuple(skills), since=options.since.isoformat() if options.since else "", not_found=tuple(unseen),
        skipped_records=sum(_skipped(s) for s in sessions), warnings=warnings,
    )  # fmt: skip


def _skipped(session: Session) -> int:
    skipped: Any = session.skipped
    if isinstance(skipped, int):
        return skipped
    if isinstance(skipped, Mapping):
        return sum(v for v in skipped.values() if isinstance(v, int))
    if isinstance(skipped, tuple):  # (record type, count) pairs
        return sum(pair[1] for pair in skipped if isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], int))
    return 0


_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,})"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}"
)


def session_mask(env: Mapping[str, str]) -> Callable[[str], str]:
    """What every text taken from a session goes through: the secret values of this environment,
    strings shaped like well-known keys and tokens, and the home folder (written `~`)."""
    from omk.core.secrets import REDACTED, Masker, configured_secrets

    masker = Masker(configured_secrets(None, env))
    home = (env.get("HOME") or str(Path.home())).rstrip("/")
    home_path = re.compile(re.escape(home) + r"(?![^/\s'\"`),;:])")  # a whole path part: /home/ann, not /home/anna

    def mask(text: str) -> str:
        text = _KEY_SHAPES.sub(REDACTED, masker(text))
        return home_path.sub("~", text) if len(home) > 1 else text

    return mask


def observe_paths(paths: Sequence[Path], skill_dirs: Sequence[Path], options: ObserveOptions, env: Mapping[str, str]) -> Observation:
    """Read the sessions under `paths` (none: the default locations of both CLIs) and report on them;
    the skills are those under `skill_dirs`, else those installed where the sessions' projects and
    this user keep skills (omk.sessions.skill_catalog)."""
    from omk.sessions import find_sessions, read_session
    from omk.sessions.skill_catalog import default_roots, read_catalog

    files = find_sessions(list(paths), project=None, since=options.since, env=env)
    sessions, unread = [], []
    for path in files:
        try:
            sessions.append(read_session(path))
        except (OSError, ValueError) as exc:
            unread.append(f"{options.mask(str(path))}: cannot read it: {getattr(exc, 'strerror', None) or exc}")
    warnings: list[str] = []
    roots = list(skill_dirs) or default_roots((str(s.project) for s in sessions if s.project), env)
    catalog = read_catalog(roots, warnings)
    found = observe(sessions, catalog, options)
    extra = tuple(options.mask(w) for w in [*warnings, *unread])
    return msgspec.structs.replace(found, warnings=found.warnings + extra)
