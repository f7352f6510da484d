"""What a Claude Code or Codex session file says, read into plain records: one `Session` per
file, one `SessionRequest` per thing the user asked, the tool calls made while answering it
(each joined to its recorded output), the final answer, and the skills that fired.

Every text here has already been through the masker and the output caps (omk/sessions/reader.py);
nothing in these records is trusted: it is what a session file on disk said.
"""

from __future__ import annotations

from typing import Literal

import msgspec

SkillHow = Literal["skill_call", "skill_md_read", "codex_injection"]
SessionCli = Literal["claude", "codex"]


class SessionToolCall(msgspec.Struct, frozen=True, gc=False):
    """One tool call and its recorded output (None when the session holds no output for it)."""

    id: str
    name: str
    input: object
    output: str | None
    is_error: bool
    denied: bool


class SkillFiring(msgspec.Struct, frozen=True, gc=False):
    """A skill that fired while a request was answered, and how the session shows it."""

    skill: str
    how: SkillHow
    call_id: str | None


class SessionRequest(msgspec.Struct, frozen=True, gc=False):
    """One user request: its prompt, the calls made answering it, the final answer."""

    index: int
    prompt: str
    time: str | None
    tool_calls: tuple[SessionToolCall, ...]
    answer: str | None
    skills: tuple[SkillFiring, ...]


class AgentSession(msgspec.Struct, frozen=True, gc=False):
    """One session file. `skipped` counts the record types the reader did not know, by type;
    `warnings` name malformed lines as `file:line: what`. Also named `Session` here (the class
    name is its own: omk.targets.session has a `Session` of its own, a conversation's state)."""

    path: str
    cli: SessionCli
    session_id: str
    project: str | None
    started: str | None
    requests: tuple[SessionRequest, ...]
    installed_skills: tuple[str, ...]
    skipped: tuple[tuple[str, int], ...]
    warnings: tuple[str, ...]
    subagent: bool


Session = AgentSession
