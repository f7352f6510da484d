"""Which files to load: the paths given (files or folders), or the discovered default.

Folder rule (as omk 0.54, plus JSON Lines): every `*.json`, `*.yaml`, `*.yml` in the folder (not
its subfolders), sorted by name, and `*.jsonl` only when the name ends in `samples.jsonl`
(`eval-samples.jsonl`, `big.samples.jsonl`) so recorded replay files such as `responses.jsonl`
beside the samples are left alone. Skipped: names starting with `report`, `health`, `_` or `.`
(case-insensitive), the settings files `omk.yaml` / `omk.yml` and JSON Schemas (`*.schema.json`,
such as the `eval-samples.schema.json` that `omk init` writes beside its samples). A file named
explicitly is always loaded, whatever its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omk.core.errors import Problem

DISCOVERED_NAMES = ("eval-samples.yaml", "eval-samples.yml", "eval-samples.json")
M365_NAMES = ("prompts.json", "evals.json", "tests.json")  # runevals' own search, after omk's
DISCOVERY_FOLDERS = (".", "evals")
FOLDER_SUFFIXES = (".json", ".yaml", ".yml")
JSONL_SAMPLES_SUFFIX = "samples.jsonl"
SKIPPED_PREFIXES = ("report", "health", "_", ".")
SETTINGS_NAMES = ("omk.yaml", "omk.yml")
SCHEMA_SUFFIX = ".schema.json"
FOLDER_RULE = (
    "looking for *.json, *.yaml, *.yml and *samples.jsonl, "
    "skipping report*, health*, _*, .*, *.schema.json and omk.yaml"
)


def discover(cwd: Path) -> list[Path]:
    """The default samples file: the first of DISCOVERED_NAMES in `cwd`, then in `cwd/evals`; then
    the first of M365_NAMES in `cwd`, then in `cwd/evals` (the order runevals searches)."""
    for names in (DISCOVERED_NAMES, M365_NAMES):
        for folder in DISCOVERY_FOLDERS:
            for name in names:
                candidate = Path(cwd) / folder / name if folder != "." else Path(cwd) / name
                if candidate.is_file():
                    return [candidate]
    return []


def is_samples_file(path: Path) -> bool:
    """Would a folder scan pick this file up?"""
    name = path.name.lower()
    if name.startswith(SKIPPED_PREFIXES) or name in SETTINGS_NAMES or name.endswith(SCHEMA_SUFFIX):
        return False
    return name.endswith(FOLDER_SUFFIXES) or name.endswith(JSONL_SAMPLES_SUFFIX)


def folder_files(folder: Path) -> list[Path]:
    return sorted((p for p in folder.iterdir() if p.is_file() and is_samples_file(p)), key=lambda p: p.name)


NAMES_COMPARED = 2000  # a folder with more entries is not searched for a near name


def near_name(path: Path) -> Path | None:
    """The existing path nearest to one that does not exist: its first missing part replaced by
    the closest name in that folder (`eval-sample.yaml` → `eval-samples.yaml`), when the whole
    path then exists; None when nothing is close."""
    import difflib
    from itertools import islice

    parts = path.parts
    for i, part in enumerate(parts):
        parent = Path(*parts[:i]) if i else Path(".")
        if (parent / part).exists():
            continue
        try:
            names = [p.name for p in islice(parent.iterdir(), NAMES_COMPARED)]
        except OSError:
            return None
        for name in difflib.get_close_matches(part, names, n=3, cutoff=0.75):
            if (candidate := Path(*parts[:i], name, *parts[i + 1 :])).exists():
                return candidate
        return None
    return None


def near_skill(given: Path) -> str:
    """`; did you mean PATH?` for a misspelt skill path (the near name sample paths get), or ""."""
    if given.exists():
        return ""
    near = near_name(given)
    return f"; did you mean {near}?" if near is not None else ""


def expand(paths: Sequence[str | Path]) -> tuple[list[Path], list[Problem]]:
    """Files to load, in order and without repeats, and the problems with the paths given."""
    files: list[Path] = []
    problems: list[Problem] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = folder_files(path)
            if not found:
                problems.append(Problem(str(path), None, "", "", f"no sample files found in this folder ({FOLDER_RULE})"))
        elif path.exists():
            found = [path]
        else:
            near = near_name(path)
            problems.append(Problem(str(path), None, "", "", "file not found" + (f"; did you mean {near}?" if near else "")))
            continue
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files, problems
