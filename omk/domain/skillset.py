"""Skills: which ones a run installs, and which ones an agent's trace shows it invoked.

A run's skills come from omk.yaml's (or a variant's) `skill:` / `skills:`: one path or a list of
paths, each a skill folder (a folder with SKILL.md), a folder of skill folders (every sub-folder
with a SKILL.md, in name order), or a file (a skill as a system prompt, alone). A skill's name is
its folder's name (a file's: its name without the extension).

What counts as invoking skill NAME, for every agent target (the `skill_used` assertion and the
triggering report read traces through `fired`):

- a call of the `Skill` tool whose input names it (`skill`, or `command` / `name` as other
  runtimes write it): `NAME` itself, or `PLUGIN:NAME`, or `/NAME`;
- a call of the `Read` tool (or an alias: `read_file`, `file_read`) whose path ends in
  `NAME/SKILL.md`: an agent that loads the skill by reading its instructions;
- a shell call (`Bash`, as Claude Code and Codex name it) whose command reads a path ending in
  `skills/NAME/SKILL.md` (`cat`, `sed -n`…): Codex loads a skill that way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import ConfigError
from omk.domain.toolnames import same_tool
from omk.records import ToolCall

SKILL_FILE = "SKILL.md"
_SKILL_KEYS = ("skill", "command", "name")
_PATH_KEYS = ("file_path", "path", "filename")
_SHELL_READ = re.compile(r"skills/([^/\s'\"]+)/" + re.escape("SKILL.md") + r"(?![\w.])")


def skill_folder(given: Path) -> Path:
    """The skill folder a user named: the folder itself, or the folder of the SKILL.md named."""
    return given.parent if given.name == SKILL_FILE and given.is_file() else given


class SkillPath(msgspec.Struct, frozen=True, gc=False):
    """One skill a run installs: its name, where it is, and whether it is a folder."""

    name: str
    path: Path
    is_dir: bool


def _paths(value: Any, key: str) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return list(value)
    raise ConfigError(f"omk.yaml {key}: must be a path or a non-empty list of paths")


def read_skill_paths(value: Any, key: str = "skill") -> list[SkillPath]:
    """The skills `value` (a path or a list of paths, already absolute or relative to the working
    folder) installs, in order; a bad value is a ConfigError naming `key`."""
    found: list[SkillPath] = []
    for given in _paths(value, key):
        path = Path(given)
        if path.is_dir() and (path / SKILL_FILE).is_file():
            found.append(SkillPath(path.name, path, True))
        elif path.is_dir():
            inner = sorted(p for p in path.iterdir() if p.is_dir() and (p / SKILL_FILE).is_file())
            if not inner:
                raise ConfigError(f"omk.yaml {key}: {path} is a folder without a SKILL.md and without skill folders in it")
            found += [SkillPath(p.name, p, True) for p in inner]
        elif path.is_file():
            found.append(SkillPath(path.stem, path, False))
        else:
            raise ConfigError(f"omk.yaml {key}: file not found: {path}")
    names = [s.name for s in found]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"omk.yaml {key}: two skills are named {repeated[0]!r}; each installs as .claude/skills/<name>/")
    if len(found) > 1 and not all(s.is_dir for s in found):
        raise ConfigError(f"omk.yaml {key}: a skill file goes into the system prompt alone; several skills must be folders with SKILL.md")
    return found


def configured_skills(extra: Mapping[str, Any]) -> list[SkillPath]:
    """The skills of a run's settings (`skill:` or `skills:`), none when it names none."""
    if extra.get("skill") is not None and extra.get("skills") is not None:
        raise ConfigError("omk.yaml: set either `skill` or `skills`, not both")
    for key in ("skill", "skills"):
        if extra.get(key) is not None:
            return read_skill_paths(extra[key], key)
    return []


def _named(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    name = value.strip().lstrip("/").split()[0] if value.strip().lstrip("/") else ""
    return name.rsplit(":", 1)[-1] or None


def invoked_skill(call: ToolCall) -> str | None:
    """The skill a tool call invokes (see the module's text), None when it invokes none."""
    data = call.input if isinstance(call.input, dict) else {}
    if same_tool(call.tool, "Skill"):
        return next((n for k in _SKILL_KEYS if (n := _named(data.get(k))) is not None), None)
    if same_tool(call.tool, "Read"):
        for key in _PATH_KEYS:
            path = data.get(key)
            if isinstance(path, str):
                parts = path.replace("\\", "/").rstrip("/").split("/")
                if len(parts) >= 2 and parts[-1] == SKILL_FILE and parts[-2]:
                    return parts[-2]
    if same_tool(call.tool, "Bash") and isinstance(data.get("command"), str):
        found = _SHELL_READ.search(data["command"].replace("\\", "/"))
        return found.group(1) if found else None
    return None


def fired(calls: Iterable[ToolCall]) -> Counter[str]:
    """How many times each skill was invoked in these calls, in the order they first were."""
    return Counter(name for call in calls if (name := invoked_skill(call)) is not None)

