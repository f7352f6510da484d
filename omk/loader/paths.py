"""`allow_paths` in the omk.yaml beside a samples file: folders outside the samples file's own
folder that its mocks' `return_file` and its hooks may use (omk.io.safe_files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.settings.config import CONFIG_NAME


def allowed_dirs(samples_file: Path, data: Any = None) -> list[Path]:
    """The folders `allow_paths` names (relative to omk.yaml), resolved; [] without omk.yaml.

    Only the omk.yaml in the samples file's folder counts: a file elsewhere cannot widen what a
    sample may read. The key is checked with the rest of omk.yaml when settings load. `data`:
    that omk.yaml, already read (None: read here)."""
    config = samples_file.resolve().parent / CONFIG_NAME
    if data is None:
        if not config.is_file():
            return []
        import yaml

        try:
            data = yaml.safe_load(config.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return []  # reported, with its line, when settings load
    entries = data.get("allow_paths") if isinstance(data, dict) else None
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        return []
    return [(config.parent / Path(e).expanduser()).resolve() for e in entries if isinstance(e, str) and e.strip()]
