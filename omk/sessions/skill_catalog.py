"""The skills whose firing `omk observe` looks at, with their descriptions: read from the folders a
user names (`--skills DIR`: a skill folder or a folder of skill folders), else from where Claude Code
and Codex install skills: each session project's `.claude/skills/`, `.codex/skills/` and
`.agents/skills/`, then the user's `~/.claude/skills/`, `$CODEX_HOME/skills/` (else
`~/.codex/skills/`) and `~/.agents/skills/`. A name found twice keeps its first place (the
project's copy before the user's).

A skill's description is its SKILL.md front matter's `description` (a folded or literal YAML block
included). SKILL.md is read by the file rules (a regular file, at most `SKILL_MAX_BYTES`); one that
cannot be read, or is not UTF-8, gives a skill with no description and a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from omk.domain.skillset import SKILL_FILE

SKILL_MAX_BYTES = 256 * 1024
INSTALL_FOLDERS = (".claude/skills", ".codex/skills", ".agents/skills")


class KnownSkill(msgspec.Struct, frozen=True, gc=False):
    """A skill with its description and where its SKILL.md is."""

    name: str
    description: str
    path: Path


def home_of(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def project_folder(project: str, env: Mapping[str, str]) -> Path:
    """A session's project folder as a path: the reader writes the home folder as `~`."""
    if project == "~" or project.startswith("~/"):
        return home_of(env) / project[2:]
    return Path(project)


def default_roots(projects: Iterable[str], env: Mapping[str, str]) -> list[Path]:
    """The folders skills are installed in, for these session projects and this user."""
    roots = [project_folder(p, env) / folder for p in dict.fromkeys(projects) if p for folder in INSTALL_FOLDERS]
    home = home_of(env)
    codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    return [*roots, home / ".claude" / "skills", codex / "skills", home / ".agents" / "skills"]


def _folders(root: Path) -> list[Path]:
    if (root / SKILL_FILE).is_file():
        return [root]
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / SKILL_FILE).is_file())
    except OSError:
        return []


def description_of(text: str) -> str:
    """The front matter's `description` (one line, or a `>` / `|` block), "" when there is none."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return ""
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), len(lines))
    import yaml

    try:
        meta: Any = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:  # not YAML (an unquoted colon, a stray bracket): the plain line, as Claude Code reads it
        found = next((line.partition(":")[2] for line in lines[1:end] if line.startswith("description:")), "")
        meta = {"description": found.strip().strip("\"'")}
    value = meta.get("description") if isinstance(meta, dict) else None
    return " ".join(value.split()) if isinstance(value, str) else ""


def read_catalog(roots: Sequence[Path], warnings: list[str]) -> dict[str, KnownSkill]:
    """The skills under `roots`, by name (first found wins); unreadable SKILL.md files are warned of."""
    from omk.io.safe_files import read_regular_bytes

    found: dict[str, KnownSkill] = {}
    for root in roots:
        for folder in _folders(root):
            if folder.name in found:
                continue
            path = folder / SKILL_FILE
            try:
                text = read_regular_bytes(path, SKILL_MAX_BYTES).decode("utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
                warnings.append(f"{path}: cannot read it: {reason}")
                text = ""
            found[folder.name] = KnownSkill(folder.name, description_of(text), path)
    return found
