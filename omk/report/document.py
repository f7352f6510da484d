"""The report as every format reads it: frozen dataclasses over report.json (docs/report-format.md).

`ReportDocument.from_dict(data, origin)` checks the shape of everything the formats read and
raises an `InputError` naming the file and the field when a report was edited into a shape omk
never writes; missing fields (reports written by an older omk) take the value a reader would
assume. The engine hands the formats the same view built from `Report.to_dict()`, so a run and
`omk report RUN_DIR` render the same bytes. Values are kept as written (no rounding, an integer
stays an integer); JSON values a format only shows (an assertion's `value`, a tool call's input,
a judge block's extra fields) stay plain JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.errors import InputError
from omk.report.fields import Fields, Number

if TYPE_CHECKING:  # the experiment block's types read this module's
    from omk.report.experiment_document import Experiment, Pair
    from omk.report.result_rows import ResultRows

FORMAT = "omk-report/1"
LAYERS = ("fact", "behavior", "judge")


@dataclass(frozen=True, slots=True)
class Scores:
    """`fact`, `behavior`, `judge` (None where the layer is absent) and `composite`."""

    fact: Number | None = None
    behavior: Number | None = None
    judge: Number | None = None
    composite: Number | None = None

    @classmethod
    def parse(cls, f: Fields | None) -> Scores:
        if f is None:
            return cls()
        return cls(f.num("fact"), f.num("behavior"), f.num("judge"), f.num("composite"))

    def layer(self, name: str) -> Number | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)


@dataclass(frozen=True, slots=True)
class ToolCall:
    tool: str | None
    input: Any
    output: Any
    mocked: bool
    mock_key: str | None
    is_error: bool

    @classmethod
    def parse(cls, f: Fields) -> ToolCall:
        return cls(f.str("tool"), f.raw("input"), f.raw("output"), f.bool("mocked"), f.str("mock_key"), f.bool("is_error"))


@dataclass(frozen=True, slots=True)
class MockStats:
    hits: int | None
    misses: int | None
    per_mock: Mapping[str, Any]

    @classmethod
    def parse(cls, f: Fields | None) -> MockStats | None:
        if f is None or not f.data:
            return None
        per = f.obj("per_mock")
        return cls(f.int("hits", None), f.int("misses", None), per.data if per else {})


@dataclass(frozen=True, slots=True)
class Trace:
    """What the target reported; the agent CLI's fields (`api_latency_ms`, `stop_reason`,
    `session_id`) only from `claude:`."""

    turns: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    cost_usd: Number | None = None
    latency_ms: Number | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_read: int | None = None
    cache_creation: int | None = None
    mock_stats: MockStats | None = None
    notes: tuple[str, ...] = ()
    api_latency_ms: Number | None = None
    stop_reason: str | None = None
    session_id: str | None = None

    @classmethod
    def parse(cls, f: Fields | None) -> Trace:
        if f is None:
            return cls()
        tokens = f.obj("tokens") or Fields({}, f.origin)
        return cls(
            turns=f.int("turns", None),
            tool_calls=tuple(ToolCall.parse(c) for c in f.objs("tool_calls")),
            cost_usd=f.num("cost_usd"),
            latency_ms=f.num("latency_ms"),
            tokens_in=tokens.int("input", None),
            tokens_out=tokens.int("output", None),
            cache_read=tokens.int("cache_read", None),
            cache_creation=tokens.int("cache_creation", None),
            mock_stats=MockStats.parse(f.obj("mock_stats")),
            notes=f.strs("notes"),
            api_latency_ms=f.num("api_latency_ms"),
            stop_reason=f.str("stop_reason"),
            session_id=f.str("session_id"),
        )


@dataclass(frozen=True, slots=True)
class Assertion:
    """One assertion's outcome; an `assert-set` has its `children`."""

    type: str | None
    layer: str | None
    status: str | None
    passed: bool | None
    weight: Number | None
    negate: bool  # `not` in report.json
    value: Any
    metric: Number | None
    score: Number | None
    message: str | None
    error: bool
    children: tuple[Assertion, ...]

    @classmethod
    def parse(cls, f: Fields) -> Assertion:
        return cls(
            type=f.str("type"),
            layer=f.str("layer"),
            status=f.str("status"),
            passed=f.bool("passed", None),
            weight=f.num("weight"),
            negate=f.bool("not"),
            value=f.raw("value"),
            metric=f.num("metric"),
            score=f.num("score"),
            message=f.str("message"),
            error=f.bool("error"),
            children=tuple(cls.parse(c) for c in f.objs("children")),
        )

    @classmethod
    def from_dict(cls, data: Any, origin: str = "assertion") -> Assertion:
        return cls.parse(Fields.of(data, origin, ""))


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """The rubric's or one dimension's score and reason."""

    score: Any
    reason: str | None

    @classmethod
    def parse(cls, f: Fields) -> JudgeItem:
        return cls(f.raw("score"), f.str("reason"))


@dataclass(frozen=True, slots=True)
class JudgeBlock:
    """A result's (or a turn's) judge block: the layer score, the rubric, each dimension, and the
    block's other fields as written (`cost_usd`, `error`, an ensemble's members)."""

    score: Any
    rubric: JudgeItem | None
    dimensions: tuple[tuple[str, JudgeItem], ...]
    extra: Mapping[str, Any]

    @classmethod
    def parse(cls, f: Fields | None) -> JudgeBlock | None:
        if f is None or not f.data:
            return None
        rubric = f.data.get("rubric")
        dims = f.data.get("dimensions")
        holder = Fields({}, f.origin, f, "dimensions")
        return cls(
            score=f.raw("score"),
            rubric=JudgeItem.parse(Fields(rubric, f.origin, f, "rubric")) if isinstance(rubric, Mapping) else None,
            dimensions=tuple(
                (str(name), JudgeItem.parse(Fields(d, f.origin, holder, str(name))))
                for name, d in (dims.items() if isinstance(dims, Mapping) else ())
                if isinstance(d, Mapping)
            ),
            extra={k: v for k, v in f.data.items() if k not in ("score", "rubric", "dimensions")},
        )

    def items(self) -> list[tuple[str, Any, str]]:
        """(what, score, reason) for the rubric and each dimension."""
        found = [("rubric", self.rubric.score, self.rubric.reason or "")] if self.rubric else []
        return found + [(f"dimension {name}", d.score, d.reason or "") for name, d in self.dimensions]


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a conversation: sent ("ok"), failed ("error") or not sent ("skipped")."""

    index: int
    status: str | None
    error: str | None
    prompt: str | None
    output: str | None
    trace: Trace
    assertions: tuple[Assertion, ...]
    judge: JudgeBlock | None
    judge_skipped: str | None
    scores: Scores
    passed: bool | None
    attempts: int

    turns = ()  # a turn has none: failure_lines reads a turn as it reads a result

    @classmethod
    def parse(cls, f: Fields) -> Turn:
        return cls(
            index=f.int("index"),
            status=f.str("status"),
            error=f.str("error"),
            prompt=f.str("prompt"),
            output=f.str("output"),
            trace=Trace.parse(f.obj("trace")),
            assertions=tuple(Assertion.parse(a) for a in f.objs("assertions")),
            judge=JudgeBlock.parse(f.obj("judge")),
            judge_skipped=f.str("judge_skipped"),
            scores=Scores.parse(f.obj("scores")),
            passed=f.bool("passed", None),
            attempts=f.int("attempts"),
        )


@dataclass(frozen=True, slots=True)
class InlinedUrl:
    """A URL inlined into the prompt: its address, the inlined text, and the other fields."""

    url: Any
    body: Any
    meta: Mapping[str, Any]


def _url(value: Any) -> InlinedUrl | Any:
    if not isinstance(value, Mapping):
        return value
    meta = {k: v for k, v in value.items() if k not in ("url", "content", "text")}
    return InlinedUrl(value.get("url"), value.get("content", value.get("text")), meta)


@dataclass(frozen=True, slots=True)
class Result:
    """One sample × repeat (`results[]`)."""

    sample_id: str
    status: str
    error: str | None
    source_file: str | None
    source_line: int | None
    capability: tuple[str, ...]
    difficulty: str | None
    tripwire: bool
    category: str | None
    prompt: str | None
    output: str | None
    trace: Trace
    assertions: tuple[Assertion, ...]
    judge: JudgeBlock | None
    judge_skipped: str | None
    urls: tuple[Any, ...]  # InlinedUrl, or the value as written
    scores: Scores
    passed: bool | None
    duration_ms: Number | None
    repeat: int
    attempts: int
    cached: bool
    turns: tuple[Turn, ...]

    @classmethod
    def parse(cls, f: Fields) -> Result:
        source = f.obj("source")
        for key, kind in (("sample_id", "a string"), ("status", "a string")):
            if not isinstance(f.data.get(key), str):
                raise f.fail(key, kind)
        return cls(
            sample_id=f.data["sample_id"],
            status=f.data["status"],
            error=f.str("error"),
            source_file=source.str("file") if source else None,
            source_line=source.int("line", None) if source else None,
            capability=f.strs("capability"),
            difficulty=f.str("difficulty"),
            tripwire=f.bool("tripwire"),
            category=f.str("category"),
            prompt=f.str("prompt"),
            output=f.str("output"),
            trace=Trace.parse(f.obj("trace")),
            assertions=tuple(Assertion.parse(a) for a in f.objs("assertions")),
            judge=JudgeBlock.parse(f.obj("judge")),
            judge_skipped=f.str("judge_skipped"),
            urls=tuple(_url(u) for u in f.list("urls")),
            scores=Scores.parse(f.obj("scores")),
            passed=f.bool("passed", None),
            duration_ms=f.num("duration_ms"),
            repeat=f.int("repeat"),
            attempts=f.int("attempts"),
            cached=f.bool("cached"),
            turns=tuple(Turn.parse(t) for t in f.objs("turns")),
        )

    @classmethod
    def from_dict(cls, data: Any, origin: str = "result") -> Result:
        """One result as `SampleResult.to_dict()` (or report.json's `results[i]`) holds it."""
        return cls.parse(Fields.of(data, origin, ""))


@dataclass(frozen=True, slots=True)
class Category:
    """One entry of `summary.categories`; `category` is None for the uncategorised."""

    category: str | None
    total: int
    passed: int
    failed: int
    errored: int
    pass_rate: Number | None
    composite: Number | None

    @classmethod
    def parse(cls, f: Fields) -> Category:
        return cls(f.str("category"), f.int("total"), f.int("passed"), f.int("failed"), f.int("errored"), f.num("pass_rate"), f.num("composite"))


@dataclass(frozen=True, slots=True)
class Summary:
    total: int = 0
    ok: int = 0
    errored: int = 0
    passed: int = 0
    failed: int = 0
    cost_usd: Number | None = None
    judge_cost_usd: Number | None = None
    duration_ms: Number | None = None
    scores: Scores = Scores()
    threshold: Number | None = None
    gate_passed: bool = False
    skipped_judge_items: int = 0
    skipped_judge_reason: str | None = None
    cached: int = 0
    repeat: int = 1
    categories: tuple[Category, ...] = ()

    @classmethod
    def parse(cls, f: Fields) -> Summary:
        return cls(
            total=f.int("total"),
            ok=f.int("ok"),
            errored=f.int("errored"),
            passed=f.int("passed"),
            failed=f.int("failed"),
            cost_usd=f.num("cost_usd"),
            judge_cost_usd=f.num("judge_cost_usd"),
            duration_ms=f.num("duration_ms"),
            scores=Scores.parse(f.obj("scores")),
            threshold=f.num("threshold"),
            gate_passed=f.bool("gate_passed"),
            skipped_judge_items=f.int("skipped_judge_items"),
            skipped_judge_reason=f.str("skipped_judge_reason"),
            cached=f.int("cached"),
            repeat=f.int("repeat", 1) or 1,
            categories=tuple(Category.parse(c) for c in f.objs("categories")),
        )


@dataclass(frozen=True, slots=True)
class Repeats:
    """The spread under `--repeat N`."""

    n: int | None
    samples: int | None
    always_passed: int | None
    flaky: int | None
    never_passed: int | None

    @classmethod
    def parse(cls, f: Fields | None) -> Repeats | None:
        if f is None:
            return None
        return cls(*(f.int(k, None) for k in ("n", "samples", "always_passed", "flaky", "never_passed")))


@dataclass(frozen=True, slots=True)
class Target:
    """What produced the outputs: `kind` and `spec` (`KIND:ARG`)."""

    kind: str | None = None
    spec: str | None = None

    @classmethod
    def parse(cls, f: Fields | None) -> Target:
        return cls(f.str("kind"), f.str("spec")) if f is not None else cls()

    @property
    def name(self) -> str | None:
        return self.spec or self.kind


@dataclass(frozen=True, slots=True)
class ReportDocument:
    """report.json, typed. `data` is the dictionary it was read from: report.json is written from
    it as it is, fields this view does not type included."""

    data: Mapping[str, Any]
    run_id: str | None
    omk_version: str | None
    started_at: str | None
    finished_at: str | None
    samples_files: tuple[str, ...]
    target: Target
    judge_models: tuple[str, ...] | None  # None when no judge ran
    summary: Summary
    results: Sequence[Result]  # a tuple, or `ResultRows` read from report.json one at a time
    repeats: Repeats | None
    warnings: tuple[str, ...]
    experiment: Experiment | None  # only in an experiment's report
    pairs: tuple[Pair, ...]  # the pairwise judge's comparisons (also a pre-experiment report's `pairwise`)

    @classmethod
    def from_dict(cls, data: Any, origin: str = "report", rows: ResultRows | None = None) -> ReportDocument:
        """The typed report of a `report.json` dictionary read from `origin` (a file, or "report");
        `rows`: its results, read lazily from the file (`data` then holds none)."""
        from omk.report import experiment_document as ed

        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            raise InputError(f"{origin}: format: expected {FORMAT!r}, found {found!r}")
        if not isinstance(data.get("results"), list) or not isinstance(data.get("summary"), Mapping):
            raise InputError(f"{origin}: results/summary: missing; is this an omk report?")
        f = Fields(data, origin)
        judge = f.obj("judge")
        results: Sequence[Result] = rows if rows is not None else tuple(Result.parse(r) for r in f.objs("results"))
        return cls(
            data=data,
            run_id=f.str("run_id"),
            omk_version=f.str("omk_version"),
            started_at=f.str("started_at"),
            finished_at=f.str("finished_at"),
            samples_files=f.strs("samples_files"),
            target=Target.parse(f.obj("target")),
            judge_models=tuple(str(m) for m in judge.list("models")) if judge and judge.data else None,
            summary=Summary.parse(f.obj("summary")),  # type: ignore[arg-type]  # checked above to be an object
            results=results,
            repeats=Repeats.parse(f.obj("repeats")),
            warnings=f.strs("warnings"),
            experiment=ed.Experiment.parse(f.obj("experiment")),
            pairs=ed.report_pairs(f),
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
    from omk.report.result_rows import read_lazily

    if path.is_dir():
        path = path / "report.json"
    try:
        found = read_lazily(path)
        if found is not None:
            data, rows = found
            return ReportDocument.from_dict(data, str(path), rows)
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such report (expected a run folder or its report.json)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to read") from None
    return ReportDocument.from_dict(data, str(path))
