"""What a model drafting samples is shown of a skill folder: SKILL.md (its front matter's `name` and
`description`, and its text) and the skill's other files, each cut to a bounded size.

A skill folder is untrusted input like a samples file: files are read through omk.io.safe_files
(regular files only, never a FIFO or a device, and never through a link leading out of the
folder), a file that is not UTF-8 text is left out, and what is read is capped per file and in
all, so a large folder cannot make a large prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from omk.core.errors import InputError
from omk.domain.skillset import SKILL_FILE
from omk.io.safe_files import escape_reason, open_regular

SKILL_MAX_BYTES = 48 * 1024  # of SKILL.md shown to the model
REFERENCE_MAX_BYTES = 16 * 1024  # of each other file
REFERENCES_MAX_BYTES = 64 * 1024  # of all other files together
REFERENCES_MAX_FILES = 20
CUT_NOTE = "\n[omk: the rest of this file is left out]"


class SkillFile(msgspec.Struct, frozen=True, gc=False):
    """One file of the skill as shown to the model: its path in the folder and its (cut) text."""

    path: str
    text: str
    cut: bool = False


@dataclass(slots=True)
class SkillSource:
    """The skill a model drafts from: its name (the folder's: what `skill_used` names), the front
    matter's name and description, SKILL.md and the reference files, and the files left out."""

    name: str
    folder: Path
    title: str
    description: str
    skill: SkillFile
    references: list[SkillFile] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # "path: why"

    def file_names(self) -> list[str]:
        return [self.skill.path] + [r.path for r in self.references]


def _read_capped(path: Path, cap: int) -> tuple[str, bool] | None:
    """The start of a text file (at most `cap` bytes) and whether it was cut; None if not UTF-8."""
    with open_regular(path) as f:
        raw = f.read(cap + 1)
    cut = len(raw) > cap
    raw = raw[:cap]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if not cut or exc.start < len(raw) - 3:  # a character split by the cut is not a reason
            return None
        text = raw[: exc.start].decode("utf-8-sig")
    return (text + CUT_NOTE if cut else text), cut


def front_matter(text: str) -> dict[str, str]:
    """The `key: value` lines of the front matter (`---` … `---` at the top), values unquoted.
    Only the plain scalars a skill's front matter holds are read; anything else is skipped."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "#")):
            found[key.strip()] = value.strip().strip("\"'")
    return found


def read_skill(folder: Path) -> SkillSource:
    """The skill in `folder`; InputError (one line) when it is no skill folder."""
    from omk.domain.skillset import skill_folder
    from omk.loader.discover import near_skill

    folder = skill_folder(folder)
    skill_md = folder / SKILL_FILE
    if not folder.exists():
        raise InputError(f"{folder}: no such skill folder{near_skill(folder)}")
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder; give a skill folder (one with {SKILL_FILE} in it)")
    if not skill_md.is_file():
        raise InputError(f"{folder}: not a skill folder: it has no {SKILL_FILE}")
    try:
        read = _read_capped(skill_md, SKILL_MAX_BYTES)
    except OSError as exc:
        raise InputError(f"{skill_md}: cannot read it: {exc.strerror or exc}") from None
    if read is None:
        raise InputError(f"{skill_md}: not UTF-8 text")
    text, cut = read
    if not text.strip():
        raise InputError(f"{skill_md}: the file is empty")
    name = folder.resolve().name
    if any(c.isspace() for c in name):
        raise InputError(f"{folder}: a skill is named after its folder, and {name!r} has a space in it; rename the folder")
    meta = front_matter(text)
    source = SkillSource(name, folder, meta.get("name", ""), meta.get("description", ""), SkillFile(SKILL_FILE, text, cut))
    _add_references(source)
    return source


def _add_references(source: SkillSource) -> None:
    """The folder's other files, in path order, while the caps allow."""
    folder, total = source.folder, 0
    paths = sorted(p for p in folder.rglob("*") if p.is_file() and p != folder / SKILL_FILE)
    for path in paths:
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue  # .git, editor files: not part of the skill
        why = _refused(path, folder, len(source.references), total)
        read = None
        if why is None:
            try:
                read = _read_capped(path, min(REFERENCE_MAX_BYTES, REFERENCES_MAX_BYTES - total))
            except OSError as exc:
                why = f"cannot read it: {exc.strerror or exc}"
            else:
                why = "not UTF-8 text" if read is None else None
        if why is not None or read is None:
            source.left_out.append(f"{rel}: {why}")
            continue
        source.references.append(SkillFile(rel, read[0], read[1]))
        total += len(read[0].encode("utf-8"))


def _refused(path: Path, folder: Path, count: int, total: int) -> str | None:
    if path.is_symlink() and escape_reason(path, [folder]) is not None:
        return "a link to a file outside the skill folder"
    if count >= REFERENCES_MAX_FILES:
        return f"more than {REFERENCES_MAX_FILES} reference files are not shown to the model"
    if total >= REFERENCES_MAX_BYTES:
        return f"the reference files shown already reach {REFERENCES_MAX_BYTES // 1024} KiB"
    return None
