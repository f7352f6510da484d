"""`report.json` (its contract is `docs/report-format.md`), written atomically."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from omk.fileio import write_atomic
from omk.model import SampleResult
from omk.version import __version__

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


def dumps_report(report: dict[str, Any]) -> str:
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


def write_json_report(out_dir: Path, report: dict[str, Any], lang: str = "en") -> Path:
    """report.json in `out_dir` (the same in every language), strict JSON: a NaN or an infinity
    (which JSON cannot hold) is written as null, and `warnings` says where; a lone surrogate is
    written as U+FFFD."""
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
    """Load a finished run's report.json (or the run folder holding it); bad input is an InputError."""
    from omk.errors import InputError

    if path.is_dir():
        path = path / "report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such report (expected a run folder or its report.json)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(report, dict) or report.get("format") != FORMAT:
        found = report.get("format") if isinstance(report, dict) else type(report).__name__
        raise InputError(f"{path}: format: expected {FORMAT!r}, found {found!r}")
    if not isinstance(report.get("results"), list) or not isinstance(report.get("summary"), dict):
        raise InputError(f"{path}: results/summary: missing; is this an omk report?")
    for i, result in enumerate(report["results"]):
        if (why := _bad_result(result)) is not None:
            raise InputError(f"{path}: results[{i}]{why}; was report.json edited by hand?")
    return report


# What every result must have for the renderers and the doctor to read it (docs/report-format.md).
_RESULT_FIELDS: dict[str, tuple[type, ...]] = {
    "sample_id": (str,),
    "status": (str,),
    "scores": (dict,),
    "passed": (bool, type(None)),
    "assertions": (list,),
}


def _bad_result(result: Any) -> str | None:
    if not isinstance(result, dict):
        return f": must be an object, found {type(result).__name__}"
    for name, types in _RESULT_FIELDS.items():
        if not isinstance(result.get(name), types):
            return f".{name}: missing or of the wrong type ({type(result.get(name)).__name__})"
    return None
