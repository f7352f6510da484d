"""One session file read into a `Session`: the format is detected from its records (Codex's
lines are `{timestamp, type, payload}`; Claude Code's carry `type` and `message`), then read by
omk.sessions.claude or omk.sessions.codex through the shared `RequestBuilder`.

Every text kept is masked (the secrets this machine knows, keys and tokens by their shape, and
the user's home folder as `~`); none is longer than a line may be (omk.sessions.lines), the
size a mock's output may have.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.core.secrets import REDACTED, Masker
from omk.sessions.model import Session, SessionCli, SessionRequest, SessionToolCall, SkillFiring, SkillHow

# Keys and tokens in the shapes the common services give them, masked even when this machine
# does not know them (a session may hold a key the user pasted months ago).
KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[A-Z0-9]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[A-Za-z0-9_-]{30,}|glpat-[A-Za-z0-9_-]{20,})"
    r"|(?<=Bearer )[A-Za-z0-9._~+/-]{20,}=*"
)
SKILL_FOLDER = re.compile(r"[^\s/\\\x00-\x1f]{1,200}")  # what a skill's folder name may hold
# `…/skills/NAME/SKILL.md` in a path or a command: a skill's instructions being read.
SKILL_MD = re.compile(r"skills/([A-Za-z0-9_.:-]+)/SKILL\.md")


def home_as_tilde(value: str, home: str | None = None) -> str:
    """`value` with the user's home folder (`$HOME`) written `~`: `/home/me/app` is `~/app`, and
    `/home/meg` stays as it is."""
    home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
    if len(home) < 2 or home not in value:
        return value
    return re.sub(re.escape(home) + r"(?![\w.-])", "~", value)


def text(value: Any) -> str:
    """A string as it is; a list of content blocks as the text of its `text` blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [b.get("text") for b in value if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(p for p in parts if p)
    return ""


def skill_name(raw: Any) -> str | None:
    """A skill's name from a `Skill` call's argument: `plugin:skill` is `skill`, `/skill` too;
    None for what cannot be a skill's folder name (a `/`, a `\\`, a control character)."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    name = raw.strip().lstrip("/").split()[0].rsplit(":", 1)[-1]
    return name if SKILL_FOLDER.fullmatch(name) else None


@dataclass(slots=True)
class _Open:
    """A request being read."""

    prompt: str
    time: str | None
    calls: list[SessionToolCall] = field(default_factory=list)
    answer: str | None = None
    answer_id: str | None = None
    skills: list[SkillFiring] = field(default_factory=list)


@dataclass(slots=True)
class RequestBuilder:
    """What both readers build: requests with their calls (joined to their outputs by id),
    answers and skill firings, and the session's facts."""

    path: Path
    cli: SessionCli
    warnings: list[str]
    session_id: str = ""
    project: str | None = None
    started: str | None = None
    subagent: bool = False
    installed: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    done: list[_Open] = field(default_factory=list)
    current: _Open | None = None
    outputs: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)
    home: str = field(default_factory=lambda: os.path.expanduser("~"))
    masker: Masker = field(default_factory=Masker.for_run)

    def clean(self, value: str) -> str:
        """A text kept: masked. No cut is needed: a line is at most MAX_LINE_BYTES, the size a
        mock's output may have, so no text in it is longer."""
        return self.mask(value)

    def mask(self, value: str) -> str:
        return home_as_tilde(KEY_SHAPES.sub(REDACTED, self.masker(value)), self.home)

    def mask_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            return {str(k): self.mask_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.mask_value(v) for v in value]
        return value

    def begin(self, prompt: str, time: str | None) -> None:
        self.finish()
        self.current = _Open(self.clean(prompt), time if isinstance(time, str) else None)

    def finish(self) -> None:
        if self.current is not None:
            self.done.append(self.current)
            self.current = None

    def answer(self, said: str, line: int, message_id: str | None = None) -> None:
        """The request's answer so far: the latest message's text (a message spread over several
        lines, one `message_id`, is joined)."""
        if self.current is None:
            self.warnings.append(f"{self.path}:{line}: an answer before any request, left out")
            return
        if message_id is not None and message_id == self.current.answer_id and self.current.answer:
            said = f"{self.current.answer}\n{said}"
        self.current.answer, self.current.answer_id = self.clean(said), message_id

    def call(self, call_id: str, name: str, call_input: Any, line: int) -> None:
        from omk.domain.toolnames import name_problem

        if self.current is None:
            self.warnings.append(f"{self.path}:{line}: a tool call before any request, left out")
            return
        why = "'*' is no tool's name" if name == "*" else name_problem(name)
        if why is not None:
            self.warnings.append(f"{self.path}:{line}: a tool call left out: {' '.join(self.mask(why).split())}")
            return
        call_input = self.mask_value(call_input)
        self.current.calls.append(SessionToolCall(call_id, name, call_input, None, False, False))
        for name_of, how in self._skills_of(name, call_input):
            self.fired(name_of, how, call_id)

    def _skills_of(self, name: str, call_input: Any) -> list[tuple[str, SkillHow]]:
        if name == "Skill" and isinstance(call_input, dict):
            found = skill_name(call_input.get("skill") or call_input.get("command"))
            return [(found, "skill_call")] if found else []
        texts = [v for v in (call_input.values() if isinstance(call_input, dict) else [call_input]) if isinstance(v, str)]
        return [(m.group(1).rsplit(":", 1)[-1], "skill_md_read") for t in texts for m in SKILL_MD.finditer(t)]

    def fired(self, skill: str, how: SkillHow, call_id: str | None) -> None:
        if self.current is not None and skill_name(skill) == skill and all(s.skill != skill for s in self.current.skills):
            self.current.skills.append(SkillFiring(skill, how, call_id))

    def output(self, call_id: str, said: str, is_error: bool, denied: bool) -> None:
        self.outputs[call_id] = (self.clean(said), is_error, denied)

    def session(self) -> Session:
        self.finish()
        requests = tuple(self._request(i, r) for i, r in enumerate(self.done))
        return Session(
            path=str(self.path), cli=self.cli, session_id=self.session_id or self.path.stem, project=self.project,
            started=self.started, requests=requests, installed_skills=tuple(dict.fromkeys(self.installed)),
            skipped=tuple(sorted(self.skipped.items())), warnings=tuple(self.warnings), subagent=self.subagent,
        )

    def _request(self, index: int, done: _Open) -> SessionRequest:
        calls = []
        for c in done.calls:
            said, is_error, denied = self.outputs.get(c.id, (None, False, False))
            calls.append(SessionToolCall(c.id, c.name, c.input, said, is_error, denied))
        return SessionRequest(index, done.prompt, done.time, tuple(calls), done.answer, tuple(done.skills))

