"""`report.json` (its contract is `docs/report-format.md`), written atomically."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.fileio import write_atomic
from omk.model import SampleResult
from omk.version import __version__

if TYPE_CHECKING:
    from omk.report.document import ReportDocument

FORMAT = "omk-report/1"


def build_report(
    *,
    run_id: str,
    started_at: str,
    finished_at: str,
    samples_files: list[str],
    target: dict[str, Any],
    judge: dict[str, Any] | None,
    summary: dict[str, Any],
    results: list[SampleResult],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "run_id": run_id,
        "omk_version": __version__,
        "started_at": started_at,
        "finished_at": finished_at,
        "samples_files": samples_files,
        "target": target,
        "judge": judge,
        "summary": summary,
        "results": [r.to_dict() for r in results],
    }


def dumps_report(report: Mapping[str, Any]) -> str:
    """The report's text: the top level indented for people, each result compact on a line of its own.

    json's C encoder does not indent; with `indent=2` everything would go through the much slower
    pure-Python one (docs/benchmarks.md)."""
    members = []
    for key, value in report.items():
        if key == "results" and isinstance(value, list) and value:
            text = "[\n" + ",\n".join("    " + json.dumps(r, ensure_ascii=False, allow_nan=False) for r in value) + "\n  ]"
        else:
            text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False).replace("\n", "\n  ")
        members.append(f"  {json.dumps(key, ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(members) + "\n}\n"


def write_json_report(out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
    """report.json in `out_dir` (the same in every language), from the dictionary the typed report
    was read from: fields the typed view leaves out are kept."""
    return write_json(out_dir, report.data)


def write_json(out_dir: Path, report: Mapping[str, Any]) -> Path:
    """report.json in `out_dir`, strict JSON: a NaN or an infinity (which JSON cannot hold) is
    written as null, and `warnings` says where; a lone surrogate is written as U+FFFD."""
    path = out_dir / "report.json"
    try:
        text = dumps_report(report)
    except ValueError:  # allow_nan=False met NaN or Infinity
        where: list[str] = []
        report = {**_finite(report, "", where), "warnings": [*(report.get("warnings") or []), *_nonfinite_warning(where)]}
        text = dumps_report(report)
    try:
        write_atomic(path, text)
    except UnicodeEncodeError:
        from omk.textsafe import scrub

        write_atomic(path, scrub(text))
    return path


def _finite(value: Any, at: str, where: list[str]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        where.append(at or "(top)")
        return None
    if isinstance(value, dict):
        return {k: _finite(v, f"{at}.{k}" if at else str(k), where) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v, f"{at}[{i}]", where) for i, v in enumerate(value)]
    return value


def _nonfinite_warning(where: list[str]) -> list[str]:
    shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
    return [f"not-a-number or infinite values written as null (JSON has no such numbers): {shown}"]


def read_report(path: Path) -> dict[str, Any]:
    """Load a finished run's report.json (or the run folder holding it), its shape checked as the
    formats read it (omk/report/document.py); bad input is an InputError."""
    from omk.report.document import read_document

    return dict(read_document(path).data)
