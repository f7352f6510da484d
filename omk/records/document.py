"""report.json as omk writes and reads it (docs/report-format.md): the summary, its categories,
the `--repeat` spread, and `ReportDocument`, the whole report as every format reads it.

`ReportDocument.from_dict(data, origin)` checks the shape of everything the formats read and
raises an `InputError` naming the file and the field when a report was edited into a shape omk
never writes; missing fields (reports written by an older omk) take the value a reader would
assume. The engine hands the formats the same view built from `Report.to_dict()`, so a run and
`omk report RUN_DIR` render the same bytes. Values are kept as written (no rounding, an integer
stays an integer); JSON values a format only shows (an assertion's `value`, a tool call's input,
a judge block's extra fields) stay plain JSON.

These records keep their own `to_json` and `from_json` (not msgspec's encoding of their fields, as
omk.records.wire's `JsonRecord`s have): `Category` writes its intervals only in a report that has
them (`intervals`, known from whether `composite_ci` was written); `Summary` writes `scores_ci`
with `pass_rate_ci`, `variance` and `capabilities` only when set, reads a `repeat` of 0 or null as
1 and loads the `--repeat` records only when a report has the block; `Capability` reads a null name
as "". `ReportDocument` has no `to_json`: report.json is written from the dictionary it was read
from (`data`). And every reader takes a missing or null field as its default (a report of an older
omk lacks the fields added since; msgspec's typed read refuses a null where the type has none) and
keeps a number as written (an integer stays one, where msgspec reads it into a `float` field as a
float and the report would be written back with `.0`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import InputError
from omk.core.lazy import load_ref
from omk.records.fields import Fields, Number
from omk.records.parts import Bounds as Bounds
from omk.records.parts import LayerBounds as LayerBounds
from omk.records.parts import LayerMeans as LayerMeans
from omk.records.parts import RunTarget as RunTarget
from omk.records.parts import bounds_json
from omk.records.result import SampleResult

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

    @classmethod
    def from_json(cls, f: Fields) -> Category:
        return cls(
            f.str("category"), f.int("total"), f.int("passed"), f.int("failed"), f.int("errored"), f.num("pass_rate"), f.num("composite"),
            Bounds.from_json(f.obj("pass_rate_ci")), Bounds.from_json(f.obj("composite_ci")), "composite_ci" in f.data,
        )  # fmt: skip


class Capability(msgspec.Struct, frozen=True, gc=False):
    """One entry of `summary.capabilities`: the results of the samples that name a capability
    (grouped as the doctor groups them, shown under the first spelling seen; a sample that names
    several counts in each). `samples` counts samples, `total` their results (runs under
    `--repeat`); the intervals are None below 2 samples."""

    capability: str
    samples: int
    total: int
    passed: int
    failed: int
    errored: int
    pass_rate: Number | None
    composite: Number | None
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

    @classmethod
    def from_json(cls, f: Fields) -> Capability:
        return cls(
            f.str("capability") or "", f.int("samples"), f.int("total"), f.int("passed"), f.int("failed"), f.int("errored"),
            f.num("pass_rate"), f.num("composite"), Bounds.from_json(f.obj("pass_rate_ci")), Bounds.from_json(f.obj("composite_ci")),
        )  # fmt: skip


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
    def from_json(cls, f: Fields) -> Summary:
        return cls(
            total=f.int("total"),
            ok=f.int("ok"),
            errored=f.int("errored"),
            passed=f.int("passed"),
            failed=f.int("failed"),
            cost_usd=f.num("cost_usd"),
            judge_cost_usd=f.num("judge_cost_usd"),
            duration_ms=f.num("duration_ms"),
            scores=LayerMeans.from_json(f.obj("scores")),
            threshold=f.num("threshold"),
            gate_passed=f.bool("gate_passed"),
            skipped_judge_items=f.int("skipped_judge_items"),
            skipped_judge_reason=f.str("skipped_judge_reason"),
            cached=f.int("cached"),
            repeat=f.int("repeat", 1) or 1,
            categories=tuple(Category.from_json(c) for c in f.objs("categories")),
            scores_ci=LayerBounds.from_json(f.obj("scores_ci")),
            pass_rate_ci=Bounds.from_json(f.obj("pass_rate_ci")),
            variance=_block(f.obj("variance"), "omk.records.repeats:VarianceSources"),
            capabilities=tuple(Capability.from_json(c) for c in f.objs("capabilities")),
        )

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
        f = Fields(data, origin)
        results: Sequence[SampleResult] = rows if rows is not None else _results(data["results"], origin)
        judge = f.obj("judge")  # an empty block is no judge
        return cls(
            data=data,
            run_id=f.str("run_id"),
            omk_version=f.str("omk_version"),
            started_at=f.str("started_at"),
            finished_at=f.str("finished_at"),
            samples_files=f.strs("samples_files"),
            target=RunTarget.from_json(f.obj("target")),
            judge=_block(judge if judge is not None and judge.data else None, "omk.records.judge_settings:JudgeSettings"),
            summary=Summary.from_json(f.obj("summary")),  # type: ignore[arg-type]  # checked above: the summary is an object
            results=results,
            repeats=_block(f.obj("repeats"), "omk.records.repeats:Repeats"),
            warnings=f.strs("warnings"),
            experiment=ed.ExperimentBlock.from_json(f.obj("experiment")),
            pairs=ed.report_pairs(f),
            triggering=_block(f.obj("triggering"), "omk.records.triggering:Triggering"),
            shard=_block(f.obj("shard"), "omk.records.shard:ShardInfo"),
            budget=_block(f.obj("budget"), "omk.records.budget:BudgetBlock"),
            gold=_block(f.obj("gold"), "omk.records.gold:GoldCheck"),
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


def _results(items: list[Any], origin: str) -> tuple[SampleResult, ...]:
    return tuple(SampleResult.read(r, origin, f"results[{i}]") for i, r in enumerate(items))


def _block(f: Fields | None, ref: str) -> Any:
    """A feature block read by its record (`"module:Class"`), loaded only when the report has the
    block: a plain run never reads those modules."""
    return None if f is None else load_ref(ref).from_json(f)  # type: ignore[attr-defined]  # each ref names a record with from_json
