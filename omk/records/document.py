"""report.json as omk writes and reads it (docs/report-format.md): the summary, its categories,
the `--repeat` spread, and `ReportDocument`, the whole report as every format reads it.

`ReportDocument.from_dict(data, origin)` checks the shape of everything the formats read and
raises an `InputError` naming the file and the field when a report was edited into a shape omk
never writes; missing fields (reports written by an older omk) take the value a reader would
assume. The engine hands the formats the same view built from `Report.to_dict()`, so a run and
`omk report RUN_DIR` render the same bytes. Values are kept as written (no rounding, an integer
stays an integer); JSON values a format only shows (an assertion's `value`, a tool call's input,
a judge block's extra fields) stay plain JSON.

The summary is read by msgspec's typed decoding (`Summary.read`; a wrong field is worded by
omk.records.wire, a missing or null field takes its default), through a record of the written
layout where the writing is not the fields (`_SummaryLine`, `_CategoryLine`): `Category` writes its
intervals only in a report that has them (`intervals`, known from whether `composite_ci` was
written, even null), `Summary` writes `scores_ci` with `pass_rate_ci`, `variance` and
`capabilities` only when set (their `to_json` stays written by hand), reads a `repeat` of 0 as 1
and loads the `--repeat` records only when a report has the block. `Capability` is read as its
fields. `ReportDocument` has no `to_json`: report.json is written from the dictionary it was read
from (`data`); its own fields (the run id, the files, the warnings) are read by msgspec too
(`_Head`). Each block is read by its record's `read(data, origin, at)`, typed by msgspec (a block
that is not an object is named here); only the experiment block and the pairwise comparisons
(omk/records/experiment_block.py) still read field by field, through omk/records/fields.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError
from omk.core.lazy import load_ref
from omk.records.parts import Bounds as Bounds
from omk.records.parts import LayerBounds as LayerBounds
from omk.records.parts import LayerMeans as LayerMeans
from omk.records.parts import RunTarget as RunTarget
from omk.records.parts import bounds_json
from omk.records.result import SampleResult
from omk.records.wire import HINT, Number, convert, shown

# Bounds, LayerBounds, LayerMeans and RunTarget are shared with other blocks (omk.records.parts),
# still importable from here.

if TYPE_CHECKING:  # the feature blocks load when a report has them
    from omk.records.budget import BudgetBlock
    from omk.records.experiment_block import ExperimentBlock, Pair
    from omk.records.gold import GoldCheck
    from omk.records.judge_settings import JudgeSettings
    from omk.records.repeats import Repeats, VarianceSources
    from omk.records.rows import ResultRows
    from omk.records.shard import ShardInfo
    from omk.records.triggering import Triggering

FORMAT = "omk-report/1"
LAYERS = ("fact", "behavior", "judge")


class Category(msgspec.Struct, frozen=True, gc=False):
    """One entry of `summary.categories`; `category` is None for the uncategorised."""

    category: str | None
    total: int
    passed: int
    failed: int
    errored: int
    pass_rate: Number | None
    composite: Number | None
    # their 95% intervals (None below 2 samples); `intervals` False in a report from before them
    pass_rate_ci: Bounds | None = None
    composite_ci: Bounds | None = None
    intervals: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "category": self.category,
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "pass_rate": self.pass_rate,
            "composite": self.composite,
        }
        if self.intervals:
            out |= {"pass_rate_ci": bounds_json(self.pass_rate_ci), "composite_ci": bounds_json(self.composite_ci)}
        return out



class Capability(msgspec.Struct, frozen=True, gc=False):
    """One entry of `summary.capabilities`: the results of the samples that name a capability
    (grouped as the doctor groups them, shown under the first spelling seen; a sample that names
    several counts in each). `samples` counts samples, `total` their results (runs under
    `--repeat`); the intervals are None below 2 samples."""

    capability: str = ""
    samples: int = 0
    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    pass_rate: Number | None = None
    composite: Number | None = None
    pass_rate_ci: Bounds | None = None
    composite_ci: Bounds | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "samples": self.samples,
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "pass_rate": self.pass_rate,
            "composite": self.composite,
            "pass_rate_ci": bounds_json(self.pass_rate_ci),
            "composite_ci": bounds_json(self.composite_ci),
        }



class Summary(msgspec.Struct, frozen=True, gc=False):
    """The run's counts, mean scores and gate (`summary` of report.json)."""

    total: int = 0
    ok: int = 0
    errored: int = 0
    passed: int = 0
    failed: int = 0
    cost_usd: float | None = None  # spent by the target this run (cached results cost nothing now)
    duration_ms: float | None = None
    scores: LayerMeans = LayerMeans()
    threshold: float | None = None
    gate_passed: bool = False
    skipped_judge_items: int = 0
    categories: tuple[Category, ...] = ()
    cached: int = 0
    judge_cost_usd: float | None = None
    skipped_judge_reason: str | None = None
    repeat: int = 1
    scores_ci: LayerBounds | None = None  # None in a report from before intervals
    pass_rate_ci: Bounds | None = None  # Wilson; None below 2 samples
    variance: VarianceSources | None = None  # with --repeat or --judge-repeat
    capabilities: tuple[Capability, ...] = ()  # written only when some sample names a capability

    def to_json(self) -> dict[str, Any]:
        return self._counts() | self._intervals()

    def _intervals(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.scores_ci is not None:
            out |= {"scores_ci": self.scores_ci.to_json(), "pass_rate_ci": bounds_json(self.pass_rate_ci)}
        if self.variance is not None:
            out["variance"] = self.variance.to_json()
        if self.capabilities:
            out["capabilities"] = [c.to_json() for c in self.capabilities]
        return out

    def _counts(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "ok": self.ok,
            "errored": self.errored,
            "passed": self.passed,
            "failed": self.failed,
            "cost_usd": self.cost_usd,
            "duration_ms": self.duration_ms,
            "scores": self.scores.to_json(),
            "threshold": self.threshold,
            "gate_passed": self.gate_passed,
            "skipped_judge_items": self.skipped_judge_items,
            "categories": [c.to_json() for c in self.categories],
            "cached": self.cached,
            "judge_cost_usd": self.judge_cost_usd,
            "skipped_judge_reason": self.skipped_judge_reason,
            "repeat": self.repeat,
        }

    @classmethod
    def read(cls, data: Any, origin: str = "report", at: str = "summary") -> Summary:
        """report.json's `summary` (found at `at` of `origin`) read back."""
        return convert(data, _SummaryLine, origin, at, HINT, nulls=True).record(origin, at)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.total if self.total else None


class ReportDocument(msgspec.Struct, frozen=True, gc=False):
    """report.json, typed. `data` is the dictionary it was read from: report.json is written from
    it as it is, fields this view does not type included."""

    data: Mapping[str, Any]
    run_id: str | None
    omk_version: str | None
    started_at: str | None
    finished_at: str | None
    samples_files: tuple[str, ...]
    target: RunTarget
    judge: JudgeSettings | None  # None when no judge ran
    summary: Summary
    results: Sequence[SampleResult]  # a tuple, or `ResultRows` read from report.json one at a time
    repeats: Repeats | None
    warnings: tuple[str, ...]
    experiment: ExperimentBlock | None  # only in an experiment's report
    pairs: tuple[Pair, ...]  # the pairwise judge's comparisons (also a pre-experiment report's `pairwise`)
    triggering: Triggering | None = None  # whether each skill fired when it should (`skill_used`)
    shard: ShardInfo | None = None  # a shard's report (`--shard I/N`) or a merge of shards (`omk merge`)
    budget: BudgetBlock | None = None  # `--budget-usd`: the limit, the spend and the runs left undone
    gold: GoldCheck | None = None  # the judge checked against people's labels (`--gold`, `gold:`)

    @classmethod
    def from_dict(cls, data: Any, origin: str = "report", rows: ResultRows | None = None) -> ReportDocument:
        """The typed report of a `report.json` dictionary read from `origin` (a file, or "report");
        `rows`: its results, read lazily from the file (`data` then holds none)."""
        from omk.records import experiment_block as ed

        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            raise InputError(f"{origin}: format: expected {FORMAT!r}, found {found!r}")
        if not isinstance(data.get("results"), list) or not isinstance(data.get("summary"), Mapping):
            raise InputError(f"{origin}: results/summary: missing; is this an omk report?")
        head = convert(data, _Head, origin, "", HINT, nulls=True)
        results: Sequence[SampleResult] = rows if rows is not None else _results(data["results"], origin)
        target = _object(data, "target", origin)
        experiment, pairs = ed.report_blocks(data, origin)
        return cls(
            data=data,
            run_id=head.run_id,
            omk_version=head.omk_version,
            started_at=head.started_at,
            finished_at=head.finished_at,
            samples_files=head.samples_files,
            target=RunTarget() if target is None else RunTarget.read(target, origin),
            judge=_block(data, "judge", origin, "omk.records.judge_settings:JudgeSettings"),
            summary=Summary.read(data["summary"], origin),
            results=results,
            repeats=_block(data, "repeats", origin, "omk.records.repeats:Repeats"),
            warnings=head.warnings,
            experiment=experiment,
            pairs=pairs,
            triggering=_block(data, "triggering", origin, "omk.records.triggering:Triggering"),
            shard=_block(data, "shard", origin, "omk.records.shard:ShardInfo"),
            budget=_block(data, "budget", origin, "omk.records.budget:BudgetBlock"),
            gold=_block(data, "gold", origin, "omk.records.gold:GoldCheck"),
        )

    @classmethod
    def of(cls, report: ReportDocument | Mapping[str, Any]) -> ReportDocument:
        """`report` typed: as it is when it already is, else read from its dictionary."""
        return report if isinstance(report, ReportDocument) else cls.from_dict(report)

    def whole(self) -> dict[str, Any]:
        """report.json as a dictionary, every result in it (read from the file if need be)."""
        texts = getattr(self.results, "texts", None)
        if texts is None:
            return dict(self.data)
        return {**self.data, "results": [json.loads(t) for t in texts()]}

    @property
    def judge_models(self) -> tuple[str, ...] | None:
        """The judge's models; None when no judge ran."""
        return self.judge.models if self.judge is not None else None

    @property
    def repeated(self) -> bool:
        """Whether the run repeated samples (`--repeat N`): some result has a repeat index above 0."""
        if self.repeats is not None and self.repeats.n is not None:
            return self.repeats.n > 1
        if "repeat" in (self.data.get("summary") or {}):  # the summary says (reports since --repeat)
            return self.summary.repeat > 1
        return any(r.repeat > 0 for r in self.results)


def read_document(path: Path) -> ReportDocument:
    """A finished run's report (its folder or its report.json), typed; bad input is an InputError.

    A report.json as omk writes it (one result per line) is read without its results, which are
    parsed one at a time when a format walks them (`ResultRows`); any other layout is read whole."""
    from omk.io.safe_files import UnsafeFile, read_run_file
    from omk.records.rows import read_lazily

    if path.is_dir():
        path = path / "report.json"
    try:
        found = read_lazily(path)
        if found is not None:
            data, rows = found
            return ReportDocument.from_dict(data, str(path), rows)
        data = json.loads(read_run_file(path).decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such report (expected a run folder or its report.json)") from None
    except UnsafeFile as exc:  # a FIFO, a device, /proc, or over the cap: it says so, path and all
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to read") from None
    return ReportDocument.from_dict(data, str(path))


class _Head(msgspec.Struct, frozen=True, gc=False):
    """report.json's own fields (the blocks are read by their records)."""

    run_id: str | None = None
    omk_version: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    samples_files: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


class _CategoryLine(msgspec.Struct, frozen=True, gc=False):
    """A category as written: its intervals are there (even null) only in a report that has them."""

    category: str | None = None
    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    pass_rate: Number | None = None
    composite: Number | None = None
    pass_rate_ci: Bounds | None = None
    composite_ci: Bounds | None | msgspec.UnsetType = msgspec.UNSET

    def record(self) -> Category:
        ci = self.composite_ci
        kept = ci is not msgspec.UNSET
        return Category(
            self.category, self.total, self.passed, self.failed, self.errored, self.pass_rate, self.composite,
            self.pass_rate_ci, ci if kept else None, kept,  # type: ignore[arg-type]  # UNSET ruled out
        )  # fmt: skip


class _SummaryLine(msgspec.Struct, frozen=True, gc=False):
    """`summary` as written: its categories and its variance as above; a `repeat` of 0 is 1."""

    total: int = 0
    ok: int = 0
    errored: int = 0
    passed: int = 0
    failed: int = 0
    cost_usd: Number | None = None
    duration_ms: Number | None = None
    scores: LayerMeans = LayerMeans()
    threshold: Number | None = None
    gate_passed: bool = False
    skipped_judge_items: int = 0
    categories: tuple[_CategoryLine, ...] = ()
    cached: int = 0
    judge_cost_usd: Number | None = None
    skipped_judge_reason: str | None = None
    repeat: int = 1
    scores_ci: LayerBounds | None = None
    pass_rate_ci: Bounds | None = None
    variance: Mapping[str, Any] | None = None  # read by its own record, loaded only when a report has one
    capabilities: tuple[Capability, ...] = ()

    def record(self, origin: str, at: str) -> Summary:
        return Summary(
            self.total, self.ok, self.errored, self.passed, self.failed, self.cost_usd, self.duration_ms, self.scores,
            self.threshold, self.gate_passed, self.skipped_judge_items, tuple(c.record() for c in self.categories),
            self.cached, self.judge_cost_usd, self.skipped_judge_reason, self.repeat or 1, self.scores_ci,
            self.pass_rate_ci, _variance(self.variance, origin, at), self.capabilities,
        )  # fmt: skip


def _variance(data: Mapping[str, Any] | None, origin: str, at: str) -> VarianceSources | None:
    if data is None:
        return None
    from omk.records.repeats import VarianceSources

    return VarianceSources.read(data, origin, f"{at}.variance")


def _results(items: list[Any], origin: str) -> tuple[SampleResult, ...]:
    return tuple(SampleResult.read(r, origin, f"results[{i}]") for i, r in enumerate(items))


def _block(data: Mapping[str, Any], key: str, origin: str, ref: str) -> Any:
    """The block under `key` read by its record (`"module:Class"`, whose `read` checks every
    field), loaded only when the report has the block: a plain run never reads those modules. An
    empty judge or shard block is none."""
    value = _object(data, key, origin)
    if value is None or (key in ("judge", "shard") and not value):
        return None
    return load_ref(ref).read(value, origin, key)  # type: ignore[attr-defined]  # each ref names a record with read


def _object(data: Mapping[str, Any], key: str, origin: str) -> Mapping[str, Any] | None:
    """The object under `key`; None when missing or null."""
    value = data.get(key)
    if value is not None and not isinstance(value, Mapping):
        raise InputError(f"{origin}: {key}: expected an object or null, found {shown(value)}{HINT}")
    return value
