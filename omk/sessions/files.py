"""Which agent CLI wrote a session file, and reading it with that CLI's reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.sessions import claude, codex
from omk.sessions.lines import read_lines
from omk.sessions.model import Session, SessionCli

CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def read_session_file(path: Path) -> Session:
    lines = read_lines(path)
    cli = detect(lines.records)
    reader = codex.read if cli == "codex" else claude.read
    return reader(path, lines.records, lines.warnings)


def detect(records: list[tuple[int, dict[str, Any]]]) -> SessionCli:
    """`codex` when the first record with a type is a Codex one, else `claude`."""
    for _, record in records[:50]:
        kind = record.get("type")
        if isinstance(kind, str):
            return "codex" if kind in CODEX_TYPES and "payload" in record else "claude"
    return "claude"
