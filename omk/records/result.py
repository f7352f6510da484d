"""One sample's result as omk writes it and reads it back: one class per record, each with one
`to_json` (what results.jsonl and report.json hold, docs/report-format.md), read back by msgspec's
typed decoding (`SampleResult.decode` from a line's text, `SampleResult.read` from parsed values):
a wrong type is an `InputError` naming the file and the field, e.g.
`run/report.json: results[3].scores.fact: expected a number or null, found "high"`
(omk.records.wire words msgspec's error); a missing or null field takes the value a reader of an
older report would assume (the default; a null is read so only when the typed read failed).

Every record is a frozen `msgspec.Struct` and its several-item fields are tuples: the code that runs
a sample keeps its working state in its own variables and builds each record once per stage
(what the target said, then the checks, the judge and the scores). A changed copy is made with
`msgspec.structs.replace`. Values a report only shows (an assertion's `value`, a tool call's input and
output, an inlined URL, a gold label, the judge block's own fields) stay plain JSON as written.
A number is `Number` (an integer stays one: a `float` field would read 4 as 4.0, written back `4.0`).

Read as themselves: `AssertionResult` (`negate` is the key `not`; `passed` is worked out from
`status` whatever the line says), `Scores`, `ToolCall`, `MockStats`, `FileChange` and
`WorkspaceChanges`. Read through a record of the written layout (`_ResultLine`, `_TurnLine`,
`_TraceLine`, `_TokensLine`, at the end of this module), because what is written is not the fields
as kept: `SampleResult` writes `source_file` and `source_line` as one `source` object (null without
a file); `Tokens` writes the prompt-cache counts only when the target reported them, which is how
`cached` is read back (a count may be null, so their absence is msgspec's `UNSET`); and a judge
block is read by its own reader (omk.records.judging: its fields come back in the order written,
those omk does not know kept). Still written by hand (`to_json`, for report.json's writer, and
`to_wire` for a results.jsonl line): `SampleResult` rounds `duration_ms` to a tenth and writes
`turns` and `gold` only when there are some; `Trace` writes `notes`, the agent CLI's fields and
`workspace` only when set, `ToolCall` its `outcome` only when known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from omk.records.wire import HINT, Number, convert, joined, parsed
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


class MockStats(msgspec.Struct, frozen=True, gc=False):
    """How often the sample's mocks answered (`per_mock`: by mock key). The mocks count as calls
    come (`omk.targets.mocks.MockCounter`) and give this record when the target is done."""

    hits: int = 0
    misses: int = 0
    per_mock: Mapping[str, int] = msgspec.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"hits": self.hits, "misses": self.misses, "per_mock": dict(self.per_mock)}

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

EMPTY_TRACE = Trace()  # a target that reported nothing; records are frozen, so one value serves them all
_EMPTY_TRACE_JSON = EMPTY_TRACE.to_json()  # its JSON object, shared by the lines being encoded


class AssertionResult(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One assertion's outcome; an `assert-set` has its `children`.

    A msgspec struct whose fields are the JSON object results.jsonl and report.json hold, in
    their order (`negate` is written `not`), so a result line encodes its checks in C. `passed`
    is worked out from `status` when the record is made (None when skipped); the fields are
    given by name. Not tracked by the garbage collector: a result holds no reference back to
    itself (its `value` is what the sample wrote)."""

    type: str = ""
    layer: Layer = Layer.FACT
    status: Status
    passed: bool | None = None  # from `status`, whatever is given
    weight: Number = 1.0
    negate: bool = msgspec.field(default=False, name="not")
    value: Any = None  # what was checked for, for people reading the report
    metric: Number | None = None
    score: Number | None = None
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
    def read(cls, data: Any, origin: str = "assertion") -> AssertionResult:
        """An assertion's JSON object (as `to_json` writes it) read back."""
        return convert(data, cls, origin, "", HINT, nulls=True)


_force = msgspec.structs.force_setattr


class Scores(msgspec.Struct, frozen=True, gc=False):
    """A sample's (or turn's) layer scores, 1–5; None where the layer is absent. `composite` is
    their mean (0 when nothing was graded). A msgspec struct: its fields are its JSON object."""

    fact: Number | None = None
    behavior: Number | None = None
    judge: Number | None = None
    composite: Number = 0.0

    def layer(self, name: str) -> float | None:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}.get(name)

    def to_json(self) -> dict[str, Any]:
        return {"fact": self.fact, "behavior": self.behavior, "judge": self.judge, "composite": self.composite}

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
        # The fields in their order, given by position: a result is made for every sample, and a
        # struct takes two dozen fields by position several times faster than by name
        # (tests/test_results_streaming.py checks each one lands where its name says).
        return cls(
            sample.sample_id,
            status,
            prompt,
            error,
            output,
            EMPTY_TRACE if trace is None else trace,
            assertions,
            judge,
            judge_skipped,
            NO_SCORES if scores is None else scores,
            passed,
            duration_ms,
            repeat,
            attempts,
            cached,
            turns,
            source.file if source else None,  # source_file
            source.line if source else None,  # source_line
            tuple(sample.capability),
            sample.difficulty,
            sample.tripwire,
            sample.category,
            tuple(sample.inlined_urls),  # urls
            tuple(sample.gold),
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
    def decode(cls, raw: bytes | str, origin: str = "result", at: str = "", load: Callable[[Any], Any] = parsed) -> SampleResult:
        """One result's JSON text (a results.jsonl line, report.json's `results[i]`, found at `at` of
        `origin`) read back: typed as msgspec parses it. Text it refuses (a wrong field, or what only
        `json` reads: a lone surrogate) is parsed by `load` and read from its values, which locates a
        wrong field; text that is no JSON at all is `load`'s error (a `ValueError`)."""
        try:
            line = msgspec.json.decode(raw, type=_ResultLine)
        except msgspec.DecodeError:  # a ValidationError too
            line = convert(load(raw), _ResultLine, origin, at, HINT, nulls=True)
        return line.record(cls, origin, at)

    @classmethod
    def read(cls, data: Any, origin: str = "result", at: str = "") -> SampleResult:
        """One result's JSON object (parsed from a results.jsonl line or report.json's `results[i]`,
        found at `at` of `origin`) read back."""
        return convert(data, _ResultLine, origin, at, HINT, nulls=True).record(cls, origin, at)


# How the results are written, where it is not their records' fields: what a result, a turn, a
# trace and its tokens are read from. Every field has the default a reader of an older report
# assumes; the records written field for field (checks, scores, tool calls, files) are read as
# themselves.


class _TokensLine(msgspec.Struct, frozen=True, gc=False):
    """`trace.tokens`: the prompt-cache counts are there (even null) only when the target reported them."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None | msgspec.UnsetType = msgspec.UNSET
    cache_creation: int | None | msgspec.UnsetType = msgspec.UNSET

    def record(self) -> Tokens:
        read, creation = self.cache_read, self.cache_creation
        if read is msgspec.UNSET and creation is msgspec.UNSET:
            return Tokens(self.input, self.output)
        return Tokens(self.input, self.output, _set(read), _set(creation), True)


def _set(value: int | None | msgspec.UnsetType) -> int | None:
    return None if value is msgspec.UNSET else value


class _TraceLine(msgspec.Struct, frozen=True, gc=False):
    """`trace`: a `Trace`'s fields, its tokens as written."""

    turns: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    cost_usd: Number | None = None
    latency_ms: Number | None = None
    tokens: _TokensLine | None = None
    mock_stats: MockStats | None = None
    notes: tuple[str, ...] = ()
    api_latency_ms: Number | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    workspace: WorkspaceChanges | None = None

    def record(self) -> Trace:
        tokens = self.tokens.record() if self.tokens is not None else Tokens()
        return Trace(
            self.turns, self.tool_calls, self.cost_usd, self.latency_ms, tokens, self.mock_stats, self.notes,
            self.api_latency_ms, self.stop_reason, self.session_id, self.workspace,
        )  # fmt: skip


class _TurnLine(msgspec.Struct, frozen=True, gc=False):
    """`turns[i]`: a `TurnResult`, its judge block read by its own reader."""

    index: int = 0
    status: TurnStatus = "ok"
    error: str | None = None
    prompt: str = ""
    output: str | None = None
    trace: _TraceLine | None = None
    assertions: tuple[AssertionResult, ...] = ()
    judge: Mapping[str, Any] | None = None
    judge_skipped: str | None = None
    scores: Scores | None = None
    passed: bool | None = None
    attempts: int = 0

    def record(self, origin: str, at: str) -> TurnResult:
        return TurnResult(
            self.index, self.prompt, self.status, self.error, self.output,
            self.trace.record() if self.trace is not None else EMPTY_TRACE, self.assertions,
            _judge_block(self.judge, origin, at), self.judge_skipped, self.scores or NO_SCORES, self.passed, self.attempts,
        )  # fmt: skip


class _Source(msgspec.Struct, frozen=True, gc=False):
    file: str | None = None
    line: int | None = None


class _ResultLine(msgspec.Struct, frozen=True, gc=False):
    """A result as written: where its sample is written as one `source` object, its turns and judge
    block as above."""

    sample_id: str
    status: RunStatus
    error: str | None = None
    source: _Source | None = None
    capability: tuple[str, ...] = ()
    difficulty: str | None = None
    tripwire: bool = False
    category: str | None = None
    prompt: str = ""
    output: str | None = None
    trace: _TraceLine | None = None
    assertions: tuple[AssertionResult, ...] = ()
    judge: Mapping[str, Any] | None = None
    judge_skipped: str | None = None
    urls: tuple[Any, ...] = ()
    scores: Scores | None = None
    passed: bool = False
    duration_ms: Number = 0.0
    repeat: int = 0
    attempts: int = 0
    cached: bool = False
    turns: tuple[_TurnLine, ...] = ()
    gold: tuple[Any, ...] = ()

    def record(self, kind: type[SampleResult], origin: str, at: str) -> SampleResult:
        source = self.source
        turns = tuple(t.record(origin, joined(at, f"turns[{i}]")) for i, t in enumerate(self.turns)) if self.turns else ()
        return kind(
            self.sample_id, self.status, self.prompt, self.error, self.output,
            self.trace.record() if self.trace is not None else EMPTY_TRACE, self.assertions,
            _judge_block(self.judge, origin, at), self.judge_skipped, self.scores or NO_SCORES, self.passed,
            self.duration_ms, self.repeat, self.attempts, self.cached, turns,
            source.file if source else None, source.line if source else None, self.capability, self.difficulty,
            self.tripwire, self.category, self.urls, self.gold,
        )  # fmt: skip


def _judge_block(data: Mapping[str, Any] | None, origin: str, at: str) -> JudgeBlock | None:
    """A result's or a turn's judge block (at `at`), read by its own reader; None for none or `{}`."""
    if not data:
        return None
    from omk.records.judging import JudgeBlock

    return JudgeBlock.read(data, origin, joined(at, "judge"))
