"""An experiment's `experiment.json` (its variants, seed and choices), written when an experiment
starts and read back for `--resume` and `omk merge`; a plain run never loads it. Errors name the
file and the field, as run.json's do (omk.records.manifest).

Written and read by msgspec through a record of the written layout (`_ExperimentLine`): the file
starts with its `format`, which no field holds, and writes `shard` and `ablation` only when set.
Checked by hand, as no type says them: the format, which comes first; that there are variants.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from omk.core.errors import InputError
from omk.records.manifest import read_line, read_shard
from omk.records.wire import Number, plain

if TYPE_CHECKING:
    from omk.records.shard import ShardInfo

EXPERIMENT_FORMAT = "omk-experiment-run/1"


class RecordedVariant(msgspec.Struct, frozen=True, gc=False):
    """One variant as experiment.json records it (the engine's Variant, field for field)."""

    name: str
    role: str = "treatment"
    baseline: bool = False
    system: str | None = None
    skill: str | tuple[str, ...] | None = None
    target: str | None = None
    model: str | None = None
    params: Mapping[str, Any] = msgspec.field(default_factory=dict)


class ExperimentManifest(msgspec.Struct, frozen=True, gc=False):
    """experiment.json: an experiment's variants, seed and choices, for `--resume` and `omk merge`."""

    run_id: str
    started_at: str
    seed: int
    trivial: Number
    variants: tuple[RecordedVariant, ...]
    require: str | None = None
    max_cost_increase: Number | None = None
    pairwise: bool = False
    shard: ShardInfo | None = None
    ablation: Mapping[str, Any] | None = None  # --ablate: the skill's parts, read by the engine's AblationPlan

    def to_json(self) -> dict[str, Any]:
        fields = msgspec.structs.asdict(self)
        shard, ablation = fields.pop("shard"), fields.pop("ablation")
        line = _ExperimentLine(
            EXPERIMENT_FORMAT, **fields, shard=UNSET if shard is None else shard.to_json(), ablation=UNSET if ablation is None else ablation
        )
        data: dict[str, Any] = plain(line)
        return data

    @classmethod
    def read(cls, text: bytes, origin: str) -> ExperimentManifest:
        line = read_line(text, _ExperimentLine, origin, EXPERIMENT_FORMAT)
        if not line.variants:
            raise InputError(f"{origin}: variants: expected a list of the variants, found none")
        fields = msgspec.structs.asdict(line)
        del fields["format"], fields["shard"], fields["ablation"]
        shard, _ = read_shard(line.shard, origin)
        return cls(**fields, shard=shard, ablation=None if line.ablation is UNSET else line.ablation)

    @classmethod
    def read_file(cls, path: Path) -> ExperimentManifest:
        """experiment.json read by the run-file rules; an InputError of one line when it cannot be."""
        from omk.io.safe_files import read_run_file

        try:
            text = read_run_file(path)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return cls.read(text, str(path))


class _ExperimentLine(msgspec.Struct, frozen=True, gc=False):
    """experiment.json as written: its format first, `shard` and `ablation` only when set."""

    format: str | None
    run_id: str
    started_at: str
    seed: int
    trivial: Number
    require: str | None = None
    max_cost_increase: Number | None = None
    pairwise: bool = False
    variants: tuple[RecordedVariant, ...] = ()
    shard: Mapping[str, Any] | UnsetType = UNSET  # read by omk.records.shard, loaded only when there is one
    ablation: Mapping[str, Any] | UnsetType = UNSET  # read by the engine's AblationPlan
