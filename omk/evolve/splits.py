"""The seeded, stratified split of the samples into train, selection and test.

A sample's kind is `should-fire` (it checks `skill_used` without `not`), `near-miss` (it checks
`skill_used` with `not: true`) or `task` (anything else); its stratum is its kind and category.
Each stratum is shuffled with a generator seeded by the run's seed and the stratum's name, the
strata are laid end to end in sorted order, and each position goes to the split furthest behind
its share so far (a weighted round robin). So every stratum is spread over the three splits in
proportion (within one sample), the totals match the shares (within one sample), and the same
samples and seed always give the same split, whatever order the files list them in.

The improver sees train only; candidates are compared on selection; the test split is run
exactly twice, at the end (the original skill and the selected one). Each split needs enough
samples for its comparison to be able to say yes at all (`needed`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from omk.core.errors import ConfigError

if TYPE_CHECKING:
    from omk.samples.model import Sample

SPLITS = ("train", "selection", "test")
KINDS = ("should-fire", "near-miss", "task")
DEFAULT_SHARES = (0.5, 0.25, 0.25)


class EvolveSplit(msgspec.Struct, frozen=True, gc=False):
    """The sample ids of each split, in the order the samples were given."""

    train: tuple[str, ...]
    selection: tuple[str, ...]
    test: tuple[str, ...]

    def of(self, name: str) -> tuple[str, ...]:
        return tuple(getattr(self, name))

    def counts(self) -> dict[str, int]:
        return {name: len(self.of(name)) for name in SPLITS}


def parse_shares(text: str) -> tuple[float, float, float]:
    """`--split 50/25/25` (any three positive numbers; they are scaled to sum to 1)."""
    parts = text.split("/")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 3 or any(not math.isfinite(v) or v <= 0 for v in values):
        raise ConfigError(f"--split {text!r}: expected three positive numbers TRAIN/SELECT/TEST, e.g. 50/25/25")
    total = sum(values)
    return (values[0] / total, values[1] / total, values[2] / total)


def sample_kind(sample: Sample) -> str:
    """`should-fire`, `near-miss` or `task` (see the module); a conversation's turns count too."""
    specs = list(sample.assertions)
    for turn in sample.turns:
        specs.extend(turn.assertions)
    used = [bool(s.raw.get("not")) for s in specs if s.type == "skill_used"]
    if not used:
        return "task"
    return "near-miss" if all(used) else "should-fire"


def stratum(sample: Sample) -> str:
    return f"{sample_kind(sample)}/{sample.category or ''}"


def split_ids(strata: Sequence[tuple[str, str]], shares: Sequence[float], seed: int) -> EvolveSplit:
    """The split of (sample id, stratum) pairs (see the module); pure and deterministic."""
    groups: dict[str, list[str]] = {}
    for sample_id, name in strata:
        groups.setdefault(name, []).append(sample_id)
    laid: list[str] = []
    for name in sorted(groups):
        ids = sorted(groups[name])
        random.Random(f"omk-evolve:{seed}:{name}").shuffle(ids)
        laid.extend(ids)
    given = [0, 0, 0]
    where: dict[str, int] = {}
    for position, sample_id in enumerate(laid, 1):
        behind = [shares[i] * position - given[i] for i in range(3)]
        pick = max(range(3), key=lambda i: (behind[i], -i))
        given[pick] += 1
        where[sample_id] = pick
    order = [sample_id for sample_id, _ in strata]
    chosen = [tuple(s for s in order if where[s] == i) for i in range(3)]
    return EvolveSplit(*chosen)


def needed(alpha: float, tests: int) -> int:
    """The fewest paired samples with which a comparison at level alpha / tests can be significant
    at all: even when every sample improves, the exact sign test's p = 2 · 0.5ⁿ must fall below
    it. With fewer, no result could ever pass, and running the comparison only spends money."""
    n = 1
    while 2.0 * 0.5**n >= alpha / tests:
        n += 1
    return n


def split_samples(samples: Sequence[Sample], shares: Sequence[float], seed: int, alpha: float, tests: int) -> EvolveSplit:
    """The split of the samples, or a one-line refusal saying how many each split needs and why."""
    ids = [s.sample_id for s in samples]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ConfigError(f"omk evolve: sample ids must be unique to split the samples; repeated: {', '.join(repeated[:5])}")
    split = split_ids([(s.sample_id, stratum(s)) for s in samples], shares, seed)
    need = {"train": 1, "selection": needed(alpha, tests), "test": needed(alpha, 1)}
    counts = split.counts()
    short = [name for name in SPLITS if counts[name] < need[name]]
    if short:
        have = ", ".join(f"{name} {counts[name]} (needs {need[name]})" for name in SPLITS)
        raise ConfigError(
            f"omk evolve: too few samples for the split: {have}; the selection split needs {need['selection']} so that a candidate "
            f"could pass a test at {alpha:g}/{tests} (every candidate the run may try), the test split {need['test']} so that the "
            f"final check could pass at {alpha:g}; add samples or change --split, --rounds or --candidates"
        )
    return split
