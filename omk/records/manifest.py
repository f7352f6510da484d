"""The run folder's own records: `run.json` (what a run is: its samples files, settings, command-line
choices, target and judge) and an experiment's `experiment.json` (its variants, seed and choices).

omk writes them when a run starts and reads them back for `--resume` and `omk merge`, through these
classes only. A field of the wrong type is one located line, e.g.
`run/experiment.json: seed: expected an integer, found "x"`; fields added since an older omk wrote
the folder take their defaults.

`RunSettings` and `RunManifest` keep their own `to_json` and `from_json`: run.json starts with its
`format`, which no field holds, writes a shard's `positions` inside its `shard` object (and the
shard only for a shard's run), and its reader takes a missing or null setting as its default (a
`repeat` of 0 as 1, no `formats` as json), where msgspec's typed read refuses a null.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError
from omk.records.fields import Fields, Number, _shown

if TYPE_CHECKING:
    from omk.records.shard import ShardInfo

RUN_FORMAT = "omk-run/1"


class ManifestFields(Fields):
    """Fields of a run folder's record: its errors name the record, not report.json."""

    __slots__ = ()

    @staticmethod
    def error(origin: str, path: str, expected: str, found: Any) -> InputError:
        return InputError(f"{origin}: {path or '(top)'}: expected {expected}, found {_shown(found)}")

    def need(self, key: str, kind: str) -> Any:
        """A field omk always writes: missing or null is an error too."""
        value = self.str(key) if kind == "string" else self.int(key, None) if kind == "integer" else self.num(key)
        if value is None:
            raise self.fail(key, "an integer" if kind == "integer" else f"a {kind}")
        return value

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        found = self.obj(key)
        return None if found is None else found.data


def load(text: bytes, origin: str) -> ManifestFields:
    """The top object of a record's text; an InputError of one line when it is not JSON."""
    try:
        data = json.loads(text.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{origin}: nested too deeply to read") from None
    f = ManifestFields.of(data, origin, "")
    if not isinstance(f, ManifestFields):  # pragma: no cover - `of` builds the class it is called on
        raise TypeError(origin)
    return f


def _format(f: ManifestFields, expected: str) -> None:
    if f.data.get("format") != expected:
        raise f.fail("format", repr(expected))


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

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target, "judge": list(self.judge), "threshold": self.threshold,
            "concurrency": self.concurrency, "timeout": self.timeout, "retries": self.retries,
            "repeat": self.repeat, "formats": list(self.formats), "lang": self.lang, "config_file": self.config_file,
        }  # fmt: skip

    @classmethod
    def from_json(cls, f: Fields | None) -> RunSettings:
        if f is None:
            return cls()
        return cls(
            target=f.str("target"), judge=f.strs("judge"), threshold=f.num("threshold", 3.5),
            concurrency=f.int("concurrency", 4), timeout=f.num("timeout", 120.0), retries=f.int("retries", 2),
            repeat=f.int("repeat", 1) or 1, formats=f.strs("formats") or ("json",), lang=f.str("lang", "en"),
            config_file=f.str("config_file"),
        )  # fmt: skip


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
        data: dict[str, Any] = {
            "format": RUN_FORMAT, "run_id": self.run_id, "started_at": self.started_at, "cwd": self.cwd,
            "samples_files": list(self.samples_files), "cli": dict(self.cli), "settings": self.settings.to_json(),
            "target": None if self.target is None else dict(self.target),
            "judge": None if self.judge is None else dict(self.judge), "git": self.git,
        }  # fmt: skip
        if self.shard is not None:
            data["shard"] = {**self.shard.to_json(), "positions": list(self.positions)}
        return data

    @classmethod
    def from_json(cls, f: ManifestFields) -> RunManifest:
        _format(f, RUN_FORMAT)
        files = f.strs("samples_files")
        if not isinstance(f.data.get("samples_files"), list) or not all(files):
            raise f.fail("samples_files", "a list of samples files' paths")
        cli = f.mapping("cli")
        if cli is None:
            raise f.fail("cli", "an object")
        shard = f.obj("shard")
        positions = shard.list("positions") if shard is not None else []
        if not all(type(p) is int for p in positions):
            raise f.fail("shard", "positions that are integers")
        return cls(
            run_id=f.need("run_id", "string"), started_at=f.need("started_at", "string"), cwd=f.need("cwd", "string"),
            samples_files=files, cli=cli, settings=RunSettings.from_json(f.obj("settings")),
            target=f.mapping("target"), judge=f.mapping("judge"), git=f.str("git"),
            shard=_shard(shard), positions=tuple(positions),
        )  # fmt: skip

    @classmethod
    def read(cls, text: bytes, origin: str) -> RunManifest:
        return cls.from_json(load(text, origin))


def _shard(f: Fields | None) -> ShardInfo | None:
    """A shard's record, loaded only when the manifest has one (a plain run has none)."""
    if f is None:
        return None
    from omk.records.shard import ShardInfo

    return ShardInfo.read(f.data, f.origin, f.path, hinted=False) if f.data else None
