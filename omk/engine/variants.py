"""Experiment variants: what differs between the arms of an experiment, and nothing else.

A variant names its role (`control` or `treatment`) and what it changes: `system` (text), `skill`
(a file, a folder with SKILL.md, a folder of skill folders, or a list of folders; `skills` is the
same), `baseline` (neither: no artifact at all), `target`, `model`
(the target's model, same kind) or `params` (merged into the provider's request parameters).
Everything it does not name comes from omk.yaml and the command line, the same for every arm.

Declared in omk.yaml:

    variants:
      - { name: without, role: control, baseline: true }
      - { name: with-skill, role: treatment, skill: skills/refunds }

or on the command line, as the original omk takes them: `--control SPEC --treatment SPEC[,SPEC…]`
with SPEC `baseline`, `skill:PATH` (or a bare path: a skill file or folder, or a folder of skill
folders, or a NAME found as skills/NAME.md or
skills/NAME/SKILL.md), `system:TEXT`, `model:NAME` or `target:KIND:ARG`, each optionally
`LABEL=SPEC` to name it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import ConfigError, Problem
from omk.io.safe_files import read_text_file
from omk.settings.config import Settings

ROLES = ("control", "treatment")
FIELDS = ("name", "role", "baseline", "system", "skill", "skills", "target", "model", "params")
NAME = re.compile(r"^[^\W_][\w.-]{0,63}$")  # letters (any script), digits, '.', '_', '-': a folder name


class Variant(msgspec.Struct, frozen=True, gc=False):
    name: str
    role: str = "treatment"
    baseline: bool = False
    system: str | None = None
    skill: str | tuple[str, ...] | None = None  # an absolute path, or several (skills installed together)
    target: str | None = None
    model: str | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """What the report records: the variant's own choices, never a secret."""
        data: dict[str, Any] = {"name": self.name, "role": self.role}
        for key in ("baseline", "system", "skill", "target", "model"):
            if getattr(self, key):
                value = getattr(self, key)
                data[key] = list(value) if isinstance(value, tuple) else value
        if self.params:
            data["params"] = self.params
        return data

    def apply(self, settings: Settings) -> None:
        """Change `settings` into this variant's: only what the variant names."""
        if self.baseline or self.system is not None or self.skill is not None:
            settings.system = settings.skill = settings.skills = None
        if self.system is not None:
            settings.system = self.system
        if self.skill is not None:
            settings.skill = list(self.skill) if isinstance(self.skill, tuple) else self.skill
        if self.target is not None:
            settings.target, settings.target_base = self.target, settings.cwd
        if self.model is not None:
            kind = (settings.target or "").partition(":")[0]
            if not kind or kind in ("cmd", "replay"):
                raise ConfigError(f"variant {self.name}: model: needs an openai:, anthropic: or claude: target (got {settings.target!r})")
            settings.target = f"{kind}:{self.model}"
        if self.params:
            self._apply_params(settings)

    def _apply_params(self, settings: Settings) -> None:
        kind = (settings.target or "").partition(":")[0]
        if kind not in ("openai", "anthropic"):
            raise ConfigError(f"variant {self.name}: params: apply to openai: and anthropic: targets (got {settings.target!r})")
        block = dict(getattr(settings, kind) or {})
        block["params"] = {**(block.get("params") or {}), **self.params}
        setattr(settings, kind, block)


def check_roles(variants: list[Variant], where: str) -> list[Variant]:
    """One control, unique names; the control first."""
    names = [v.name for v in variants]
    unsafe = [n for n in names if not NAME.match(n)]
    if unsafe:  # each variant's run folder is named after it
        raise ConfigError(f"{where}: variant name {unsafe[0]!r}: use letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"{where}: variant names must be unique; repeated: {', '.join(repeated)}")
    controls = [v for v in variants if v.role == "control"]
    if len(controls) != 1:
        raise ConfigError(f"{where}: an experiment needs exactly one control variant, found {len(controls)}")
    if len(variants) < 2:
        raise ConfigError(f"{where}: an experiment needs a control and at least one treatment")
    return [*controls, *(v for v in variants if v is not controls[0])]


# --- omk.yaml ---------------------------------------------------------------------------------


def from_config(path: Path, raw: Any, node: Any = None) -> list[Variant]:
    """The `variants:` list of omk.yaml, every problem reported with its line. `node`: omk.yaml's
    YAML node tree, already read (None: read here)."""
    lines = _item_lines(path, node)
    if not isinstance(raw, list) or not raw:
        raise ConfigError([Problem(str(path), lines.get(-1), "", "variants", "must be a non-empty list of variants")])
    problems: list[Problem] = []
    variants = []
    for i, item in enumerate(raw):
        found = _check_item(item)
        if found:
            problems += [Problem(str(path), lines.get(i), f"variants[{i}]", f, m) for f, m in found]
            continue
        variants.append(_build(item, path.parent))
    if problems:
        raise ConfigError(problems)
    return check_roles(variants, f"{path}: variants")


def _skill_paths(value: Any, folder: Path) -> str | tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(str((folder / v).resolve()) for v in value)
    return str((folder / value).resolve()) if value else None


def _build(item: dict[str, Any], folder: Path) -> Variant:
    return Variant(
        name=item["name"],
        role=item["role"],
        baseline=bool(item.get("baseline")),
        system=item.get("system"),
        skill=_skill_paths(item.get("skill", item.get("skills")), folder),
        target=item.get("target"),
        model=item.get("model"),
        params=dict(item.get("params") or {}),
    )


def parse_item(item: Any, folder: Path) -> Variant:
    """One variant written as an omk.yaml entry (a mapping); a relative skill resolves in `folder`."""
    found = _check_item(item)
    if found:
        raise ConfigError([Problem("variants", None, "", f, m) for f, m in found])
    return _build(item, folder)


def _check_item(item: Any) -> list[tuple[str, str]]:
    if not isinstance(item, dict):
        return [("", "must be a mapping with name and role")]
    found = [(k, f"unknown field; a variant takes {', '.join(FIELDS)}") for k in item if k not in FIELDS]
    name, role = item.get("name"), item.get("role")
    if not isinstance(name, str) or not NAME.match(name):
        found.append(("name", "required: letters, digits, '.', '_' or '-' (at most 64)"))
    if role not in ROLES:
        found.append(("role", "required: control or treatment"))
    for key in ("system", "target", "model"):
        if key in item and not (isinstance(item[key], str) and item[key].strip()):
            found.append((key, "must be non-empty text"))
    for key in ("skill", "skills"):
        value = item.get(key)
        if key in item and not (isinstance(value, str) and value.strip()) and not _path_list(value):
            found.append((key, "must be a path or a non-empty list of paths"))
    if "skill" in item and "skills" in item:
        found.append(("skills", "set either skill or skills, not both"))
    if "params" in item and not isinstance(item["params"], dict):
        found.append(("params", "must be a mapping"))
    if item.get("baseline") and ("system" in item or "skill" in item or "skills" in item):
        found.append(("baseline", "a baseline has no system or skill"))
    if "system" in item and ("skill" in item or "skills" in item):
        found.append(("skill", "set either system (text) or skill (a file or folder), not both"))
    return found


def _path_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v.strip() for v in value)


def _item_lines(path: Path, node: Any = None) -> dict[int, int]:
    """Line of each `variants` item (index -1: the key itself), from the YAML node tree."""
    import yaml

    if node is None:
        try:
            node = yaml.compose(read_text_file(path), Loader=yaml.SafeLoader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    for key, value in node.value:
        if key.value == "variants":
            found = {-1: key.start_mark.line + 1}
            if isinstance(value, yaml.SequenceNode):
                found.update({i: item.start_mark.line + 1 for i, item in enumerate(value.value)})
            return found
    return {}


# --- the command line -------------------------------------------------------------------------


def from_cli(control: str, treatments: list[str], cwd: Path) -> list[Variant]:
    specs = [(control, "control")] + [(t, "treatment") for spec in treatments for t in spec.split(",") if t.strip()]
    variants = [parse_spec(spec.strip(), role, cwd) for spec, role in specs]
    return check_roles(variants, "--control/--treatment")


def parse_spec(spec: str, role: str, cwd: Path) -> Variant:
    label, sep, rest = spec.partition("=")
    if not sep or ":" in label or "/" in label:
        label, rest = "", spec
    flag = f"--{role}"
    if rest == "baseline":
        return Variant(label or "baseline", role, baseline=True)
    kind, sep, arg = rest.partition(":")
    if sep and kind in ("skill", "system", "model", "target"):
        if not arg.strip():
            raise ConfigError(f"{flag} {spec!r}: {kind}: needs a value")
        if kind == "skill":
            return _skill_variant(label, role, Path(arg), cwd, flag, spec)
        if kind == "system":
            return Variant(label or "system", role, system=arg)
        if kind == "model":
            return Variant(label or arg, role, model=arg)
        return Variant(label or target_name(arg), role, target=arg)
    return _skill_variant(label, role, Path(rest), cwd, flag, spec)


def target_name(spec: str) -> str:
    """A variant name from a target spec, safe as a folder name: the kind, then each word of the
    argument, a path by its last part (`cmd:python agents/v2.py` → `cmd-python-v2.py`,
    `replay:runs/a.jsonl` → `replay-a.jsonl`)."""
    import shlex

    kind, _, arg = spec.partition(":")
    try:
        words = shlex.split(arg)
    except ValueError:
        words = arg.split()
    parts = [kind, *(w.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] for w in words)]
    name = re.sub(r"[^\w.-]+", "-", "-".join(p for p in parts if p)).strip("-._")
    name = re.sub(r"-{2,}", "-", name)[:64].rstrip("-._")
    return name if NAME.match(name) else "target"


def target_variants(specs: list[str]) -> list[Variant]:
    """`--target A --target B …`: A the control, the others treatments, each differing by target.
    Names come from the specs (`target_name`); a repeated name gets `-2`, `-3`, … in order."""
    variants, taken = [], set()
    for n, spec in enumerate(specs):
        base = target_name(spec)
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base[: 64 - len(str(k)) - 1]}-{k}"
        taken.add(name)
        variants.append(Variant(name, "control" if n == 0 else "treatment", target=spec))
    return check_roles(variants, "--target")


def targets_only(variants: list[Variant]) -> bool:
    """Whether the variants differ by target and nothing else (as `--target A --target B` makes them)."""
    return all(v.target and v.describe().keys() == {"name", "role", "target"} for v in variants)


def _skill_variant(label: str, role: str, given: Path, cwd: Path, flag: str, spec: str) -> Variant:
    candidates = [given if given.is_absolute() else cwd / given]
    if len(given.parts) == 1:  # a bare name: skills/NAME.md or skills/NAME/SKILL.md
        candidates += [cwd / "skills" / f"{given}.md", cwd / "skills" / str(given)]
    for path in candidates:
        if path.is_file() or (path.is_dir() and _holds_skills(path)):
            name = label or (path.name if path.is_dir() else path.stem)
            return Variant(name, role, skill=str(path.resolve()))
    from omk.loader.discover import near_skill

    raise ConfigError(
        f"{flag} {spec!r}: no such skill (looked for {', '.join(str(c) for c in candidates)}){near_skill(candidates[0])}; "
        "give baseline, a skill file or folder (or a folder of skill folders), skill:PATH, system:TEXT, model:NAME or target:KIND:ARG"
    )


def _holds_skills(folder: Path) -> bool:
    """A skill folder (SKILL.md in it), or a folder of skill folders (installed together)."""
    return (folder / "SKILL.md").is_file() or any((sub / "SKILL.md").is_file() for sub in folder.iterdir() if sub.is_dir())
