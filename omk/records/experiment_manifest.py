"""An experiment's `experiment.json` (its variants, seed and choices), written when an experiment
starts and read back for `--resume` and `omk merge`; a plain run never loads it. Errors name the
file and the field, as run.json's do (omk.records.manifest).

Both records keep their own `to_json` and `from_json`: experiment.json starts with its `format`,
which no field holds, writes `shard` and `ablation` only when set, and a variant's `skill` is one
path or a list of them; the reader checks the format and names a missing `name` in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError
from omk.records.fields import Fields, Number
from omk.records.manifest import ManifestFields, _format, _shard, load

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

    def to_json(self) -> dict[str, Any]:
        skill = list(self.skill) if isinstance(self.skill, tuple) else self.skill
        return {
            "name": self.name, "role": self.role, "baseline": self.baseline, "system": self.system, "skill": skill,
            "target": self.target, "model": self.model, "params": dict(self.params),
        }  # fmt: skip

    @classmethod
    def from_json(cls, f: ManifestFields) -> RecordedVariant:
        skill: str | tuple[str, ...] | None = f.strs("skill") if isinstance(f.data.get("skill"), list) else f.str("skill")
        return cls(
            name=f.need("name", "string"), role=f.str("role", "treatment"), baseline=f.bool("baseline"),
            system=f.str("system"), skill=skill, target=f.str("target"), model=f.str("model"),
            params=f.mapping("params") or {},
        )  # fmt: skip


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
        data: dict[str, Any] = {
            "format": EXPERIMENT_FORMAT, "run_id": self.run_id, "started_at": self.started_at, "seed": self.seed,
            "trivial": self.trivial, "require": self.require, "max_cost_increase": self.max_cost_increase,
            "pairwise": self.pairwise, "variants": [v.to_json() for v in self.variants],
        }  # fmt: skip
        if self.shard is not None:
            data["shard"] = self.shard.to_json()
        if self.ablation is not None:
            data["ablation"] = dict(self.ablation)
        return data

    @classmethod
    def from_json(cls, f: ManifestFields) -> ExperimentManifest:
        _format(f, EXPERIMENT_FORMAT)
        variants = tuple(RecordedVariant.from_json(_as_manifest(v)) for v in f.objs("variants"))
        if not variants:
            raise f.fail("variants", "a list of the variants")
        return cls(
            run_id=f.need("run_id", "string"), started_at=f.need("started_at", "string"), seed=f.need("seed", "integer"),
            trivial=f.need("trivial", "number"), variants=variants, require=f.str("require"),
            max_cost_increase=f.num("max_cost_increase"), pairwise=f.bool("pairwise"),
            shard=_shard(f.obj("shard")), ablation=f.mapping("ablation"),
        )  # fmt: skip

    @classmethod
    def read(cls, text: bytes, origin: str) -> ExperimentManifest:
        return cls.from_json(load(text, origin))

    @classmethod
    def read_file(cls, path: Path) -> ExperimentManifest:
        """experiment.json read by the run-file rules; an InputError of one line when it cannot be."""
        from omk.io.safe_files import read_run_file

        try:
            text = read_run_file(path)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return cls.read(text, str(path))


def _as_manifest(f: Fields) -> ManifestFields:
    if not isinstance(f, ManifestFields):  # pragma: no cover - children keep their parent's class
        raise TypeError(f.origin)
    return f
