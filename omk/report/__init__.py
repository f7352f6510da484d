"""Reports: `report.json` always, other formats on request (`--format`).

| format | file | for |
| --- | --- | --- |
| json | report.json | machines; the contract in docs/report-format.md |
| junit | junit.xml | CI test reporters |
| md | summary.md | a CI job summary |
| html | report.html | people: one self-contained page |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.errors import ConfigError

FORMATS = ("json", "junit", "md", "html")


def check_formats(formats: list[str]) -> None:
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ConfigError(f"--format: unknown format(s) {', '.join(unknown)}; available: {', '.join(FORMATS)}")


def write_format(out_dir: Path, report: dict[str, Any], fmt: str, lang: str = "en") -> Path:
    """Write one format into `out_dir` and return its path."""
    if fmt == "json":
        from omk.report.json_report import write_json_report

        return write_json_report(out_dir, report)
    if fmt == "junit":
        from omk.report.junit import write_junit

        return write_junit(out_dir, report)
    if fmt == "md":
        from omk.report.markdown import write_markdown

        return write_markdown(out_dir, report, lang)
    if fmt == "html":
        from omk.report.html_report import write_html

        return write_html(out_dir, report, lang)
    check_formats([fmt])
    raise AssertionError(fmt)


def write_formats(out_dir: Path, report: dict[str, Any], formats: list[str], lang: str = "en") -> list[Path]:
    """Write report.json and every other requested format into `out_dir`; report.json comes first.

    Texts are masked where they come from (omk.secrets); this last pass masks the environment's
    secrets once more, so a path nobody thought of (a hook's message) cannot write one either."""
    from omk.secrets import Masker

    check_formats(formats)
    mask = Masker.for_run()
    if mask:
        report = mask.value(report)
    return [write_format(out_dir, report, fmt, lang) for fmt in dict.fromkeys(["json", *formats])]
