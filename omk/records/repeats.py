"""The records of a repeated run (docs/report-format.md): `summary.variance`, where the
composite's spread comes from under `--repeat` / `--judge-repeat`, and report.json's `repeats`,
each sample's runs and pass@k / pass^k. A run without repeats never loads them.

The `--repeat` records are msgspec structs (omk.records.wire), their intervals the report's
`Bounds`, written and read as their fields. `VarianceSources` is written by hand and read through
a record of the written layout (`VarianceLine`): report.json groups its figures into objects
(`components`, `shares`, `cost_per_call`) that the record keeps as fields of its own."""

from __future__ import annotations

from typing import Any

import msgspec

from omk.records.parts import Bounds
from omk.records.wire import HINT, JsonRecord, Number, convert


class VarianceSources(msgspec.Struct, frozen=True, gc=False):
    """Where the composite's spread comes from under `--repeat` / `--judge-repeat`
    (`summary.variance`, omk/scoring/variance.py): the variance of one score due to the sample
    (difficulty), the agent's run-to-run variation and one judge call's noise; each source's share
    of the variance of the run's mean composite; and what narrows that interval most per dollar
    (`advice`: "samples", "repeats" or "judge_calls"; per call when a cost is unknown)."""

    samples: int
    repeats: int
    judge_calls: int
    sample_var: Number
    run_var: Number
    judge_var: Number | None  # None when the judge was asked once per item (not measurable)
    shares: tuple[tuple[str, Number], ...]
    target_cost: Number | None  # per target call
    judge_cost: Number | None  # per judge call
    advice: str | None
    per_dollar: bool
    advice_without_samples: str | None = None  # the better of repeats and judge calls

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "repeats": self.repeats,
            "judge_calls": self.judge_calls,
            "components": {"sample": self.sample_var, "run": self.run_var, "judge": self.judge_var},
            "shares": dict(self.shares),
            "cost_per_call": {"target": self.target_cost, "judge": self.judge_cost},
            "advice": self.advice,
            "advice_without_samples": self.advice_without_samples,
            "per_dollar": self.per_dollar,
        }

    @classmethod
    def read(cls, data: Any, origin: str = "report", at: str = "summary.variance") -> VarianceSources:
        """`summary.variance` as report.json holds it (found at `at` of `origin`), read back."""
        return convert(data, VarianceLine, origin, at, HINT, nulls=True).record()


class _Parts(msgspec.Struct, frozen=True, gc=False):
    sample: Number | None = None
    run: Number | None = None
    judge: Number | None = None


class _Costs(msgspec.Struct, frozen=True, gc=False):
    target: Number | None = None
    judge: Number | None = None


class VarianceLine(msgspec.Struct, frozen=True, gc=False):
    """`summary.variance` as written: its figures grouped into objects; a missing variance is 0."""

    samples: int = 0
    repeats: int = 1
    judge_calls: int = 1
    components: _Parts = _Parts()
    shares: _Parts = _Parts()
    cost_per_call: _Costs = _Costs()
    advice: str | None = None
    advice_without_samples: str | None = None
    per_dollar: bool = False

    def record(self) -> VarianceSources:
        parts, shares, costs = self.components, self.shares, self.cost_per_call
        return VarianceSources(
            self.samples, self.repeats, self.judge_calls, parts.sample or 0, parts.run or 0, parts.judge,
            tuple((k, v) for k, v in (("sample", shares.sample), ("run", shares.run), ("judge", shares.judge)) if v is not None),
            costs.target, costs.judge, self.advice, self.per_dollar, self.advice_without_samples,
        )  # fmt: skip


class KMean(JsonRecord, frozen=True):
    """pass@k or pass^k for one k over the run: the mean over the `samples` run at least k times."""

    k: int = 0
    samples: int = 0
    mean: Number | None = None
    ci: Bounds | None = None


class CompositeSpread(JsonRecord, frozen=True):
    """A sample's composite over its scored runs: mean, sample standard deviation, min and max."""

    mean: Number | None = None
    stddev: Number | None = None
    min: Number | None = None
    max: Number | None = None


class RepeatSample(JsonRecord, frozen=True):
    """One sample under `--repeat N`: its runs, passes, composite spread, and pass@k / pass^k for
    k = 1 … runs (index 0 is k = 1)."""

    sample_id: str = ""
    runs: int = 0
    errored: int = 0
    passed: int = 0
    pass_rate: Number | None = None
    composite: CompositeSpread = CompositeSpread()
    pass_at_k: tuple[Number, ...] = ()
    pass_hat_k: tuple[Number, ...] = ()

    @property
    def flaky(self) -> bool:
        return 0 < self.passed < self.runs


class Repeats(JsonRecord, frozen=True):
    """The spread under `--repeat N` (report.json's `repeats`): sample-level counts, each sample
    (flaky ones first), and pass@k / pass^k over the run for k = 1 … N."""

    n: int | None = None
    samples: int | None = None
    always_passed: int | None = None
    flaky: int | None = None
    never_passed: int | None = None
    pass_at_k: tuple[KMean, ...] = ()
    pass_hat_k: tuple[KMean, ...] = ()
    per_sample: tuple[RepeatSample, ...] = ()
