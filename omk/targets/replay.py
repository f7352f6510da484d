"""`replay:FILE`: recorded outputs, one `{"sample_id", "output", "trace"}` per JSON line.

A conversation is recorded turn by turn: `{"sample_id", "turns": [{"output", "trace"}, …]}`,
one entry per turn in order; an entry may be `{"error": "…"}` to replay a failed turn.

A run's own `results.jsonl` replays as it is: its conversation lines also carry the last turn's
`output` (the turns win), and the lines of later repeats (`"repeat": 1`, …) are skipped, so each
sample replays its first run. A replay file none of whose `sample_id`s is among the samples run
is refused before the run (`check_samples`), naming a few ids of each side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError, Problem
from omk.domain.trace_io import TraceFormatError, parse_trace
from omk.io.safe_files import read_text_file
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.base import TargetError, TargetResult

# A replay file is the user's own recording of many outputs, read whole: larger than a samples
# file may be, but still bounded (a regular file only, like every file omk reads).
REPLAY_FILE_CAP = 1 << 30

if TYPE_CHECKING:
    from omk.targets.session import Session


class ReplayTarget:
    def __init__(self, path: str | Path, spec: str | None = None):
        self.path = Path(path)
        self.spec = spec or f"replay:{path}"
        self._records = self._read()

    @classmethod
    def from_spec(cls, arg: str, spec: str, *, base_dir: Path | None, settings: TargetSettings) -> ReplayTarget:
        """`replay:FILE`; a relative FILE that does not exist here is looked for under `base_dir`."""
        path = Path(arg)
        if not path.is_absolute() and base_dir is not None and not path.exists():
            path = base_dir / path
        return cls(path, spec)

    def _read(self) -> dict[str, tuple[int, dict[str, Any]]]:
        name = str(self.path)
        try:
            text = read_text_file(self.path, REPLAY_FILE_CAP)
        except FileNotFoundError:
            raise InputError([Problem(name, None, "", "", "replay file not found")]) from None
        except OSError as exc:  # a FIFO, a device, /proc, over the cap: it says which
            raise InputError([Problem(name, None, "", "", f"cannot read replay file: {exc.strerror or exc}")]) from None
        except UnicodeDecodeError as exc:
            raise InputError([Problem(name, None, "", "", f"cannot read replay file: {exc}")]) from None
        records: dict[str, tuple[int, dict[str, Any]]] = {}
        problems: list[Problem] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = _loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(name, lineno, "", "", f"invalid JSON: {exc.msg}"))
                continue
            except (ValueError, RecursionError) as exc:  # a 10,000-digit number, nesting too deep
                problems.append(Problem(name, lineno, "", "", f"invalid JSON: {str(exc).split(';')[0] or 'nested too deeply'}"))
                continue
            if not isinstance(record, dict):
                problems.append(Problem(name, lineno, "", "", "each line must be a JSON object"))
                continue
            sid = record.get("sample_id")
            if not isinstance(sid, str) or not sid:
                problems.append(Problem(name, lineno, "", "sample_id", "must be a non-empty string"))
                continue
            if isinstance(record.get("repeat"), int) and record["repeat"] > 0:
                continue  # a later repeat of a recorded run: the first run is the one replayed
            if sid in records:
                first = records[sid][0]
                problems.append(Problem(name, lineno, "", "sample_id", f'"{sid}" recorded twice (first at line {first})'))
                continue
            found = _record_problems(record)
            if found:
                problems += [Problem(name, lineno, f"({sid})", field, message) for field, message in found]
                continue
            records[sid] = (lineno, record)
        if problems:
            raise InputError(problems)
        return records

    def describe(self) -> dict[str, Any]:
        return {"kind": "replay", "spec": self.spec, "file": str(self.path)}

    def check_samples(self, samples: list[Sample]) -> None:
        """Refuse a replay file that records none of these samples: every one would error."""
        if not samples or any(s.sample_id in self._records for s in samples):
            return

        def few(ids: list[str]) -> str:
            shown = ", ".join(f'"{i}"' for i in ids[:3])
            return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")

        recorded = list(self._records)
        what = f"it records {few(recorded)}" if recorded else "it records nothing"
        message = (
            f"no recorded response matches any sample: {what}; the samples are {few([s.sample_id for s in samples])} "
            "(was this file recorded from other samples?)"
        )
        raise InputError([Problem(str(self.path), None, "", "", message)])

    # Its answers are at hand: the run takes them with `answer`, without a timer or retries (a
    # failure is final: asked again, the file says the same).
    answers_at_once = True

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        return self.answer(sample, prompt, session)

    def answer(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        """The recorded answer for `sample` (its turn `session.index` in a conversation)."""
        found = self._records.get(sample.sample_id)
        if found is None:
            raise TargetError(f"no recorded response for {sample.sample_id!r} in {self.path}")
        _, record = found
        turns = record.get("turns")
        if session is not None:
            if turns is None:
                raise TargetError(f"recorded response for {sample.sample_id!r} has no turns, but the sample is a conversation")
            if session.index >= len(turns):
                raise TargetError(f"no recorded turn {session.index + 1} for {sample.sample_id!r} (the record has {len(turns)})")
            record = turns[session.index]
        elif turns is not None:
            raise TargetError(f"recorded response for {sample.sample_id!r} is a conversation, but the sample has one prompt")
        if record.get("error"):
            raise TargetError(f"recorded error: {record['error']}")
        output = record.get("output")
        if output is None:
            turn = f" turn {session.index + 1}" if session is not None else ""
            raise TargetError(f"recorded response for {sample.sample_id!r}{turn} has no output")
        return TargetResult(output=output, trace=parse_trace(record.get("trace")))

    def cache_identity(self) -> None:
        return None

    async def close(self) -> None:
        return None


def _record_problems(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for what is wrong in one record besides its sample_id."""
    if "turns" not in record:
        return _entry_problems(record, "")
    turns = record["turns"]
    if "output" in record and "status" not in record:  # a results.jsonl line carries both
        return [("turns", 'a record has either "output" or "turns", not both')]
    if not isinstance(turns, list) or not turns:
        return [("turns", "must be a non-empty list of {output, trace} objects, one per turn")]
    found: list[tuple[str, str]] = []
    for i, entry in enumerate(turns):
        if not isinstance(entry, dict):
            found.append((f"turns[{i}]", "must be an object with output and trace"))
        else:
            found += _entry_problems(entry, f"turns[{i}].")
    return found


def _entry_problems(entry: dict[str, Any], prefix: str) -> list[tuple[str, str]]:
    output = entry.get("output")
    if output is not None and not isinstance(output, str):
        return [(prefix + "output", "must be a string")]
    try:
        parse_trace(entry.get("trace"))
    except TraceFormatError as exc:
        return [(prefix + "trace", str(exc))]
    return []


def _loads(line: str) -> Any:
    """One line's value: msgspec reads it in C; what msgspec refuses (a NaN, a number past a
    float's range or an int's 64 bits, a lone surrogate, bad JSON) is read again by the standard
    library, which reads it as it always did or says why."""
    try:
        return msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return json.loads(line)
