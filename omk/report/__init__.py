"""Reports: `report.json` always, other formats on request (`--format`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.errors import ConfigError

FORMATS = ("json",)


def check_formats(formats: list[str]) -> None:
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ConfigError(f"--format: unknown format(s) {', '.join(unknown)}; available: {', '.join(FORMATS)}")


def write_formats(out_dir: Path, report: dict[str, Any], formats: list[str], lang: str = "en") -> list[Path]:
    """Write every requested format into `out_dir`; returns the files written."""
    from omk.report.json_report import write_json_report

    return [write_json_report(out_dir, report)]
