"""`omk migrate FILE`: upgrade an M365 eval document in place, as runevals does on load.

* the oldest legacy object `{"prompts": [...], "expected_responses": [...]}` becomes the items
  `[{"prompt", "expected_response"}, …]` paired by position, written as below;
* a legacy bare array `[{"prompt", "expected_response"}, …]` becomes
  `{"schemaVersion": "1.2.0", "items": […]}`, after a byte-for-byte backup named
  `FILE.bak.YYYYMMDDHHMMSS` (runevals' naming) is written beside it;
* an object without `schemaVersion` gets one (same backup, the file is rewritten);
* an older 1.x document has its `schemaVersion` value raised to 1.2.0, and nothing else in the
  file changes (no backup, as runevals);
* a 1.2.0 or newer document is left alone.

A file that is already omk's own format (YAML, JSON or JSON Lines samples) is left alone and
said to be so. The document is validated first: a file with problems is not touched (exit 2, one line each).
`omk eval` never rewrites a file; it reads a legacy array as it is.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from omk.core.errors import InputError, Problem
from omk.loader.document import ParseFailure
from omk.loader.formats.detect import M365, OMK, detect
from omk.loader.formats.m365 import CURRENT_VERSION, VERSION, is_pairs, legacy_pairs, read_m365
from omk.loader.read import JSONL_SUFFIX, YAML_SUFFIXES, parse_text, read_text

_VERSION_VALUE = re.compile(r'("schemaVersion"\s*:\s*)"(1\.\d+\.\d+)"')


@dataclass(slots=True)
class Migrated:
    message: str
    changed: bool
    backup: Path | None = None


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _legacy(data: object) -> bool:
    """A bare array `omk eval` reads as M365 (the same rule, so the two never disagree)."""
    return isinstance(data, list) and detect(data, None) == M365


def backup_path(path: Path, now: datetime) -> Path:
    stamp = now.strftime("%Y%m%d%H%M%S")
    candidate = path.with_name(f"{path.name}.bak.{stamp}")
    n = 1
    while candidate.exists():  # two migrations within one second
        candidate = path.with_name(f"{path.name}.bak.{stamp}-{n}")
        n += 1
    return candidate


def _upgrade(path: Path, items: list[Any], now: datetime, what: str) -> Migrated:
    """`{"schemaVersion": CURRENT_VERSION, "items": items}` in place of the file, after a backup."""
    from omk.io.fileio import write_atomic

    backup = backup_path(path, now)
    shutil.copy2(path, backup)
    upgraded = {"schemaVersion": CURRENT_VERSION, "items": items}
    write_atomic(path, json.dumps(upgraded, ensure_ascii=False, indent=2) + "\n")
    return Migrated(f"{path}: {what} upgraded to schema {CURRENT_VERSION}", True, backup)


def migrate(path: Path, now: datetime | None = None) -> Migrated:
    from omk.io.fileio import write_atomic

    name = str(path)
    try:
        text = read_text(path)
        doc = parse_text(text, path.suffix)
    except ParseFailure as exc:
        raise InputError([Problem(name, exc.line, "", "", str(exc))]) from None
    data = doc.data
    if detect(data, path) == OMK and not _legacy(data):
        kind = "YAML" if path.suffix.lower() in YAML_SUFFIXES else "JSON Lines" if path.suffix.lower() == JSONL_SUFFIX else "JSON"
        return Migrated(f"{name}: already an omk samples file ({kind}); nothing to migrate (omk doctor {name} checks it)", False)
    if path.suffix.lower() in (*YAML_SUFFIXES, JSONL_SUFFIX):
        raise InputError([Problem(name, None, "", "", "omk migrate upgrades M365 eval documents written as JSON; this file is not JSON")])
    if isinstance(data, dict) and detect(data, None) == M365 and is_pairs(data):
        _, problems = read_m365(doc, name, path.resolve().parent, {})
        if problems:
            raise InputError(problems)
        pairs = legacy_pairs(data)
        assert not isinstance(pairs, str)  # read_m365 found no problem
        data = [item for item, _ in pairs]
        return _upgrade(path, data, now or datetime.now(), f"legacy prompts/expected_responses lists of {len(data)} prompt(s)")
    legacy = _legacy(data)
    if not legacy and detect(data, None) != M365:
        what = "a Big Sky dataset" if isinstance(data, dict) and "data" in data else "an omk samples file or something else"
        raise InputError([Problem(name, None, "", "", f"not an M365 eval document ({what}); there is nothing to migrate")])
    _, problems = read_m365(doc, name, path.resolve().parent, {})
    if problems:
        raise InputError(problems)
    now = now or datetime.now()
    if legacy:
        return _upgrade(path, data, now, f"legacy array of {len(data)} item(s)")
    assert isinstance(data, dict)
    version = data.get("schemaVersion")
    if version is None:
        backup = backup_path(path, now)
        shutil.copy2(path, backup)
        write_atomic(path, json.dumps({"schemaVersion": CURRENT_VERSION, **data}, ensure_ascii=False, indent=2) + "\n")
        return Migrated(f"{name}: schemaVersion {CURRENT_VERSION} added", True, backup)
    if isinstance(version, str) and VERSION.match(version) and _version_tuple(version) < _version_tuple(CURRENT_VERSION):
        write_atomic(path, _VERSION_VALUE.sub(lambda m: f'{m.group(1)}"{CURRENT_VERSION}"', text, count=1))
        return Migrated(f"{name}: schemaVersion {version} raised to {CURRENT_VERSION} (nothing else changed)", True)
    return Migrated(f"{name}: already schema {version}; nothing to migrate", False)
