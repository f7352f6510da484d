"""`report.json` (its contract is `docs/report-format.md`), written atomically."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from omk.io.fileio import open_atomic
from omk.io.jsontext import CheckedJson, finite, nonfinite_warning
from omk.io.textsafe import SURROGATE_ESCAPE, scrub, scrub_value

if TYPE_CHECKING:
    from omk.core.secrets import Masker
    from omk.records.document import ReportDocument

FORMAT = "omk-report/1"


class ResultTexts(Protocol):
    """A report's results given as their JSON texts (one compact object each), read when written:
    a run's results file, so a report is written without holding every result."""

    def __len__(self) -> int: ...

    def texts(self) -> Iterator[str]: ...


def dumps_report(report: Mapping[str, Any]) -> str:
    """The report's text: the top level indented for people, each result compact on a line of its own."""
    out = io.StringIO()
    dump_report(report, out)
    return out.getvalue()


def write_json_report(out_dir: Path, report: ReportDocument, lang: str = "en") -> Path:
    """report.json in `out_dir` (the same in every language), from the dictionary the typed report
    was read from: fields the typed view leaves out are kept."""
    data = report.data
    if hasattr(report.results, "texts"):  # read lazily from a report.json: its results are not in `data`
        data = {**data, "results": report.results}
    return write_json(out_dir, data)


def write_json(out_dir: Path, report: Mapping[str, Any], mask: Masker | None = None) -> Path:
    """report.json in `out_dir`, written piece by piece (the results one at a time), strict JSON: a
    NaN or an infinity (which JSON cannot hold) is written as null, and `warnings` says where; a
    lone surrogate is written as U+FFFD; `mask` hides the environment's secrets once more."""
    path = out_dir / "report.json"
    with open_atomic(path) as f:
        dump_report(report, f, mask)
    return path


def dump_report(report: Mapping[str, Any], out: TextIO, mask: Masker | None = None) -> None:
    """Write the report's text: the top level indented for people, each result compact on a line
    of its own. json's C encoder does not indent; with `indent=2` everything would go through the
    much slower pure-Python one. `report["results"]` is a list of dicts or `ResultTexts`."""
    keys = list(report)
    at = keys.index("results") if "results" in keys else len(keys)
    where: list[str] = []
    members = {k: _member(k, report[k], mask, where) for k in keys[:at]}
    late: list[str] = []  # places after the results: found before writing, listed after them
    members.update({k: _member(k, report[k], mask, late) for k in keys[at + 1 :]})
    out.write("{\n")
    for n, key in enumerate(keys):
        out.write(",\n" if n else "")
        if key == "results":
            out.write('  "results": ')
            _write_results(out, report[key], mask, where)
            continue
        _write(out, f"  {json.dumps(key, ensure_ascii=False)}: " + _indented(_with_warnings(key, members[key], where + late)))
    if "warnings" not in keys and (where or late):
        _write(out, ",\n  \"warnings\": " + _indented(nonfinite_warning(where + late)))
    out.write("\n}\n")


def _with_warnings(key: str, value: Any, where: list[str]) -> Any:
    if key != "warnings" or not where:
        return value
    return [*(value or []), *nonfinite_warning(where)]


def _member(key: str, value: Any, mask: Masker | None, where: list[str]) -> Any:
    """One top-level member, masked and made finite (`where` gets the places of non-finite numbers)."""
    if mask:
        value = mask.value_if_present(value)
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        value = finite(value, key, where)
    return value


def _indented(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False).replace("\n", "\n  ")


def _write_results(out: TextIO, results: Any, mask: Masker | None, where: list[str]) -> None:
    if not mask and hasattr(results, "lines") and hasattr(out, "buffer"):
        _write_lines(out, results, where)
        return
    texts: Iterator[str] = results.texts() if hasattr(results, "texts") else (
        json.dumps(r, ensure_ascii=False) for r in results
    )
    first = True
    for i, text in enumerate(texts):
        _write(out, ("[\n    " if first else ",\n    ") + _clean(text, i, mask, where))
        first = False
    out.write("[]" if first else "\n  ]")


def _write_lines(out: TextIO, results: Any, where: list[str]) -> None:
    """The results as `_write_results` writes them, from a run's results file: a line this process
    wrote (strict as written, in UTF-8) goes to the file as the bytes it is, without being decoded
    and encoded again; any other (a resumed run's older line) is looked over as text first."""
    out.flush()
    raw = out.buffer  # a text file's binary layer (the caller checked it has one)
    i, before = 0, b"[\n    "
    for item in results.lines():
        raw.write(before)
        if isinstance(item, tuple):  # one line or more, each ending with its newline
            piece, count = item
            # a JSON line holds no newline of its own: each one ends a line, the last one the piece
            raw.write(memoryview(piece.replace(b"\n", _BETWEEN))[: -len(_BETWEEN)])
            i += count
        else:
            raw.write(_utf8(_clean(item, i, None, where)))
            i += 1
        before = _BETWEEN
    raw.write(b"[]" if i == 0 else b"\n  ]")


_BETWEEN = b",\n    "  # between two results of report.json's list


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return scrub(text).encode("utf-8")


def _clean(text: str, i: int, mask: Masker | None, where: list[str]) -> str:
    """One result's JSON text as report.json holds it: masked, finite, no lone surrogate (a line
    the run wrote in this process, `CheckedJson`, is finite and without one already)."""
    data: Any = None
    if mask and mask.may_be_in_json(text):
        data = mask.value(json.loads(text))
    if text.__class__ is not CheckedJson:
        if "NaN" in text or "Infinity" in text:
            data = finite(json.loads(text) if data is None else data, f"results[{i}]", where)
        if SURROGATE_ESCAPE.search(text):
            data = scrub_value(json.loads(text) if data is None else data)
    return text if data is None else json.dumps(data, ensure_ascii=False, allow_nan=False)


def _write(out: TextIO, text: str) -> None:
    try:
        out.write(text)
    except UnicodeEncodeError:  # a lone surrogate
        out.write(scrub(text))

