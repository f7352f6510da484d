"""The run folder as a record that a later `--resume RUN_DIR` can rebuild the run from.

`run.json` (written once, at start) says what the run is: the samples files, the settings that
shape it (never a secret: provider blocks with keys are left out, keys come from the
environment again on resume), the command-line choices and the target. `results.jsonl` says
what is done: one line per finished (sample_id, repeat). A SIGKILL can leave a torn last line;
it is dropped, and cut off the file so the next append starts on a fresh line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from omk.core.errors import InputError, Problem
from omk.records import SampleResult
from omk.records.manifest import RUN_FORMAT, RunManifest
from omk.records.wire import parsed
from omk.samples.model import Sample

MANIFEST = "run.json"
RESULTS = "results.jsonl"
MANIFEST_FORMAT = RUN_FORMAT

# command-line choices a resume may change (how it runs, not what it runs)
RESUME_MAY_CHANGE = ("concurrency", "timeout", "retries", "no_cache", "format", "lang", "quiet", "dry_run", "budget_usd", "budget_per_sample_usd")
NOT_RECORDED = ("command", "resume", "quiet", "dry_run", "budget_usd", "budget_per_sample_usd")  # one invocation's, not the run's


def write_manifest(out_dir: Path, manifest: RunManifest, mask: Callable[[Any], Any] = lambda data: data) -> Path:
    """run.json written whole; `mask` takes out of its JSON any secret a spec was given with."""
    from omk.io.fileio import write_atomic

    path = out_dir / MANIFEST
    write_atomic(path, json.dumps(mask(manifest.to_json()), ensure_ascii=False, indent=2, default=str) + "\n")
    return path


def read_manifest(run_dir: Path) -> RunManifest:
    """The run folder's run.json, checked (`RunManifest`); an InputError of one line naming the
    file and the field when it is missing, not JSON or of the wrong shape."""
    path = run_dir / MANIFEST
    name = str(path)
    if not run_dir.is_dir():
        raise InputError([Problem(str(run_dir), None, "", "", "--resume: no such run folder")])
    from omk.io.safe_files import read_run_file

    try:
        text = read_run_file(path)
    except FileNotFoundError:
        raise InputError(
            [Problem(name, None, "", "", "--resume: not a run folder (no run.json; runs started by omk write one)")]
        ) from None
    except OSError as exc:
        raise InputError([Problem(name, None, "", "", f"cannot read: {exc.strerror or exc}")]) from None
    return RunManifest.read(text, name)


def restore_result(line: bytes | str, origin: str = RESULTS) -> SampleResult:
    """A stored line's result, read through the checked reader: InputError names the bad field, a
    `ValueError` (or `RecursionError`) says the line is no JSON. Its lone surrogates (a
    hand-edited "\\ud800") are made U+FFFD, as `load_line` makes them."""
    return SampleResult.decode(line, origin, "", load_line)


class Dropped(Protocol):
    dropped: int  # stored lines that could not be used
    skipped: list[str]  # why each broken line was dropped: `FILE:LINE: field: what`


Found = tuple[tuple[str, int], int, int, SampleResult]


def scan_finished(path: Path, samples: dict[str, Sample], repeat: int, tally: Dropped) -> Iterator[Found]:
    """The results already in `results.jsonl`, one line at a time, in file order (a later line of
    the same (sample_id, repeat) replaces an earlier one): ((sample_id, repeat), where the line
    starts, its length in bytes, the result). Lines that cannot be used are counted in
    `tally.dropped`; a broken one (not JSON, a field of the wrong shape, longer than the run-file
    cap) is named in `tally.skipped` with its line and field, and its sample runs again. A torn
    or unreadable tail is truncated away so appends start on a fresh line. The file is opened by
    the file rules: a FIFO or a device in its place is an InputError, never a hang.
    """
    from omk.io.safe_files import open_run_file

    try:
        f = open_run_file(path, update=True)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError([Problem(str(path), None, "", "", f"cannot read: {exc.strerror or exc}")]) from None
    offset = 0
    with f:
        for number, line in enumerate(iter(lambda: _read_line(f), b""), start=1):
            start, offset = offset, offset + len(line)
            whole = line.endswith(b"\n")
            found = _take(line.rstrip(b"\n"), samples, repeat, tally, f"{path}:{number}")
            if found is _TORN and not whole:
                tally.skipped.pop()  # torn by a kill, as docs/run.md says: cut off without a word
                f.truncate(start)
                return
            if not whole:
                f.write(b"\n")  # whole but unterminated: terminate it
            if isinstance(found, SampleResult):
                yield (found.sample_id, found.repeat), start, len(line.rstrip(b"\n")), found


_TORN = object()
_TOO_LONG = b"\x00too long\x00"  # stands for a line over the cap (never valid JSON)


def _read_line(f: BinaryIO) -> bytes:
    """The next line, or for one longer than the run-file cap a stand-in with its length (the
    line itself is skipped, a piece at a time, never held)."""
    from omk.io.safe_files import run_file_cap

    cap = run_file_cap()
    line = f.readline(cap + 1)
    if len(line) <= cap or line.endswith(b"\n"):
        return line
    length = len(line)
    while (piece := f.readline(1 << 20)) and not piece.endswith(b"\n"):
        length += len(piece)
    length += len(piece)
    end = b"\n" if piece.endswith(b"\n") else b""
    return _TOO_LONG + b" " * (length - len(_TOO_LONG) - len(end)) + end  # same length, for the offsets


def load_line(line: bytes | str) -> Any:
    """One stored result line parsed, its lone surrogates (a hand-edited "\\ud800") made U+FFFD
    so they cannot stop a report being written."""
    data = parsed(line)
    if (b"\\u" in line) if isinstance(line, bytes) else ("\\u" in line):
        from omk.io.textsafe import scrub_value

        data = scrub_value(data)
    return data


def _take(line: bytes, samples: dict[str, Sample], repeat: int, tally: Dropped, where: str) -> Any:
    """The result on one stored line; `_TORN` when it is not JSON, None when it cannot be used."""
    if not line.strip():
        return None
    try:
        if line.startswith(_TOO_LONG):
            from omk.io.safe_files import run_file_cap

            raise ValueError(f"longer than the {run_file_cap()} bytes omk reads of a line")
        result = restore_result(line, where)
    except InputError as exc:
        tally.dropped += 1
        tally.skipped.append(str(exc).split("; was report.json edited by hand?")[0])
        return None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        tally.dropped += 1
        tally.skipped.append(f"{where}: not a result line ({_why(exc)})")
        return _TORN
    if result.sample_id not in samples or not 0 <= result.repeat < repeat:
        tally.dropped += 1
        return None
    return result


def _why(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    return str(exc)


def recorded_cli(args: dict[str, Any]) -> dict[str, Any]:
    """The command-line choices to keep in run.json (flags carry no secrets; keys live in the env)."""
    return {k: v for k, v in args.items() if k not in NOT_RECORDED}


def resume_cli(recorded: Mapping[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """The recorded choices (run.json's `cli`), with the few a resume may change taken from this command line.

    `--target` and `--judge` may be given again only as the run had them: that is how a command
    target or judge (one that runs a program here) is confirmed (`check_commands`); the samples
    files, given again as the run had them, confirm its hooks (`check_hooks`; the caller compares
    them). Anything else given again (--filter, --repeat…) is refused: a resumed run must be the
    same run, or its report would mix two.
    """
    cli = dict(recorded)
    refused = []
    for key, value in args.items():
        if key in ("command", "resume") or value in (None, False, [], ""):
            continue
        if key in RESUME_MAY_CHANGE or (key in CONFIRMABLE and cli.get(key) in (None, value)):
            cli[key] = value
        elif key in CONFIRMABLE:
            raise InputError(
                f"--resume: --{key} {value!r} is not the run's {key} ({cli[key]!r}); a resume may give --{key} "
                "only as the run had it (start a new run to change it)"
            )
        else:
            refused.append("SAMPLES" if key == "samples" else "--" + key.replace("_", "-"))
    if refused:
        allowed = ", ".join("--" + k.replace("_", "-") for k in RESUME_MAY_CHANGE)
        raise InputError(
            f"--resume reruns the recorded run as it was; drop {', '.join(refused)} (a resume may change only {allowed}, "
            "and give the samples, --target or --judge again as the run had them)"
        )
    return cli


# targets and judges that run a program on this machine: a run folder alone never starts one
COMMAND_KINDS = ("cmd", "claude", "codex")
CONFIRMABLE = ("target", "judge")


def runs_a_command(spec: str | None) -> bool:
    return isinstance(spec, str) and spec.partition(":")[0].strip() in COMMAND_KINDS


def resume_command(run_dir: Path | str, targets: list[str | None], judges: list[str], samples: list[Sample]) -> str:
    """The command that continues the run in `run_dir`, complete and quoted for the shell: a
    target or judge that runs a program is given again (a resume starts none unasked,
    `check_commands`), and so are the samples files when one of them runs a custom hook
    (`check_hooks`). Every hint that tells the user how to go on prints this one command."""
    import shlex

    words = ["omk", "eval", "--resume", str(run_dir)]
    for target in dict.fromkeys(targets):  # an experiment's variants: each of its targets
        if target is not None and runs_a_command(target):
            words += ["--target", target]
    if any(runs_a_command(j) for j in judges):
        words += ["--judge", ",".join(judges)]
    if any(_first_hook(s) is not None for s in samples):
        words += _files(samples)
    return shlex.join(words)


def check_commands(run_dir: Path, target: str | None, judges: list[str], confirmed: set[str], command: str) -> None:
    """Refuse a resume whose target or judge runs a command the user did not give again.

    run.json, and the omk.yaml in the folder it names, may come from someone else (a run folder
    in a pull request, a download): what they say a run used is not a reason to start a program.
    `confirmed`: the specs this command line (or the user's OMK_TARGET / OMK_JUDGE) gave;
    `command`: the whole resume command to advise (`resume_command`)."""
    for flag, spec in [("--target", target), *(("--judge", j) for j in judges)]:
        if spec is not None and runs_a_command(spec) and spec not in confirmed:
            raise InputError(
                [
                    Problem(
                        str(run_dir / MANIFEST), None, "", flag[2:],
                        f"the run's {flag[2:]} {spec!r} runs a command, and a resume runs it only when you give it "
                        f"again: {command}",
                    )
                ]
            )


def check_hooks(run_dir: Path, samples: list[Sample], confirmed: bool, command: str) -> None:
    """Refuse a resume whose samples run custom hooks (`fn`, a program of their own) when the
    user did not give the samples files again: run.json's `samples_files` may point anywhere."""
    hook = None if confirmed else next((h for s in samples if (h := _first_hook(s)) is not None), None)
    if hook is None:
        return
    sample, fn = hook
    raise InputError(
        [
            Problem(
                str(run_dir / MANIFEST), None, "", "samples_files",
                f"sample {sample.sample_id!r} runs the custom hook {fn!r}, and a resume "
                f"runs hooks only when you give the samples again: {command}",
            )
        ]
    )


def _first_hook(sample: Sample) -> tuple[Sample, str] | None:
    def walk(specs: list[Any]) -> str | None:
        for spec in specs:
            if spec.type == "custom":
                return str(spec.raw.get("fn"))
            if (found := walk(spec.children)) is not None:
                return found
        return None

    for specs in sample.assertion_lists():
        if (fn := walk(specs)) is not None:
            return sample, fn
    return None


def _files(samples: list[Sample]) -> list[str]:
    return list(dict.fromkeys(s.source.file for s in samples if s.source is not None))
