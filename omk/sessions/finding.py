"""Which session files to read: the files named, the session files under the folders named, or
(nothing named) the current project's sessions where both CLIs keep them:

- Claude Code: `$CLAUDE_CONFIG_DIR/projects/<project>/` or `~/.claude/projects/<project>/`,
  where `<project>` is the project's absolute path with every character other than a letter,
  a digit or `-` written `-` (`/home/me/app` is `-home-me-app`); a session's subagents are in
  `<session>/subagents/`.
- Codex: `$CODEX_HOME/sessions/` or `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, all
  projects together: a file is kept when its `session_meta` names the project's folder (or one
  inside it) as `cwd`.

`since` keeps the files changed at or after it (a file last changed before it holds no request
made since); which requests in them count is `made_before`'s to say. Nothing here reads more
than a file's first line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from omk.core.errors import InputError
from omk.io.safe_files import open_regular, special_reason

_FIRST_LINE_BYTES = 1024 * 1024


def since_time(text: str | None, flag: str = "--since") -> datetime | None:
    """`--since` of `omk observe` and `omk sample --from-session`: a date (midnight UTC) or an
    ISO 8601 time (UTC when it names no zone)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{flag}: expected a date (YYYY-MM-DD) or an ISO 8601 time, got {text[:40]!r}") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def made_before(value: object, since: datetime | None) -> bool:
    """Whether a request's time (an ISO text as the sessions write it) is known and earlier than
    `since`; a request of unknown time is kept."""
    if since is None or value is None:
        return False
    when = value
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return False
    if not isinstance(when, datetime):
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when < since if since.tzinfo is not None else when.replace(tzinfo=None) < since


def find_session_files(
    paths: Sequence[Path], *, project: Path | None, since: datetime | None, env: Mapping[str, str]
) -> list[Path]:
    if paths:
        found = [f for p in paths for f in (_under(p) if p.is_dir() else [p])]
    else:
        where = (project or Path.cwd()).resolve()
        found = _claude_files(where, env) + _codex_files(where, env)
    return [f for f in dict.fromkeys(found) if _recent(f, since)]


def claude_folder(project: Path, env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps the sessions of `project`."""
    config = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
    return Path(config) / "projects" / re.sub(r"[^A-Za-z0-9-]", "-", str(project))


def codex_folder(env: Mapping[str, str]) -> Path:
    return Path(env.get("CODEX_HOME") or str(Path(env.get("HOME") or Path.home()) / ".codex")) / "sessions"


def _under(folder: Path) -> list[Path]:
    """The `.jsonl` files under `folder`, sorted, links not followed."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        found += [Path(root, f) for f in sorted(files) if f.endswith(".jsonl") and not Path(root, f).is_symlink()]
    return found


def _claude_files(project: Path, env: Mapping[str, str]) -> list[Path]:
    folder = claude_folder(project, env)
    return _under(folder) if folder.is_dir() else []


def _codex_files(project: Path, env: Mapping[str, str]) -> list[Path]:
    folder = codex_folder(env)
    if not folder.is_dir():
        return []
    return [f for f in _under(folder) if f.name.startswith("rollout-") and _in_project(_codex_cwd(f), project)]


def _codex_cwd(path: Path) -> str | None:
    """The `cwd` of a Codex session's first line (`session_meta`), or None."""
    if special_reason(path) is not None:
        return None
    try:
        with open_regular(path) as handle:
            first = json.loads(handle.readline(_FIRST_LINE_BYTES).decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None
    payload = first.get("payload") if isinstance(first, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None


def _in_project(cwd: str | None, project: Path) -> bool:
    if cwd is None:
        return False
    try:
        Path(cwd).resolve().relative_to(project)
    except (ValueError, OSError):
        return False
    return True


def _recent(path: Path, since: datetime | None) -> bool:
    if since is None:
        return True
    try:
        changed = path.stat().st_mtime
    except OSError:
        return False
    return changed >= since.timestamp()
