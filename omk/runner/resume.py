"""The run folder as a record that a later `--resume RUN_DIR` can rebuild the run from.

`run.json` (written once, at start) says what the run is: the samples files, the settings that
shape it (never a secret: provider blocks with keys are left out, keys come from the
environment again on resume), the command-line choices and the target. `results.jsonl` says
what is done: one line per finished (sample_id, repeat). A SIGKILL can leave a torn last line;
it is dropped, and cut off the file so the next append starts on a fresh line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from omk.errors import InputError, Problem
from omk.model import Sample
from omk.records import SampleResult

MANIFEST = "run.json"
RESULTS = "results.jsonl"
MANIFEST_FORMAT = "omk-run/1"

# command-line choices a resume may change (how it runs, not what it runs)
RESUME_MAY_CHANGE = ("concurrency", "timeout", "retries", "no_cache", "format", "lang", "quiet")


def write_manifest(out_dir: Path, manifest: dict[str, Any]) -> Path:
    from omk.fileio import write_atomic

    path = out_dir / MANIFEST
    write_atomic(path, json.dumps({"format": MANIFEST_FORMAT, **manifest}, ensure_ascii=False, indent=2, default=str) + "\n")
    return path


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / MANIFEST
    name = str(path)
    if not run_dir.is_dir():
        raise InputError([Problem(str(run_dir), None, "", "", "--resume: no such run folder")])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            [Problem(name, None, "", "", "--resume: not a run folder (no run.json; runs started by omk write one)")]
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(name, None, "", "", f"cannot read: {exc}")]) from None
    except json.JSONDecodeError as exc:
        raise InputError([Problem(name, exc.lineno, "", "", f"invalid JSON: {exc.msg}")]) from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise InputError([Problem(name, None, "", "format", f"expected {MANIFEST_FORMAT!r}")])
    for key, kind in (("run_id", str), ("samples_files", list), ("cli", dict), ("cwd", str), ("started_at", str)):
        if not isinstance(data.get(key), kind):
            raise InputError([Problem(name, None, "", key, f"missing or not a {kind.__name__}")])
    return data


def restore_result(data: Any, origin: str = RESULTS) -> SampleResult:
    """A stored line's result, read through the checked reader; InputError names the bad field."""
    return SampleResult.read(data, origin)


class Dropped(Protocol):
    dropped: int


Found = tuple[tuple[str, int], int, int, SampleResult]


def scan_finished(path: Path, samples: dict[str, Sample], repeat: int, tally: Dropped) -> Iterator[Found]:
    """The results already in `results.jsonl`, one line at a time, in file order (a later line of
    the same (sample_id, repeat) replaces an earlier one): ((sample_id, repeat), where the line
    starts, its length in bytes, the result). Lines that cannot be used are counted in
    `tally.dropped`. A torn or unreadable tail is truncated away so appends start on a fresh line.
    """
    if not path.is_file():
        return
    offset = 0
    with path.open("r+b") as f:
        for line in iter(f.readline, b""):
            start, offset = offset, offset + len(line)
            whole = line.endswith(b"\n")
            found = _take(line.rstrip(b"\n"), samples, repeat, tally)
            if found is _TORN and not whole:
                f.truncate(start)  # torn by a kill: cut it off
                return
            if not whole:
                f.write(b"\n")  # whole but unterminated: terminate it
            if isinstance(found, SampleResult):
                yield (found.sample_id, found.repeat), start, len(line.rstrip(b"\n")), found


_TORN = object()


def load_line(line: bytes | str) -> Any:
    """One stored result line parsed, its lone surrogates (a hand-edited "\\ud800") made U+FFFD
    so they cannot stop a report being written."""
    data = json.loads(line)
    if (b"\\u" in line) if isinstance(line, bytes) else ("\\u" in line):
        from omk.textsafe import scrub_value

        data = scrub_value(data)
    return data


def _take(line: bytes, samples: dict[str, Sample], repeat: int, tally: Dropped) -> Any:
    """The result on one stored line; `_TORN` when it is not JSON, None when it cannot be used."""
    if not line.strip():
        return None
    try:
        data = load_line(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        tally.dropped += 1
        return _TORN
    try:
        result = restore_result(data)
    except InputError:
        tally.dropped += 1
        return None
    if result.sample_id not in samples or not 0 <= result.repeat < repeat:
        tally.dropped += 1
        return None
    return result


def recorded_cli(args: dict[str, Any]) -> dict[str, Any]:
    """The command-line choices to keep in run.json (flags carry no secrets; keys live in the env)."""
    return {k: v for k, v in args.items() if k not in ("command", "resume", "quiet")}


def resume_cli(manifest: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """The recorded choices, with the few a resume may change taken from this command line.

    Anything else given again (samples, --target, --filter, --repeat…) is refused: a resumed run
    must be the same run, or its report would mix two.
    """
    cli = dict(manifest["cli"])
    refused = []
    for key, value in args.items():
        if key in ("command", "resume") or value in (None, False, [], ""):
            continue
        if key in RESUME_MAY_CHANGE:
            cli[key] = value
        else:
            refused.append("SAMPLES" if key == "samples" else "--" + key.replace("_", "-"))
    if refused:
        allowed = ", ".join("--" + k.replace("_", "-") for k in RESUME_MAY_CHANGE)
        raise InputError(
            f"--resume reruns the recorded run as it was; drop {', '.join(refused)} (a resume may change only {allowed})"
        )
    return cli
