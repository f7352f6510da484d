"""The records of a repeated run (docs/report-format.md): `summary.variance`, where the
composite's spread comes from under `--repeat` / `--judge-repeat`, and report.json's `repeats`,
each sample's runs and pass@k / pass^k. A run without repeats never loads them."""

from __future__ import annotations

from typing import Any

from omk.frozen import record
from omk.records.fields import Fields, Number
from omk.records.parts import Bounds


@record
class VarianceSources:
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
    def from_json(cls, f: Fields | None) -> VarianceSources | None:
        if f is None:
            return None
        parts, shares, costs = f.obj("components"), f.obj("shares"), f.obj("cost_per_call")
        return cls(
            f.int("samples"), f.int("repeats", 1), f.int("judge_calls", 1),
            (parts.num("sample") if parts else None) or 0, (parts.num("run") if parts else None) or 0, parts.num("judge") if parts else None,
            tuple((k, shares.num(k)) for k in ("sample", "run", "judge") if shares and shares.num(k) is not None),
            costs.num("target") if costs else None, costs.num("judge") if costs else None, f.str("advice"), f.bool("per_dollar"),
            f.str("advice_without_samples"),
        )  # fmt: skip


@record
class KMean:
    """pass@k or pass^k for one k over the run: the mean over the `samples` run at least k times."""

    k: int
    samples: int
    mean: Number | None
    ci: Bounds | None

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "samples": self.samples,
            "mean": self.mean,
            "ci": self.ci.to_json() if self.ci else None,
        }

    @classmethod
    def from_json(cls, f: Fields) -> KMean:
        return cls(f.int("k"), f.int("samples"), f.num("mean"), Bounds.from_json(f.obj("ci")))


@record
class CompositeSpread:
    """A sample's composite over its scored runs: mean, sample standard deviation, min and max."""

    mean: Number | None = None
    stddev: Number | None = None
    min: Number | None = None
    max: Number | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "stddev": self.stddev, "min": self.min, "max": self.max}

    @classmethod
    def from_json(cls, f: Fields | None) -> CompositeSpread:
        return cls(f.num("mean"), f.num("stddev"), f.num("min"), f.num("max")) if f is not None else cls()


@record
class RepeatSample:
    """One sample under `--repeat N`: its runs, passes, composite spread, and pass@k / pass^k for
    k = 1 … runs (index 0 is k = 1)."""

    sample_id: str
    runs: int
    errored: int
    passed: int
    pass_rate: Number | None
    composite: CompositeSpread
    pass_at_k: tuple[Number, ...] = ()
    pass_hat_k: tuple[Number, ...] = ()

    @property
    def flaky(self) -> bool:
        return 0 < self.passed < self.runs

    def to_json(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "runs": self.runs,
            "errored": self.errored,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "composite": self.composite.to_json(),
            "pass_at_k": list(self.pass_at_k),
            "pass_hat_k": list(self.pass_hat_k),
        }

    @classmethod
    def from_json(cls, f: Fields) -> RepeatSample:
        return cls(
            str(f.str("sample_id", "")), f.int("runs"), f.int("errored"), f.int("passed"), f.num("pass_rate"),
            CompositeSpread.from_json(f.obj("composite")), _numbers(f, "pass_at_k"), _numbers(f, "pass_hat_k"),
        )  # fmt: skip


def _numbers(f: Fields, key: str) -> tuple[Number, ...]:
    values = f.list(key)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise Fields.error(f.origin, f"{f.at(key)}[{i}]", "a number", v)
    return tuple(values)


@record
class Repeats:
    """The spread under `--repeat N` (report.json's `repeats`): sample-level counts, each sample
    (flaky ones first), and pass@k / pass^k over the run for k = 1 … N."""

    n: int | None
    samples: int | None
    always_passed: int | None
    flaky: int | None
    never_passed: int | None
    per_sample: tuple[RepeatSample, ...] = ()
    pass_at_k: tuple[KMean, ...] = ()
    pass_hat_k: tuple[KMean, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "samples": self.samples,
            "always_passed": self.always_passed,
            "flaky": self.flaky,
            "never_passed": self.never_passed,
            "pass_at_k": [m.to_json() for m in self.pass_at_k],
            "pass_hat_k": [m.to_json() for m in self.pass_hat_k],
            "per_sample": [s.to_json() for s in self.per_sample],
        }

    @classmethod
    def from_json(cls, f: Fields | None) -> Repeats | None:
        if f is None:
            return None
        return cls(
            f.int("n", None),
            f.int("samples", None),
            f.int("always_passed", None),
            f.int("flaky", None),
            f.int("never_passed", None),
            per_sample=tuple(RepeatSample.from_json(s) for s in f.objs("per_sample")),
            pass_at_k=tuple(KMean.from_json(m) for m in f.objs("pass_at_k")),
            pass_hat_k=tuple(KMean.from_json(m) for m in f.objs("pass_hat_k")),
        )
