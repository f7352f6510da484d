"""The run folder as a record that a later `--resume RUN_DIR` can rebuild the run from.

`run.json` (written once, at start) says what the run is: the samples files, the settings that
shape it (never a secret: provider blocks with keys are left out, keys come from the
environment again on resume), the command-line choices and the target. `results.jsonl` says
what is done: one line per finished (sample_id, repeat). A SIGKILL can leave a torn last line;
it is dropped, and cut off the file so the next append starts on a fresh line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.errors import InputError, Problem
from omk.model import AssertionResult, Layer, Sample, SampleResult, Scores, Status, TurnResult
from omk.targets.trace_io import TraceFormatError, parse_trace

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


def _assertion(data: dict[str, Any]) -> AssertionResult:
    return AssertionResult(
        type=data["type"],
        layer=Layer(data["layer"]),
        status=Status(data["status"]),
        weight=data.get("weight", 1.0),
        negate=bool(data.get("not", False)),
        metric=data.get("metric"),
        score=data.get("score"),
        message=data.get("message"),
        children=[_assertion(c) for c in data.get("children") or []],
        value=data.get("value"),
    )


@dataclass(slots=True)
class RestoredResult(SampleResult):
    """A result read back from `results.jsonl`: its report entry is the line as it was written."""

    stored: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.stored)


def _scores(data: dict[str, Any]) -> Scores:
    scores = data.get("scores") or {}
    return Scores(
        fact=scores.get("fact"),
        behavior=scores.get("behavior"),
        judge=scores.get("judge"),
        composite=scores.get("composite") or 0.0,
    )


def _graded(data: dict[str, Any]) -> dict[str, Any]:
    """The fields a sample's line and a turn's entry share (SampleResult / TurnResult)."""
    return {
        "status": data["status"],
        "prompt": data.get("prompt") or "",
        "error": data.get("error"),
        "output": data.get("output"),
        "trace": parse_trace(data.get("trace")),
        "assertions": [_assertion(a) for a in data.get("assertions") or []],
        "judge": data.get("judge"),
        "judge_skipped": data.get("judge_skipped"),
        "scores": _scores(data),
        "attempts": int(data.get("attempts") or 0),
    }


def _turn(data: dict[str, Any]) -> TurnResult:
    return TurnResult(index=int(data["index"]), passed=data.get("passed"), **_graded(data))


def restore_result(data: dict[str, Any], sample: Sample) -> RestoredResult:
    """Rebuild what the summary needs from a stored line; raises KeyError/ValueError if malformed."""
    return RestoredResult(
        sample=sample,
        passed=bool(data.get("passed")),
        duration_ms=float(data.get("duration_ms") or 0.0),
        repeat=int(data.get("repeat") or 0),
        cached=bool(data.get("cached")),
        turns=[_turn(t) for t in data.get("turns") or []],
        stored=data,
        **_graded(data),
    )


@dataclass(slots=True)
class Finished:
    results: dict[tuple[str, int], RestoredResult] = field(default_factory=dict)
    dropped: int = 0  # lines that could not be used (torn by a kill, or for samples no longer planned)


def read_finished(path: Path, samples: dict[str, Sample], repeat: int) -> Finished:
    """The results already in `results.jsonl`, keyed by (sample_id, repeat); the last line wins.

    A torn or unreadable tail is truncated away so appends start on a fresh line.
    """
    done = Finished()
    if not path.is_file():
        return done
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline, else a line the kill may have torn
    for line in lines:
        _take(line, samples, repeat, done)
    if tail.strip():
        with path.open("r+b") as f:
            if _take(tail, samples, repeat, done) is None:
                f.truncate(len(raw) - len(tail))  # torn: cut it off
            else:
                f.seek(0, 2)
                f.write(b"\n")  # whole but unterminated: terminate it
    return done


def _take(line: bytes, samples: dict[str, Sample], repeat: int, done: Finished) -> dict | None:
    """Record one stored line; returns the parsed object, or None if the line is not JSON."""
    if not line.strip():
        return {}
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        done.dropped += 1
        return None
    if b"\\u" in line:  # a hand-edited "\ud800" must not stop the report being written
        from omk.textsafe import scrub_value

        data = scrub_value(data)
    sid = data.get("sample_id") if isinstance(data, dict) else None
    sample = samples.get(sid) if isinstance(sid, str) else None
    rep = data.get("repeat", 0) if isinstance(data, dict) else None
    if sample is None or not isinstance(rep, int) or not 0 <= rep < repeat:
        done.dropped += 1
        return data
    try:
        done.results[(sample.sample_id, rep)] = restore_result(data, sample)
    except (KeyError, ValueError, TypeError, TraceFormatError):
        done.dropped += 1
    return data


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
