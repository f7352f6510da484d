"""The run folder's own records: `run.json` (what a run is: its samples files, settings, command-line
choices, target and judge) and an experiment's `experiment.json` (its variants, seed and choices).

omk writes them when a run starts and reads them back for `--resume` and `omk merge`, through these
classes only. Both are written and read by msgspec through a record of the written layout
(`_RunLine` here, `_ExperimentLine` in omk.records.experiment_manifest): the file starts with its
`format`, which no field of the record holds, and writes its `shard` only for a shard's run (in
run.json with the shard's `positions` inside it). A field of the wrong type is one located line,
e.g. `run/experiment.json: seed: expected an integer, found 'x'`; a missing or null field that has
a default takes it (fields added since an older omk wrote the folder). Checked by hand, as no type
says them: the format, which comes first; that the samples files are a list of paths, none empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from omk.core.errors import InputError
from omk.records.wire import Number, convert, plain, shown

if TYPE_CHECKING:
    from omk.records.shard import ShardInfo

RUN_FORMAT = "omk-run/1"

T = TypeVar("T")


class RunSettings(msgspec.Struct, frozen=True, gc=False):
    """What run.json records of the settings: everything but provider blocks, which may hold keys."""

    target: str | None = None
    judge: tuple[str, ...] = ()
    threshold: Number = 3.5
    concurrency: int = 4
    timeout: Number = 120.0
    retries: int = 2
    repeat: int = 1
    formats: tuple[str, ...] = ("json",)
    lang: str = "en"
    config_file: str | None = None

    def __post_init__(self) -> None:
        # a `repeat` of 0 is one run of each sample, no formats is json, as an older omk read them
        if not self.repeat or not self.formats:
            msgspec.structs.force_setattr(self, "repeat", self.repeat or 1)
            msgspec.structs.force_setattr(self, "formats", self.formats or ("json",))


class RunManifest(msgspec.Struct, frozen=True, gc=False):
    """run.json: what a later `--resume` needs to rebuild the run, and `omk merge` to join shards."""

    run_id: str
    started_at: str
    cwd: str
    samples_files: tuple[str, ...]
    cli: Mapping[str, Any]  # the command-line choices, checked field by field by EvalOptions.from_record
    settings: RunSettings = msgspec.field(default_factory=RunSettings)
    target: Mapping[str, Any] | None = None  # the target's own description (Target.describe)
    judge: Mapping[str, Any] | None = None  # the judge's own description
    git: str | None = None  # the samples' commit, for `omk view`
    shard: ShardInfo | None = None  # a part of a split run (--shard I/N)
    positions: tuple[int, ...] = ()  # the shard's samples' places in the whole plan

    @property
    def gold_files(self) -> tuple[str, ...]:
        """The labels files the run checked its judge against (`--gold`)."""
        files = self.cli.get("gold")
        return tuple(str(f) for f in files) if isinstance(files, list | tuple) else ()

    def to_json(self) -> dict[str, Any]:
        fields = msgspec.structs.asdict(self)
        shard, positions = fields.pop("shard"), fields.pop("positions")
        data: dict[str, Any] = plain(_RunLine(RUN_FORMAT, **fields, shard=UNSET if shard is None else shard.to_json(positions)))
        return data

    @classmethod
    def read(cls, text: bytes, origin: str) -> RunManifest:
        line = read_line(text, _RunLine, origin, RUN_FORMAT)
        if not line.samples_files or not all(line.samples_files):
            raise InputError(f"{origin}: samples_files: expected a list of samples files' paths, found {shown(list(line.samples_files))}")
        fields = msgspec.structs.asdict(line)
        del fields["format"], fields["shard"]
        shard, positions = read_shard(line.shard, origin)
        return cls(**fields, shard=shard, positions=positions)


class _RunLine(msgspec.Struct, frozen=True, gc=False):
    """run.json as written: its format first, the shard (with its positions) only for a shard's run."""

    format: str | None
    run_id: str
    started_at: str
    cwd: str
    samples_files: tuple[str, ...]
    cli: Mapping[str, Any]
    settings: RunSettings = msgspec.field(default_factory=RunSettings)
    target: Mapping[str, Any] | None = None
    judge: Mapping[str, Any] | None = None
    git: str | None = None
    shard: Mapping[str, Any] | UnsetType = UNSET  # read by omk.records.shard, loaded only when there is one


def read_line(text: bytes, kind: type[T], origin: str, expected: str) -> T:
    """A run folder's record (`text`, read from `origin`) as its written layout `kind`: its
    `format` checked first, then every field by msgspec; anything wrong is one located line."""
    try:
        line = msgspec.json.decode(text, type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError):
        data = _parsed(text, origin)
        if isinstance(data, dict):
            _check_format(data.get("format"), expected, origin)
        line = convert(data, kind, origin, nulls=True)
    _check_format(getattr(line, "format", None), expected, origin)
    return line


def _parsed(text: bytes, origin: str) -> Any:
    """The JSON values of a record's text; an InputError of one line when it is not JSON."""
    try:
        return json.loads(text.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{origin}: nested too deeply to read") from None


def _check_format(found: Any, expected: str, origin: str) -> None:
    if found != expected:
        raise InputError(f"{origin}: format: expected {expected!r}, found {shown(found)}")


def read_shard(data: Mapping[str, Any] | UnsetType, origin: str) -> tuple[ShardInfo | None, tuple[int, ...]]:
    """A run folder record's `shard` and the positions run.json keeps in it; loaded only when the
    record has one (a plain run has none)."""
    if data is UNSET or not data:
        return None, ()
    from omk.records.shard import ShardInfo

    return ShardInfo.read_placed(data, origin, "shard", hinted=False)
