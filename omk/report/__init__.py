"""Reports: `report.json` always, other formats on request (`--format`).

| format | file | for |
| --- | --- | --- |
| json | report.json | machines; the contract in docs/report-format.md |
| junit | junit.xml | CI test reporters |
| md | summary.md | a CI job summary |
| html | report.html | people: one self-contained page |

A format is one module with a `ReportWriter` function plus one line in `FORMATS`; only the
formats asked for are imported. Every writer reads the report typed (omk/records/document.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from omk.core.errors import ConfigError
from omk.core.lazy import LazyRegistry

if TYPE_CHECKING:
    from omk.records.document import ReportDocument


class ReportWriter(Protocol):
    def __call__(self, out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
        """Write the report into `out_dir`; the path written."""
        ...


# format name -> its writer, as "module:attr"
FORMATS: dict[str, str] = {
    "json": "omk.report.json_report:write_json_report",
    "junit": "omk.report.junit:write_junit",
    "md": "omk.report.markdown:write_markdown",
    "html": "omk.report.html_report:write_html",
}
WRITERS: LazyRegistry[ReportWriter] = LazyRegistry(FORMATS)


def register_format(name: str, writer: str) -> None:
    """Add a report format: `writer` is the `"module:attr"` of its `ReportWriter`."""
    WRITERS.register(name, writer)


def check_formats(formats: list[str]) -> None:
    unknown = [f for f in formats if f not in WRITERS]
    if unknown:
        raise ConfigError(f"--format: unknown format(s) {', '.join(unknown)}; available: {', '.join(WRITERS.names())}")


def write_format(out_dir: Path, report: ReportDocument, fmt: str, lang: str = "en") -> Path:
    """Write one format into `out_dir` and return its path."""
    check_formats([fmt])
    return WRITERS.load(fmt)(out_dir, report, lang)


def write_formats(out_dir: Path, report: Mapping[str, Any], formats: list[str], lang: str = "en") -> list[Path]:
    """Write report.json and every other requested format into `out_dir`; report.json comes first.

    `report` is the dictionary `Report.to_dict()` gives, or `Report.header()`: its `results` then
    are read from the run's results file as they are written. The other formats read the
    report.json just written, one result at a time, exactly as `omk report RUN_DIR` does.
    Texts are masked where they come from (omk.core.secrets); this last pass masks the environment's
    secrets once more, so a path nobody thought of (a hook's message) cannot write one either."""
    from omk.core.secrets import Masker
    from omk.records.document import read_document
    from omk.report.json_report import write_json

    check_formats(formats)
    others = [fmt for fmt in dict.fromkeys(formats) if fmt != "json"]
    written = [write_json(out_dir, report, Masker.for_run())]
    if others:  # the typed view only when a format reads it: a run that writes report.json alone never builds it
        document = read_document(written[0])
        written += [write_format(out_dir, document, fmt, lang) for fmt in others]
    return written
