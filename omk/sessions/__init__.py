"""Claude Code and Codex sessions read from disk: `read_session` reads one file (the format is
detected per file) and `find_sessions` finds the session files to read.

Sessions are read, never changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from omk.sessions.model import AgentSession, Session, SessionRequest, SessionToolCall, SkillFiring

__all__ = [
    "AgentSession",
    "Session",
    "SessionRequest",
    "SessionToolCall",
    "SkillFiring",
    "find_sessions",
    "read_session",
]


def read_session(path: Path) -> Session:
    """One session file read into a `Session` (Claude Code or Codex, detected per file)."""
    from omk.sessions.reader import read_session_file

    return read_session_file(path)


def find_sessions(
    paths: Sequence[Path],
    *,
    project: Path | None,
    since: datetime | None,
    env: Mapping[str, str],
) -> list[Path]:
    """The session files under `paths` (files or folders); with no paths, the sessions of
    `project` (default: the current folder) from both CLIs' default locations."""
    from omk.sessions.finding import find_session_files

    return find_session_files(paths, project=project, since=since, env=env)
