"""Splitting a run into N disjoint shards (`omk eval --shard I/N`) that CI jobs run apart.

A sample belongs to shard `1 + sha256(sample_id) mod N`: the same split on every machine and in
every run, whatever the order of the samples files. Every repeat of a sample, and in an experiment
every variant of it, goes with the sample, so pairs stay whole. Each shard records a fingerprint of
the whole plan (every sample, the settings that shape the results, the targets, the seed) and the
place of its samples in the plan, so `omk merge` can check that its shards belong together and put
their results back in the order one unsharded run would have.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import ConfigError
from omk.records.shard import MAX_SHARDS
from omk.samples.model import Sample

if TYPE_CHECKING:
    from omk.records.shard import ShardInfo


class ShardSpec(msgspec.Struct, frozen=True, gc=False):
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """`I/N` with 1 <= I <= N; a ConfigError names what is wrong."""
        index, slash, count = str(text).partition("/")
        try:
            spec = cls(int(index), int(count))
        except ValueError:
            spec = None
        if not slash or spec is None or not 1 <= spec.index <= spec.count:
            raise ConfigError(f"--shard: expected I/N with 1 <= I <= N, e.g. 2/4 (got {text!r})")
        if spec.count > MAX_SHARDS:
            raise ConfigError(f"--shard: at most {MAX_SHARDS} shards (got {text!r})")
        return spec


def shard_of(sample_id: str, count: int) -> int:
    """The shard (1 … count) a sample belongs to: a stable hash of its id, nothing else."""
    digest = hashlib.sha256(sample_id.encode("utf-8", "surrogatepass")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def fingerprint(parts: Any) -> str:
    """A sha256 over a JSON value (keys sorted): the same plan gives the same text everywhere."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def plan_fingerprint(samples: list[Sample], choices: dict[str, Any]) -> str:
    """The whole plan: every sample (its id and its fields as written) and the choices that shape
    the results (targets, judge, threshold, repeat, filter, seed).

    The sha256 of `fingerprint({"samples": [[id, fields], …], "choices": choices})`, fed one sample
    at a time: the text of a plan of 100,000 samples is hundreds of megabytes, never built whole."""

    def text(value: Any) -> bytes:
        return json.dumps(value, sort_keys=True, ensure_ascii=True, default=str).encode("ascii")

    digest = hashlib.sha256(b'{"choices": ' + text(choices) + b', "samples": [')
    for i, s in enumerate(samples):
        digest.update(b", " + text([s.sample_id, s.raw]) if i else text([s.sample_id, s.raw]))
    digest.update(b"]}")
    return digest.hexdigest()


def derived_seed(plan: str) -> int:
    """The seed of a sharded experiment given none: taken from the plan, so every shard shares it."""
    return int(plan[:8], 16) % 2**31


class Split(msgspec.Struct, frozen=True):
    samples: list[Sample]  # this shard's samples, in plan order (all of them for a run without --shard)
    info: ShardInfo | None  # None: the run is not split
    positions: list[int] | None  # each one's place in the whole plan (run.json keeps them for `omk merge`)
    whole: list[Sample] | None = None  # the samples of every shard


def take_shard(samples: list[Sample], spec: ShardSpec, choices: dict[str, Any]) -> Split:
    """This shard's part of `samples` (the whole plan, in order)."""
    from omk.records.shard import ShardInfo  # loaded only by a split run

    plan = plan_fingerprint(samples, choices)
    chosen = [(i, s) for i, s in enumerate(samples) if shard_of(s.sample_id, spec.count) == spec.index]
    return Split([s for _, s in chosen], ShardInfo(spec.count, plan, spec.index), [i for i, _ in chosen], samples)
