"""One sample's result as omk writes it and reads it back: one class per record, each with one
`to_json` (what results.jsonl and report.json hold, docs/report-format.md) and one checked
`from_json` (a wrong type is an `InputError` naming the file and the field, e.g.
`run/report.json: results[3].scores.fact: expected a number or null, found "high"`; a missing
field takes the value a reader of an older report would assume).

Every record is a frozen `msgspec.Struct` and its several-item fields are tuples: the code that runs
a sample keeps its working state in its own variables and builds each record once per stage
(what the target said, then the checks, the judge and the scores). A changed copy is made with
`msgspec.structs.replace`. Values a report only shows (an assertion's `value`, a tool call's input and
output, an inlined URL, a gold label, the judge block's own fields) stay plain JSON as written.

Each record here keeps its own `to_json` and `from_json` rather than msgspec's encoding of its
fields (omk.records.wire's `JsonRecord`): what is written is not the fields as kept.
`AssertionResult` keeps `passed` as a field worked out from its status and its `negate` under
the name `not`, so its fields are its JSON object and a results.jsonl line encodes the checks
straight from them (`SampleResult.to_wire`); its reader gives an assertion read without a
`status` (an older report's) the one its `passed` says; `SampleResult`
writes `source_file` and `source_line` as one `source` object (null without a file), `duration_ms`
rounded to a tenth, and `turns` and `gold` only when there are some; `Trace` writes `notes`, the
agent CLI's fields and `workspace` only when set, `ToolCall` its `outcome` only when known,
`Tokens` the prompt-cache counts only when the target reported them (`cached`), and `MockStats`
reads an empty object as none. And every reader takes a missing or null field as its default (a
report of an older omk lacks the fields added since; msgspec's typed read refuses a null where the
type has none) and keeps a number as written (an integer stays one, where msgspec reads it into a
`float` field as a float and the report would be written back with `.0`): so even the records
written field for field (`Scores`, `FileChange`) read by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from omk.records.fields import Fields
from omk.samples.model import Layer, Status

if TYPE_CHECKING:  # a judge block's records load when a result has one (a run without a judge never does)
    from omk.records.judging import JudgeBlock

RunStatus = Literal["ok", "error"]  # a sample's: it ran, or the target/judge failed on it
TurnStatus = Literal["ok", "error", "skipped"]  # a turn's: sent, failed, or not sent
LAYERS = ("fact", "behavior", "judge")
CallOutcome = Literal["mock", "denied", "ran", "refused", "unsupported"]  # who answered a tool call
CALL_OUTCOMES: tuple[str, ...] = ("mock", "denied", "ran", "refused", "unsupported")

# The members as plain module names: reading a member from its enum class is slow (Python 3.11
# looks it up through the class's machinery each time), and these are read for every check.
_SKIPPED, _PASSED = Status.SKIPPED, Status.PASSED


def _status(f: Fields, allowed: tuple[str, ...], default: str) -> Any:
    value = f.str("status", default)
    if value not in allowed:
        raise f.fail("status", " or ".join(repr(a) for a in allowed))
    return value


def _enum(f: Fields, key: str, kind: type[Layer] | type[Status], default: Any) -> Any:
    value = f.str(key)
    if value is None:
        return default
    try:
        return kind(value)
    except ValueError:
        raise f.fail(key, " or ".join(repr(m.value) for m in kind)) from None


class ToolCall(msgspec.Struct, frozen=True, gc=False):
    """One tool call the agent made, with what answered it. `outcome` says who answered, where
    the target knows: a mock (`mock`), a denial (`denied`), the real tool (`ran`), the agent CLI
    refusing the call before any mock could answer it (`refused`: a check of its own, such as
    "File has not been read yet"), or the CLI not offering the tool at all (`unsupported`)."""

    tool: str
    input: Any = None
    output: Any = None
    mocked: bool = False
    mock_key: str | None = None
    is_error: bool = False
    outcome: CallOutcome | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "tool": self.tool,
            "input": self.input,
            "output": self.output,
            "mocked": self.mocked,
            "mock_key": self.mock_key,
            "is_error": self.is_error,
        }
        if self.outcome is not None:
            data["outcome"] = self.outcome
        return data

    @classmethod
    def from_json(cls, f: Fields) -> ToolCall:
        outcome = f.str("outcome")
        if outcome is not None and outcome not in CALL_OUTCOMES:
            raise f.fail("outcome", " or ".join(repr(o) for o in CALL_OUTCOMES))
        return cls(
            f.str("tool", ""), f.raw("input"), f.raw("output"), f.bool("mocked"), f.str("mock_key"), f.bool("is_error"), outcome
        )


class MockStats(msgspec.Struct, frozen=True, gc=False):
    """How often the sample's mocks answered (`per_mock`: by mock key). The mocks count as calls
    come (`omk.targets.mocks.MockCounter`) and give this record when the target is done."""

    hits: int = 0
    misses: int = 0
    per_mock: Mapping[str, int] = msgspec.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"hits": self.hits, "misses": self.misses, "per_mock": dict(self.per_mock)}

    @classmethod
    def from_json(cls, f: Fields | None) -> MockStats | None:
        if f is None or not f.data:
            return None
        per = f.obj("per_mock")
        counts = {str(k): v for k, v in per.data.items()} if per else {}
        return cls(f.int("hits"), f.int("misses"), counts)


class Tokens(msgspec.Struct, frozen=True, gc=False):
    """Tokens the target reported (None: not reported, never zero). The prompt-cache counts are
    written only by targets that report them (`cached` says so)."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_creation: int | None = None
    cached: bool = False

    @classmethod
    def of(cls, value: Tokens | Mapping[str, Any] | None) -> Tokens:
        """Tokens from a mapping as report.json writes it (`{"input": 5, "output": 7}`)."""
        if value is None or isinstance(value, Tokens):
            return value or cls()
        cached = "cache_read" in value or "cache_creation" in value
        return cls(value.get("input"), value.get("output"), value.get("cache_read"), value.get("cache_creation"), cached)

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_json().get(key, default)

    def __eq__(self, other: object) -> bool:
        """Equal to another `Tokens` of the same counts, or to its JSON form (`{"input": 5, "output": 7}`)."""
        if isinstance(other, Mapping):
            return self.to_json() == dict(other)
        if not isinstance(other, Tokens):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(tuple(self.to_json().items()))

    def to_json(self) -> dict[str, int | None]:
        data = {"input": self.input, "output": self.output}
        if self.cached:
            data.update(cache_read=self.cache_read, cache_creation=self.cache_creation)
        return data

    @classmethod
    def from_json(cls, f: Fields | None) -> Tokens:
        if f is None:
            return cls()
        cached = "cache_read" in f.data or "cache_creation" in f.data
        return cls(f.int("input", None), f.int("output", None), f.int("cache_read", None), f.int("cache_creation", None), cached)


class FileChange(msgspec.Struct, frozen=True, gc=False):
    """One file the agent created, changed or deleted in its workspace: the path (relative, with
    `/`), the size in bytes (before, for a deleted file) and the start of its new text, masked
    (None for a deleted or binary file; `truncated` when it was cut)."""

    path: str
    size: int
    content: str | None = None
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "content": self.content, "truncated": self.truncated}

    @classmethod
    def from_json(cls, f: Fields) -> FileChange:
        return cls(f.str("path", ""), f.int("size"), f.str("content"), f.bool("truncated"))


class WorkspaceChanges(msgspec.Struct, frozen=True, gc=False):
    """What the agent left in its workspace, compared with what it started from."""

    created: tuple[FileChange, ...] = ()
    changed: tuple[FileChange, ...] = ()
    deleted: tuple[FileChange, ...] = ()

    KINDS = ("created", "changed", "deleted")

    def all(self) -> list[tuple[str, FileChange]]:
        """(kind, change) for every file, created first."""
        return [(kind, c) for kind in self.KINDS for c in getattr(self, kind)]

    def paths(self) -> list[str]:
        return [c.path for _, c in self.all()]

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.deleted)

    def to_json(self) -> dict[str, Any]:
        return {kind: [c.to_json() for c in getattr(self, kind)] for kind in self.KINDS}

    @classmethod
    def from_json(cls, f: Fields | None) -> WorkspaceChanges | None:
        if f is None:
            return None
        found = {kind: tuple(FileChange.from_json(c) for c in f.objs(kind)) for kind in cls.KINDS}
        return cls(found["created"], found["changed"], found["deleted"])


class Trace(msgspec.Struct, frozen=True, gc=False):
    """What a target reports besides the output. None means "not reported", never zero.

    The agent CLI fields (`api_latency_ms`, `stop_reason`, `session_id`) are written only when
    set, so other targets' traces keep their shape. `tokens` may be given as a mapping.
    """

    turns: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    cost_usd: float | None = None
    latency_ms: float | None = None
    tokens: Tokens = Tokens()  # a frozen record: one empty value serves every trace
    mock_stats: MockStats | None = None
    notes: tuple[str, ...] = ()  # e.g. "stopped at max_turns (10)"; omitted when empty
    api_latency_ms: float | None = None  # time spent waiting for the model API, as the CLI measured it
    stop_reason: str | None = None  # the model's last stop reason (`end_turn`, `tool_use`, `max_tokens`…)
    session_id: str | None = None  # the agent CLI's session (a conversation's turns share it)
    # An agent that worked in a folder: the files it created, changed and deleted there (None:
    # the target worked in no folder of its own; written only when set).
    workspace: WorkspaceChanges | None = None

    def __post_init__(self) -> None:
        if type(self.tokens) is not Tokens:
            msgspec.structs.force_setattr(self, "tokens", Tokens.of(self.tokens))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "turns": self.turns,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "cost_usd": self.cost_usd,
            "latency_ms": self.latency_ms,
            "tokens": self.tokens.to_json(),
            "mock_stats": self.mock_stats.to_json() if self.mock_stats else None,
        }
        if self.notes:
            data["notes"] = list(self.notes)
        for name in ("api_latency_ms", "stop_reason", "session_id"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.workspace is not None:
            data["workspace"] = self.workspace.to_json()
        return data

    @classmethod
    def from_json(cls, f: Fields | None) -> Trace:
        if f is None:
            return EMPTY_TRACE
        return cls(
            turns=f.int("turns", None),
            tool_calls=tuple(ToolCall.from_json(c) for c in f.objs("tool_calls")),
            cost_usd=f.num("cost_usd"),
            latency_ms=f.num("latency_ms"),
            tokens=Tokens.from_json(f.obj("tokens")),
            mock_stats=MockStats.from_json(f.obj("mock_stats")),
            notes=f.strs("notes"),
            api_latency_ms=f.num("api_latency_ms"),
            stop_reason=f.str("stop_reason"),
            session_id=f.str("session_id"),
            workspace=WorkspaceChanges.from_json(f.obj("workspace")),
        )


EMPTY_TRACE = Trace()  # a target that reported nothing; records are frozen, so one value serves them all
_EMPTY_TRACE_JSON = EMPTY_TRACE.to_json()  # its JSON object, shared by the lines being encoded


class AssertionResult(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One assertion's outcome; an `assert-set` has its `children`.

    A msgspec struct whose fields are the JSON object results.jsonl and report.json hold, in
    their order (`negate` is written `not`), so a result line encodes its checks in C. `passed`
    is worked out from `status` when the record is made (None when skipped); the fields are
    given by name. Not tracked by the garbage collector: a result holds no reference back to
    itself (its `value` is what the sample wrote)."""

    type: str
    layer: Layer
    status: Status
    passed: bool | None = None  # from `status`, whatever is given
    weight: float
    negate: bool = msgspec.field(name="not")
    value: Any = None  # what was checked for, for people reading the report
    metric: float | None = None
    score: float | None = None
    message: str | None = None
    error: bool = False  # the check could not run (timeout, crash): failed, and `not` did not invert it
    children: tuple[AssertionResult, ...] = ()

    def __post_init__(self) -> None:
        status = self.status
        _force(self, "passed", None if status is _SKIPPED else status is _PASSED)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "layer": self.layer._value_,  # the enum's own field: `.value` is a slower property
            "status": self.status._value_,
            "passed": self.passed,
            "weight": self.weight,
            "not": self.negate,
            "value": self.value,
            "metric": self.metric,
            "score": self.score,
            "message": self.message,
            "error": self.error,
            "children": [c.to_json() for c in self.children] if self.children else [],
        }

    @classmethod
    def from_json(cls, f: Fields) -> AssertionResult:
        return cls(
            type=f.str("type", ""),
            layer=_enum(f, "layer", Layer, Layer.FACT),
            status=_enum(f, "status", Status, _status_of(f.bool("passed", None))),
            weight=f.num("weight", 1.0),
            negate=f.bool("not"),
            metric=f.num("metric"),
            score=f.num("score"),
            message=f.str("message"),
            children=tuple(cls.from_json(c) for c in f.objs("children")),
            value=f.raw("value"),
            error=f.bool("error"),
        )

    @classmethod
    def read(cls, data: Any, origin: str = "assertion") -> AssertionResult:
        """An assertion's JSON object (as `to_json` writes it) read back."""
        return cls.from_json(Fields.of(data, origin, ""))


_force = msgspec.structs.force_setattr


def _status_of(passed: bool | None) -> Status:
    return Status.SKIPPED if passed is None else (Status.PASSED if passed else Status.FAILED)


class Scores(msgspec.Struct, frozen=True, gc=False):
    """A sample's (or turn's) layer scores, 1–5; None where the layer is absent. `composite` is
    their mean (0 when nothing was graded). A msgspec struct: its fields are its JSON object."""

    fact: float | None = None
    behavior: float | None = None
    judge: float | None = None
    composite: float = 0.0

    def layer(self, name: str) -> float | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)

    def to_json(self) -> dict[str, Any]:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}

    @classmethod
    def from_json(cls, f: Fields | None) -> Scores:
        if f is None:
            return NO_SCORES
        return cls(f.num("fact"), f.num("behavior"), f.num("judge"), f.num("composite", 0.0))


NO_SCORES = Scores()  # nothing graded; records are frozen, so one value serves them all


class InlinedUrl(msgspec.Struct, frozen=True, gc=False):
    """A URL inlined into the prompt: its address, the inlined text, and the other fields."""

    url: Any
    body: Any
    meta: Mapping[str, Any]

    @classmethod
    def of(cls, value: Any) -> InlinedUrl | Any:
        if not isinstance(value, Mapping):
            return value
        meta = {k: v for k, v in value.items() if k not in ("url", "content", "text")}
        return cls(value.get("url"), value.get("content", value.get("text")), meta)


class TurnResult(msgspec.Struct, frozen=True, gc=False):
    """One turn of a conversation as it ran: its output, checks and scores. `passed` is None for
    a turn with nothing graded: it does not count."""

    index: int  # 0-based
    prompt: str  # the composed prompt sent for this turn
    status: TurnStatus = "ok"
    error: str | None = None
    output: str | None = None
    trace: Trace = EMPTY_TRACE
    assertions: tuple[AssertionResult, ...] = ()
    judge: JudgeBlock | None = None
    judge_skipped: str | None = None
    scores: Scores = NO_SCORES
    passed: bool | None = None
    attempts: int = 0

    turns = ()  # a turn has none: a report reads a turn's failures as it reads a result's

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "status": self.status,
            "error": self.error,
            "prompt": self.prompt,
            "output": self.output,
            "trace": self.trace.to_json(),
            "assertions": [a.to_json() for a in self.assertions],
            "judge": self.judge.to_json() if self.judge is not None else None,
            "judge_skipped": self.judge_skipped,
            "scores": self.scores.to_json(),
            "passed": self.passed,
            "attempts": self.attempts,
        }

    @classmethod
    def from_json(cls, f: Fields) -> TurnResult:
        return cls(
            index=f.int("index"),
            prompt=f.str("prompt", ""),
            status=_status(f, ("ok", "error", "skipped"), "ok"),
            error=f.str("error"),
            output=f.str("output"),
            trace=Trace.from_json(f.obj("trace")),
            assertions=tuple(AssertionResult.from_json(a) for a in f.objs("assertions")),
            judge=_judge_block(f.obj("judge")),
            judge_skipped=f.str("judge_skipped"),
            scores=Scores.from_json(f.obj("scores")),
            passed=f.bool("passed", None),
            attempts=f.int("attempts"),
        )


class SampleResult(msgspec.Struct, frozen=True, gc=False):
    """One sample × repeat: `results[]` of report.json, a line of results.jsonl. The sample's
    own fields a report shows (where it was written, capability, difficulty, tripwire, category,
    inlined URLs) are copied in when the result is made (`SampleResult.start`)."""

    sample_id: str
    status: RunStatus
    prompt: str
    error: str | None = None
    output: str | None = None
    trace: Trace = EMPTY_TRACE
    assertions: tuple[AssertionResult, ...] = ()
    judge: JudgeBlock | None = None
    judge_skipped: str | None = None  # why the judge did not run, when the sample had judge work
    scores: Scores = NO_SCORES
    passed: bool = False
    duration_ms: float = 0.0
    repeat: int = 0  # 0-based index under --repeat N
    attempts: int = 0  # target calls made for this result (retries included; 0 when cached)
    cached: bool = False  # output and trace came from the response cache, no call was made
    turns: tuple[TurnResult, ...] = ()  # a conversation's turns; empty otherwise
    source_file: str | None = None
    source_line: int | None = None
    capability: tuple[str, ...] = ()
    difficulty: str | None = None
    tripwire: bool = False
    category: str | None = None
    urls: tuple[Any, ...] = ()  # the URLs inlined into the prompt, as written
    gold: tuple[Any, ...] = ()  # people's labels from the sample's `gold:` (omk.gold reads them)

    @classmethod
    def start(
        cls,
        sample: Any,
        prompt: str,
        repeat: int = 0,
        *,
        status: RunStatus = "ok",
        error: str | None = None,
        output: str | None = None,
        trace: Trace | None = None,
        assertions: tuple[AssertionResult, ...] = (),
        judge: JudgeBlock | None = None,
        judge_skipped: str | None = None,
        scores: Scores | None = None,
        passed: bool = False,
        duration_ms: float = 0.0,
        attempts: int = 0,
        cached: bool = False,
        turns: tuple[TurnResult, ...] = (),
    ) -> SampleResult:
        """The result of `sample` (an `omk.Sample`) run with `prompt`: the sample's own fields
        copied in, and what the run gave (nothing yet, by default)."""
        source = sample.source
        return cls(
            sample_id=sample.sample_id,
            status=status,
            prompt=prompt,
            error=error,
            output=output,
            trace=EMPTY_TRACE if trace is None else trace,
            assertions=assertions,
            judge=judge,
            judge_skipped=judge_skipped,
            scores=NO_SCORES if scores is None else scores,
            passed=passed,
            duration_ms=duration_ms,
            repeat=repeat,
            attempts=attempts,
            cached=cached,
            turns=turns,
            source_file=source.file if source else None,
            source_line=source.line if source else None,
            capability=tuple(sample.capability),
            difficulty=sample.difficulty,
            tripwire=sample.tripwire,
            category=sample.category,
            urls=tuple(sample.inlined_urls),
            gold=tuple(sample.gold),
        )

    @property
    def composite(self) -> float:
        """The sample's composite score (the mean of its layers; 0 when nothing was graded)."""
        return self.scores.composite

    @property
    def inlined_urls(self) -> list[InlinedUrl | Any]:
        return [InlinedUrl.of(u) for u in self.urls]

    def to_json(self) -> dict[str, Any]:
        return self._object(self.trace.to_json(), [a.to_json() for a in self.assertions], self.scores.to_json())

    def to_wire(self) -> dict[str, Any]:
        """`to_json`'s object for msgspec's encoder, which writes it as the same JSON (results.jsonl's
        line is encoded from it, in C): its checks and scores are left as their structs, and an
        empty trace is one shared object. To encode, not to change."""
        trace = _EMPTY_TRACE_JSON if self.trace is EMPTY_TRACE else self.trace.to_json()
        return self._object(trace, self.assertions, self.scores)

    def _object(self, trace: dict[str, Any], assertions: Any, scores: Any) -> dict[str, Any]:
        source = {"file": self.source_file, "line": self.source_line} if self.source_file is not None else None
        data = {
            "sample_id": self.sample_id,
            "status": self.status,
            "error": self.error,
            "source": source,
            "capability": list(self.capability),
            "difficulty": self.difficulty,
            "tripwire": self.tripwire,
            "category": self.category,
            "prompt": self.prompt,
            "output": self.output,
            "trace": trace,
            "assertions": assertions,
            "judge": self.judge.to_json() if self.judge is not None else None,
            "judge_skipped": self.judge_skipped,
            "urls": list(self.urls),
            "scores": scores,
            "passed": self.passed,
            "duration_ms": round(self.duration_ms, 1),
            "repeat": self.repeat,
            "attempts": self.attempts,
            "cached": self.cached,
        }
        if self.turns:
            data["turns"] = [t.to_json() for t in self.turns]
        if self.gold:
            data["gold"] = list(self.gold)
        return data

    @classmethod
    def from_json(cls, f: Fields) -> SampleResult:
        if not isinstance(f.data.get("sample_id"), str):
            raise f.fail("sample_id", "a string")
        source = f.obj("source")
        return cls(
            sample_id=f.data["sample_id"],
            status=_status(f, ("ok", "error"), ""),
            prompt=f.str("prompt", ""),
            error=f.str("error"),
            output=f.str("output"),
            trace=Trace.from_json(f.obj("trace")),
            assertions=tuple(AssertionResult.from_json(a) for a in f.objs("assertions")),
            judge=_judge_block(f.obj("judge")),
            judge_skipped=f.str("judge_skipped"),
            scores=Scores.from_json(f.obj("scores")),
            passed=f.bool("passed"),
            duration_ms=f.num("duration_ms", 0.0),
            repeat=f.int("repeat"),
            attempts=f.int("attempts"),
            cached=f.bool("cached"),
            turns=tuple(TurnResult.from_json(t) for t in f.objs("turns")),
            source_file=source.str("file") if source else None,
            source_line=source.int("line", None) if source else None,
            capability=f.strs("capability"),
            difficulty=f.str("difficulty"),
            tripwire=f.bool("tripwire"),
            category=f.str("category"),
            urls=tuple(f.list("urls")),
            gold=tuple(f.list("gold")),
        )

    @classmethod
    def read(cls, data: Any, origin: str = "result") -> SampleResult:
        """One result's JSON object (a results.jsonl line, report.json's `results[i]`) read back."""
        return cls.from_json(Fields.of(data, origin, ""))


def _judge_block(f: Fields | None) -> JudgeBlock | None:
    if f is None or not f.data:
        return None
    from omk.records.judging import JudgeBlock

    return JudgeBlock.from_json(f)
