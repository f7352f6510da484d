"""Samples from Claude Code and Codex sessions (`omk sample --from-session PATH...`): each thing a
person asked becomes a sample that replays it offline; a session of several requests becomes one
conversation (`turns:`).

A sample gets the prompt, one mock per distinct tool call with the output the session recorded
(built by omk.authoring.from_run, the same mocks `--from-run` writes: matched on the tool and its
whole input), `mocksStrict: true`, and per request: the recorded path as a `tool_sequence`
(`in_order`), the final answer as the `reference` of a `rouge_n_min` check, a `skill_used` for
each skill that fired and a `skill_used … not: true` for each installed skill that did not.
The calls of a Claude Code subagent are mocked in the sample of the request that started it.
The CLI's own bookkeeping tools (loading a skill, starting a subagent, the to-do list) run in a
replay, so they get no mock. Texts were masked when the session was read (omk.sessions.reader),
and none is longer than a mock's output may be; the sample is masked again with the secrets
given here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from omk.authoring.from_run import MAX_RECORDED_BYTES, ROUGE_THRESHOLD, cut_utf8, mocks_of
from omk.core.secrets import Masker
from omk.domain.mock_defs import BOOKKEEPING_TOOLS, RECORDED
from omk.io.safe_files import sample_file_cap
from omk.loader.depth import nested_too_deep
from omk.records import ToolCall
from omk.report.i18n import t
from omk.sessions.finding import made_before
from omk.sessions.model import Session, SessionRequest, SessionToolCall
from omk.sessions.reader import home_as_tilde

CLI_NAMES = {"claude": "Claude Code", "codex": "Codex"}


@dataclass(slots=True)
class FromSessions:
    """The samples file's text, how many samples it holds, and what was left out (and why)."""

    text: str
    count: int
    left_out: list[str] = field(default_factory=list)


class SessionChoice(msgspec.Struct, frozen=True, gc=False):
    """Which requests become samples: those made at or after `since` (when given) where `skill`
    fired (all, when None), at most `limit` samples; `installed` narrows the skills a `not: true`
    check is written for (None: every skill the session lists)."""

    skill: str | None = None
    limit: int | None = None
    installed: frozenset[str] | None = None
    since: datetime | None = None


def _chosen(request: SessionRequest, choice: SessionChoice) -> bool:
    if made_before(request.time, choice.since):
        return False
    return choice.skill is None or any(f.skill == choice.skill for f in request.skills)


def samples_from_sessions(
    sessions: Sequence[Session], mask: Masker | None = None, choice: SessionChoice | None = None, lang: str = "en"
) -> FromSessions:
    """The samples (as omk YAML) that replay the requests of `sessions`; why a session was left
    out is said in `lang` (`en`, `zh`)."""
    mask = mask if mask is not None else Masker.for_run()
    choice = choice or SessionChoice()
    subagents = [s for s in sessions if s.subagent]
    blocks: list[str] = []
    left_out: list[str] = []
    ids: set[str] = set()
    room = sample_file_cap() - 1024  # the header's room kept: the file loads again
    for session in sessions:
        requests = [r for r in session.requests if _chosen(r, choice)]
        if session.subagent or not requests:
            if not session.subagent and not session.requests:
                left_out.append(f"{session.path}: {t('no request in it', lang)}")
            continue
        why, block = _one(session, requests, subagents, choice, mask, ids)
        if why is None and choice.limit is not None and len(blocks) >= choice.limit:
            why = t("over --limit {n}", lang).format(n=choice.limit)
        if why is None and len(block.encode("utf-8")) + 1 > room:
            why = t("the samples file would be larger than a samples file may be ({n} bytes)", lang).format(n=sample_file_cap())
        if why is not None:
            left_out.append(f"{session.path}: {why}")
            continue
        blocks.append(block)
        room -= len(block.encode("utf-8")) + 1
    header = [
        "# Samples recorded from Claude Code and Codex sessions (omk sample --from-session): each",
        "# replays what a person asked, its tool calls answered by what they returned then.",
        "# Review before trusting them.",
        "samples:" if blocks else "samples: []",
    ]
    return FromSessions("\n".join(header + blocks) + "\n", len(blocks), left_out)


def _one(session: Session, requests: list[SessionRequest], subagents: list[Session], choice: SessionChoice, mask: Masker,
         ids: set[str]) -> tuple[str | None, str]:
    """One session's sample as YAML text, or why it cannot be one (nested too deep to load)."""
    sample = sample_of(session, requests, _helpers(session, subagents), choice.installed)
    deep = nested_too_deep(sample)
    if deep is not None:
        return deep, ""
    base, n = sample["sample_id"], 1
    while sample["sample_id"] in ids:  # two files of one session (a resumed one): ids stay unique
        n += 1
        sample["sample_id"] = f"{base}-{n}"
    ids.add(sample["sample_id"])
    return None, _block(session, requests, sample, mask)


def _helpers(session: Session, subagents: list[Session]) -> list[Session]:
    """The subagents of a Claude Code session (their files are `<session>/subagents/…`)."""
    return [s for s in subagents if s.cli == session.cli and s.session_id == session.session_id]


def sample_of(session: Session, requests: Sequence[SessionRequest], helpers: Sequence[Session] = (),
              installed: frozenset[str] | None = None) -> dict[str, Any]:
    """The sample (as the loader reads it) that replays `requests` of `session`."""
    sample: dict[str, Any] = {"sample_id": _sample_id(session, requests), "provenance": RECORDED}
    calls = [c for r in requests for c in r.tool_calls] + _helper_calls(requests, helpers)
    mocked = [_tool_call(session, c) for c in calls if c.name not in BOOKKEEPING_TOOLS]
    if mocked:
        sample["mocks"] = mocks_of(mocked)
    sample["mocksStrict"] = True
    skills = [s for s in session.installed_skills if installed is None or s in installed]
    checks = [(r, _assertions(session, r, skills)) for r in requests]
    if len(requests) == 1:
        sample["prompt"] = requests[0].prompt
        if checks[0][1]:
            sample["assertions"] = checks[0][1]
    else:
        sample["turns"] = [{"prompt": r.prompt, **({"assertions": a} if a else {})} for r, a in checks]
    return sample


def _sample_id(session: Session, requests: Sequence[SessionRequest]) -> str:
    """`claude-<the session id's start>`, and `-N` for the Nth request of a session alone."""
    base = f"{session.cli}-{re.sub(r'[^A-Za-z0-9_-]', '-', session.session_id[:13])}"
    return base if len(requests) > 1 or len(session.requests) == 1 else f"{base}-{requests[0].index + 1}"


def _helper_calls(requests: Sequence[SessionRequest], helpers: Sequence[Session]) -> list[SessionToolCall]:
    """The calls of the subagents these requests started (a `Task`/`Agent` call whose prompt is
    the subagent's first request)."""
    asked = {c.input.get("prompt") for r in requests for c in r.tool_calls if c.name in ("Task", "Agent") and isinstance(c.input, dict)}
    return [c for h in helpers for r in h.requests[:1] if r.prompt in asked for c in r.tool_calls]


def _tool_call(session: Session, call: SessionToolCall) -> ToolCall:
    """A session's call as omk records one, in the shape a replay's hook sees it."""
    tool, call_input = call.name, call.input
    if session.cli == "codex" and tool in ("exec_command", "shell", "local_shell") and isinstance(call_input, dict):
        command = call_input.get("cmd", call_input.get("command"))
        tool, call_input = "Bash", {"command": " ".join(command) if isinstance(command, list) else command}
    elif session.cli == "codex" and tool == "apply_patch":
        tool, call_input = "apply_patch", {"command": call_input} if isinstance(call_input, str) else call_input
    return ToolCall(tool, call_input, call.output if call.output is not None else "", is_error=call.is_error)


def _assertions(session: Session, request: SessionRequest, installed: Sequence[str]) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    steps = [_tool_call(session, c).tool for c in request.tool_calls]
    if steps:
        checks.append({"type": "tool_sequence", "mode": "in_order", "steps": steps})
    if request.answer and request.answer.strip():
        reference = cut_utf8(request.answer, MAX_RECORDED_BYTES)
        checks.append({"type": "rouge_n_min", "reference": reference, "threshold": ROUGE_THRESHOLD})
    fired = list(dict.fromkeys(f.skill for f in request.skills))
    checks += [{"type": "skill_used", "value": name} for name in fired]
    checks += [{"type": "skill_used", "value": name, "not": True} for name in installed if name not in fired]
    return checks


# What a YAML file may not hold, even in a comment (the YAML reader's own test of printable text).
NOT_PRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _one_line(text: str) -> str:
    """`text` on one line, fit for a YAML comment: a character YAML refuses is written `\\x1b`."""
    return NOT_PRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                             " ".join(str(text).split()))


def _block(session: Session, requests: Sequence[SessionRequest], sample: dict[str, Any], mask: Masker) -> str:
    """One sample as a YAML list item, after a comment naming the session, time and project."""
    import yaml

    when = requests[0].time or session.started or "?"
    origin = (f"recorded from {CLI_NAMES[session.cli]} session {session.session_id} ({home_as_tilde(session.path)}), "
              f"{when}, project {session.project or '?'}")
    text = yaml.safe_dump([mask.value(sample)], sort_keys=False, allow_unicode=True, width=100)
    body = "\n".join(f"  {line}" if line else line for line in text.rstrip("\n").split("\n"))
    return f"  # {_one_line(mask(origin))}\n{body}"


class SessionQuery(msgspec.Struct, frozen=True, gc=False):
    """Which sessions to record from: `paths` (files or folders; none: the sessions of `project`,
    default the current folder, where both CLIs keep them), their requests made since `since`. With `paths`
    and `project`, the sessions among them whose folder is `project` or inside it."""

    paths: tuple[Path, ...] = ()
    project: Path | None = None
    since: datetime | None = None
    skill: str | None = None
    limit: int | None = None


@dataclass(slots=True)
class RecordedSessions:
    """The samples, and per session file read what was wrong in it (located warnings, the
    record types skipped)."""

    found: FromSessions
    files: int
    notes: list[str] = field(default_factory=list)


def samples_from_session_files(query: SessionQuery, env: Mapping[str, str], mask: Masker | None = None,
                               lang: str = "en") -> RecordedSessions:
    """Find the sessions `query` names, read them, and write the samples that replay them."""
    from omk.sessions import find_sessions, read_session

    files = find_sessions(list(query.paths), project=query.project, since=query.since, env=env)
    sessions = [read_session(f) for f in files]
    if query.paths and query.project is not None:  # files named and a project: that project's sessions among them
        sessions = [s for s in sessions if _within(s.project, query.project)]
    notes = [w for s in sessions for w in s.warnings]
    notes += [f"{s.path}: skipped {', '.join(f'{n} {kind}' for kind, n in s.skipped)} (record types omk does not read)"
              for s in sessions if s.skipped]
    choice = SessionChoice(query.skill, query.limit, installed_skills(sessions, env, query.skill), query.since)
    return RecordedSessions(samples_from_sessions(sessions, mask, choice, lang), len(files), notes)


def _within(project: str | None, folder: Path) -> bool:
    """Whether a session's project (its `cwd`, `~` for the home folder) is `folder` or inside it."""
    if project is None:
        return False
    try:
        Path(project).expanduser().resolve().relative_to(folder.resolve())
    except (ValueError, OSError):
        return False
    return True


def installed_skills(sessions: Sequence[Session], env: Mapping[str, str], skill: str | None = None) -> frozenset[str]:
    """The skills a `not: true` check is written for: those the sessions list that are the
    user's own, not the CLI's. Codex marks its own (their root is `.system`, left out when the
    session is read); Claude Code does not, so a skill it lists counts when it fired in one of
    the sessions, was named with `--skill`, or has a folder in the project's `.claude/skills/`
    or the user's `~/.claude/skills/`."""
    names = {f.skill for s in sessions for r in s.requests for f in r.skills}
    names |= {skill} if skill else set()
    config = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME") or Path.home()) / ".claude")
    for session in sessions:
        if session.cli == "codex":
            names |= set(session.installed_skills)
            continue
        folders = [config / "skills"] + ([Path(session.project).expanduser() / ".claude" / "skills"] if session.project else [])
        names |= {n for n in session.installed_skills if any((f / n / "SKILL.md").is_file() for f in folders)}
    return frozenset(names)
