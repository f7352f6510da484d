"""`omk eval SAMPLES --ablate SKILL_DIR`: what each part of a skill is worth.

An ablation is an ordinary experiment (omk/engine/experiment.py) whose control is the whole
skill and whose treatments are the skill without one part each: each section of SKILL.md (a
Markdown heading and its text up to the next heading of any level; the front matter and any text
before the first heading always stay) and, for the agent targets that receive them (`claude:`,
`codex:`), each reference file (every other file in the skill folder). API and `cmd:` targets get
SKILL.md only, so their parts are its sections. Each ablated copy is written once into
`.omk/ablation/<digest>/<variant>/<skill>/` (the digest is of the skill's files and parts, so a
resume or another shard finds the same copies at the same paths; a dry run writes into a temporary
folder), under the skill's own folder name so the agent sees the same skill.

The paired comparison of each treatment with the control gives each part's contribution: the
composite lost when it is removed (control minus treatment), with its interval. The ranking
(`experiment.ablation`, omk/records/experiment_block.py `Ablation`) adds what each part costs in
tokens (omk's word tokenizer) and the change of the skill's trigger rate when samples carry
`skill_used`; a part whose removal's whole interval lies within ±trivial is a candidate to cut.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import ConfigError
from omk.domain.skillset import SKILL_FILE
from omk.engine.options import EvalOptions
from omk.engine.variants import Variant
from omk.io.safe_files import copy_confined, file_sha256, read_regular_bytes, regular_files, sample_file_cap
from omk.records.experiment_block import Ablation, AblationPart, ExperimentBlock
from omk.records.wire import convert, plain

if TYPE_CHECKING:
    from omk.settings.config import ConfigFile

HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
REFERENCE_TARGETS = ("claude", "codex")  # agent CLIs that install the whole skill folder
CONTROL = "whole-skill"
FOLDER = "ablation"
KEEP_DAYS = 14  # copies no run has used for this long are removed when another ablation starts
DIGEST = re.compile(r"[0-9a-f]{16}")


class Section(msgspec.Struct, frozen=True, gc=False):
    """One section of SKILL.md: its heading (without the #s), its level, and its text (the
    heading line through the line before the next heading)."""

    title: str
    level: int
    text: str


class SkillText(msgspec.Struct, frozen=True, gc=False):
    """SKILL.md cut into parts: the front matter and the text before the first heading (always
    kept), then each section in order; joined back, they are the file."""

    front: str
    lead: str
    sections: tuple[Section, ...]

    def without(self, index: int) -> str:
        return self.front + self.lead + "".join(s.text for i, s in enumerate(self.sections) if i != index)


def split_skill(text: str) -> SkillText:
    """The front matter (`---` … `---` at the top), the lead, and the sections; a `#` line inside
    a fenced code block is not a heading."""
    lines = text.splitlines(keepends=True)
    front_end = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                front_end = i + 1
                break
    starts: list[tuple[int, int, str]] = []
    fence: str | None = None
    for i in range(front_end, len(lines)):
        opened = FENCE.match(lines[i])
        if opened and (fence is None or opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)):
            fence = opened.group(1) if fence is None else None
            continue
        heading = HEADING.match(lines[i].rstrip("\r\n")) if fence is None else None
        if heading:
            starts.append((i, len(heading.group(1)), (heading.group(2) or "").strip()))
    ends = [s[0] for s in starts[1:]] + ([len(lines)] if starts else [])
    sections = tuple(Section(title or f"(untitled level-{level} heading)", level, "".join(lines[start:end])) for (start, level, title), end in zip(starts, ends, strict=True))
    first = starts[0][0] if starts else len(lines)
    return SkillText("".join(lines[:front_end]), "".join(lines[front_end:first]), sections)


class Part(msgspec.Struct, frozen=True, gc=False):
    """One part a treatment removes: the variant that removes it, what it is, what it costs."""

    variant: str
    kind: str  # "section" or "reference"
    name: str  # the section's heading, or the reference file's path in the skill folder
    tokens: int
    level: int | None = None  # a section's heading level


class AblationPlan(msgspec.Struct, frozen=True, gc=False):
    """The skill ablated and its parts, in the order they appear."""

    skill: str
    path: str
    parts: tuple[Part, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data

    @classmethod
    def read(cls, data: Any, origin: str, at: str = "ablation") -> AblationPlan:
        """The plan as experiment.json records it (at `at` of `origin`), each part checked: a part
        of the wrong shape is an InputError naming it (`ablation.parts[2].tokens: expected an integer, found 'x'`)."""
        return convert(data, cls, origin, at, nulls=True)

    def ranking(self, block: ExperimentBlock, trivial: float) -> Ablation:
        """Each part's contribution from the paired comparison of its treatment with the control,
        largest first (a part with no comparable samples last)."""
        rows = [_ranked(part, self.skill, block, trivial) for part in self.parts]
        rows.sort(key=lambda r: (r.contribution is None, -(r.contribution or 0.0)))
        return Ablation(self.skill, trivial, tuple(rows))


def _ranked(part: Part, skill: str, block: ExperimentBlock, trivial: float) -> AblationPart:
    comp = next((c for c in block.comparisons if c.treatment == part.variant), None)
    delta = comp.composite if comp is not None else None
    mean = _lost(delta.mean) if delta is not None else None
    low = _lost(delta.ci_high) if delta is not None else None
    high = _lost(delta.ci_low) if delta is not None else None
    verdict = block.pair_verdict(comp) if comp is not None else None
    change = {t.rate: t.change for t in block.triggering if (t.treatment, t.skill) == (part.variant, skill) and t.change is not None}
    return AblationPart(
        variant=part.variant,
        kind=part.kind,
        name=part.name,
        tokens=part.tokens,
        contribution=mean,
        ci_low=low,
        ci_high=high,
        level=str(verdict.level) if verdict is not None else None,
        candidate=low is not None and high is not None and -trivial <= low and high <= trivial,
        trigger_change=change.get("recall"),
        samples=delta.n if delta is not None else 0,
        false_trigger_change=change.get("false_trigger_rate"),
    )


def _lost(change: float | None) -> float | None:
    """The composite lost for a change of the treatment against the control (no `-0.0`)."""
    return None if change is None else 0.0 - float(change) + 0.0


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w.-]+", "-", text.lower()).strip("-._")
    return re.sub(r"-{2,}", "-", slug)[:48].rstrip("-._")


def _names(labels: list[str]) -> list[str]:
    """`without-<label>`, unique, safe as a folder name."""
    names: list[str] = []
    for n, label in enumerate(labels, 1):
        base = f"without-{_slug(label) or f'part-{n}'}"
        name, k = base, 1
        while name in names or name == CONTROL:
            k += 1
            name = f"{base}-{k}"
        names.append(name)
    return names


def plan_ablation(skill: Path, target_kind: str) -> tuple[AblationPlan, SkillText, list[Path]]:
    """The parts of the skill folder `skill`: SKILL.md's sections, then (for targets that receive
    them) its reference files."""
    from omk.domain.skillset import skill_folder
    from omk.engine.estimate import count_tokens
    from omk.loader.discover import near_skill

    skill = skill_folder(skill)
    if not (skill / SKILL_FILE).is_file():
        if not skill.exists():
            raise ConfigError(f"--ablate {skill}: no such skill folder{near_skill(skill)}")
        raise ConfigError(f"--ablate {skill}: not a skill folder (no {SKILL_FILE} in it)")
    text = split_skill(_read_skill_text(skill / SKILL_FILE))
    if not text.sections:
        raise ConfigError(f"--ablate {skill}: {SKILL_FILE} has no Markdown heading, so no section to remove")
    references: list[Path] = []
    if target_kind in REFERENCE_TARGETS:
        references = [p for p in regular_files(skill) if p != skill / SKILL_FILE and not p.is_symlink()]
    labels = [s.title for s in text.sections] + [str(p.relative_to(skill).as_posix()) for p in references]
    names = _names(labels)
    parts = [Part(names[i], "section", s.title, count_tokens(s.text), s.level) for i, s in enumerate(text.sections)]
    for j, path in enumerate(references, len(text.sections)):
        body = _read_skill_text(path, errors="replace")
        parts.append(Part(names[j], "reference", labels[j], count_tokens(body)))
    return AblationPlan(skill.name, str(skill), tuple(parts)), text, references


def write_copies(plan: AblationPlan, text: SkillText, references: list[Path], root: Path, others: Sequence[str] = ()) -> list[Variant]:
    """Each treatment's copy of the skill under `root`, and every variant (the control first);
    `others` are the skills the run installs beside it (a library), which every variant keeps."""
    source = Path(plan.path)

    def installed(path: Path) -> str | tuple[str, ...]:
        return (*others, str(path)) if others else str(path)

    variants = [Variant(CONTROL, "control", skill=installed(source))]
    for i, part in enumerate(plan.parts):
        copy = root / part.variant / plan.skill
        if not copy.is_dir():  # else written by an earlier run of the same skill: the same content
            root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
            copy_confined(source, staging / plan.skill, source)  # only the skill's own regular files
            if part.kind == "section":
                (staging / plan.skill / SKILL_FILE).write_text(text.without(i), encoding="utf-8")
            else:
                (staging / plan.skill / references[i - len(text.sections)].relative_to(source)).unlink()
            copy.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # another shard finished the same copy first
                (staging / plan.skill).rename(copy)
            shutil.rmtree(staging, ignore_errors=True)
        variants.append(Variant(part.variant, "treatment", skill=installed(copy)))
    return variants


def copies_digest(skill: Path, plan: AblationPlan) -> str:
    """The copies' folder name: the skill's files and its parts. The same skill ablated again (a
    resume, another shard of the run) finds the same copies at the same paths, so every shard
    shares one plan."""
    import hashlib

    h = hashlib.sha256(json.dumps(plan.to_json()["parts"], sort_keys=True).encode())
    for path in regular_files(skill):  # never a FIFO or a link out; each file read in pieces
        try:
            content = file_sha256(path)
        except OSError as exc:
            raise ConfigError(f"--ablate: cannot read {path}: {exc.strerror or exc}") from None
        h.update(str(path.relative_to(skill).as_posix()).encode() + b"\0" + content.encode() + b"\0")
    return h.hexdigest()[:16]


def _read_skill_text(path: Path, errors: str = "strict") -> str:
    """A file of the skill being ablated, by the file rules; a one-line ConfigError if it cannot be read."""
    try:
        return read_regular_bytes(path, sample_file_cap()).decode("utf-8-sig", errors)
    except OSError as exc:
        raise ConfigError(f"--ablate: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--ablate: cannot read {path}: {exc}") from None


def target_kind(options: EvalOptions, cwd: Path, config: ConfigFile | None = None) -> str:
    """The run's target kind (`claude`, `cmd`, …): the command line's, else omk.yaml's."""
    from omk.engine.inputs import sample_paths
    from omk.settings.config import ConfigFile

    target = options.target
    if not target:
        config = config if config is not None else ConfigFile.find(sample_paths(options, cwd), cwd)
        target = config.data.get("target")
    return str(target or "").partition(":")[0]


# ---------------------------------------------------------------- keeping the copies


def mark_used(root: Path) -> None:
    """A run uses the copies in `root` (a new ablation or a resume): its time is the folder's."""
    with contextlib.suppress(OSError):
        os.utime(root)


def prune_copies(folder: Path, keep: Path, now: float | None = None) -> list[Path]:
    """Remove the copies in `folder` (`.omk/ablation/`) that no run has used for `KEEP_DAYS`
    days, except `keep`; only folders named like a digest, never through a symbolic link. A run
    that still needs removed copies gets them back on `--resume` (`restore_copies`)."""
    limit = (time.time() if now is None else now) - KEEP_DAYS * 86400
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry == keep or not DIGEST.fullmatch(entry.name) or entry.is_symlink() or not entry.is_dir():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < limit:
                shutil.rmtree(entry)
                removed.append(entry)
    return removed


def restore_copies(plan: AblationPlan, variants: Sequence[Variant]) -> None:
    """Before a resume: each treatment's copy of the skill is where the run recorded it, written
    again from the skill when it was removed (pruned, or `.omk` deleted) and the skill has not
    changed since; a changed skill cannot give the same copies back, and the resume stops."""
    copies = [Path(v.skill) for v in variants if v.role == "treatment" and isinstance(v.skill, str)]
    if not copies:
        return
    root = copies[0].parents[1]  # .omk/ablation/<digest>/<variant>/<skill>
    if any(not (c / SKILL_FILE).is_file() for c in copies):
        source = Path(plan.path)
        if not (source / SKILL_FILE).is_file() or copies_digest(source, plan) != root.name:
            raise ConfigError(
                f"--resume: the ablated copies of {plan.path} are gone from {root} and the skill has changed since the run began; "
                "start a new ablation (omk eval SAMPLES --ablate SKILL_DIR)"
            )
        text = split_skill(_read_skill_text(source / SKILL_FILE))
        references = [source / p.name for p in plan.parts if p.kind == "reference"]
        write_copies(plan, text, references, root)
    mark_used(root)
