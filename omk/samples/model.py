"""The data that flows through omk: samples in, traces and results out.

Everything here is plain data. Loading fills `Sample`; a target fills `Trace` and the output;
assertions and the judge fill `AssertionResult`; scoring fills `Scores`.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace as _replace


class Layer(StrEnum):
    FACT = "fact"
    BEHAVIOR = "behavior"


# Why judge items (rubric, dimensions, judge-scored assertions) are skipped, as reports say it.
NO_JUDGE = "no judge configured"
JUDGE_OFF = "judge turned off (--no-judge)"


def normalize_capability(name: str) -> str:
    """As omk 0.23 compares capabilities: trim, lowercase, strip runs of `-`, `_` and whitespace
    (the doctor's coverage and the report's per-capability figures group by this)."""
    return re.sub(r"[-_\s]+", "", name.strip().lower())


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # e.g. a judge-scored assertion with no judge configured


Part = tuple[str | int, ...]  # a path inside a sample: ("assertions", 2, "children", 0)


def part_label(rel: Part) -> str:
    """`("assertions", 2, "children", 0)` → `assertions[2].children[0]`."""
    out = ""
    for step in rel:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


class SourceRef:
    """Where something was written: file, 1-based line, and its path inside the file.

    `line` may be given as a function, called once on first use: placing a path in a large
    JSON file costs a scan, and most lines of a valid file are never shown.
    """

    __slots__ = ("_line", "file", "path")

    def __init__(self, file: str, line: int | None | Callable[[], int | None], path: str):
        self.file = file
        self._line = line
        self.path = path  # e.g. "samples[3].assertions[1]"

    @property
    def line(self) -> int | None:
        if callable(self._line):
            self._line = self._line()
        return self._line

    def part(self, rel: Part) -> SourceRef:
        """Where a part of this (an assertion, a turn; `rel` is its path from here) was written.
        Placed on this line: a subclass that can read the file again places it exactly."""
        return SourceRef(self.file, self.line, f"{self.path}.{part_label(rel)}")

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceRef):
            return NotImplemented
        return (self.file, self.line, self.path) == (other.file, other.line, other.path)

    def __repr__(self) -> str:
        return f"SourceRef(file={self.file!r}, line={self.line!r}, path={self.path!r})"


class _Core(msgspec.Struct, gc=False):
    """What samples that write the same assertion at the same place share, besides `raw` and
    `compiled` (which each spec also holds itself, being read on every check). Not tracked by
    the garbage collector (nothing it holds refers back to it), like `AssertionSpec`."""

    weight: float
    negate: bool
    layer: Layer | None
    children: Sequence[AssertionSpec]
    rel: Part | None = None  # its path inside the sample, when the loader placed it there
    shared: bool = False  # other specs may hold this core: a setter copies it first
    reused: bool = False  # another spec does (made by `share_with`)
    plan: Any = None  # what the run made of this content once (omk.assertions.evaluate)

    def copy(self) -> _Core:
        return _Core(self.weight, self.negate, self.layer, self.children, self.rel)


class AssertionSpec(msgspec.Struct, gc=False):
    """One assertion as written, validated at load.

    `raw` keeps every field as written (custom hooks receive it); the common fields are lifted
    out. `compiled` holds whatever the type prepared once at load (a regex, a schema validator).

    Samples that write the same assertion at the same place (`assertions[4]` of each) share
    their content: `raw`, `compiled` and the rest are read-only at run time (a check that needs
    a changed copy makes one; setting a field here changes this spec alone). The spec itself is
    small: its type, `raw` and `compiled`, the shared rest, and the sample's place. `source` is
    made from that place and the assertion's path when asked for, which is rare (a message
    about this assertion).

    Made with `AssertionSpec.of(type, raw, weight=…, …)` (`AssertionSpec(type, raw)` gives the
    defaults). A msgspec struct that the garbage collector does not track: a large suite holds
    one per assertion per sample, and nothing a spec holds refers back to it.
    """

    type: str
    raw: dict[str, Any]
    compiled: Any = None
    _core: _Core = msgspec.field(default_factory=lambda: _Core(1.0, False, None, ()))
    _origin: SourceRef | None = None

    @classmethod
    def of(
        cls,
        type: str,
        raw: dict[str, Any],
        weight: float = 1.0,
        negate: bool = False,
        layer: Layer | None = None,  # explicit `layer:`; None means "the type's own layer"
        children: Sequence[AssertionSpec] = (),  # an assert-set's
        source: SourceRef | None = None,
        compiled: Any = None,
    ) -> AssertionSpec:
        return cls(type, raw, compiled, _Core(weight, negate, layer, children), source)

    # weight, negate and layer are read through the shared core; setting one changes this spec alone.
    @property
    def weight(self) -> float:
        return self._core.weight

    @weight.setter
    def weight(self, value: float) -> None:
        core = self._own()
        core.weight = value
        core.plan = None  # made from the old value

    @property
    def negate(self) -> bool:
        return self._core.negate

    @negate.setter
    def negate(self, value: bool) -> None:
        core = self._own()
        core.negate = value
        core.plan = None  # made from the old value

    @property
    def layer(self) -> Layer | None:
        return self._core.layer

    @layer.setter
    def layer(self, value: Layer | None) -> None:
        core = self._own()
        core.layer = value
        core.plan = None  # made from the old value

    def share_with(self, origin: SourceRef | None) -> AssertionSpec:
        """The same assertion, at the same place, in another sample (whose place is `origin`):
        a new spec that shares this one's content."""
        core = self._core
        core.shared = core.reused = True
        return _replace(self, _origin=origin)

    def offer(self) -> None:
        """Kept for later samples that may write the same (`share_with` then makes their specs):
        a setter from now on copies the content first, so those samples get it as written."""
        self._core.shared = True

    def place(self, origin: SourceRef, rel: Part) -> None:
        """Written at `rel` inside the sample whose place is `origin` (see `source`)."""
        self._own().rel = rel
        self._origin = origin

    def _own(self) -> _Core:
        if self._core.shared:
            self._core = self._core.copy()
        return self._core

    @property
    def children(self) -> Sequence[AssertionSpec]:
        kids, origin = self._core.children, self._origin
        if origin is None or all(k._origin is origin or k._core.rel is None for k in kids):
            return kids
        return [k if k._core.rel is None else k.share_with(origin) for k in kids]

    @children.setter
    def children(self, value: Sequence[AssertionSpec]) -> None:
        core = self._own()
        core.children = value
        core.plan = None

    # Whether another spec holds this content already (made by `share_with`): what is made once for
    # it (`plan`) is then worth keeping; a spec no other sample shares is checked without it.
    # (No annotation: on a msgspec struct an annotated name is a field.)
    reused = property(operator.attrgetter("_core.reused"))

    def _set_plan(self, value: Any) -> None:
        self._core.plan = value

    # What the engine made once of this assertion's content for every sample that shares it
    # (omk.assertions.evaluate checks it still fits before using it): a cache, not content, so
    # setting it changes no field and is shared with those samples. Read through a C getter:
    # the run reads it for every check.
    plan = property(operator.attrgetter("_core.plan"), _set_plan)

    @property
    def source(self) -> SourceRef | None:
        rel, origin = self._core.rel, self._origin
        if rel is None or origin is None:
            return origin
        return origin.part(rel)

    @source.setter
    def source(self, value: SourceRef | None) -> None:
        if self._core.rel is not None:
            self._own().rel = None
        self._origin = value

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def uses(self, type_: str) -> bool:
        """Whether this assertion, or one nested in it, is of `type_` (its children as written,
        not placed in this sample: a question of content alone)."""
        if self.type == type_:
            return True
        children = self._core.children
        return bool(children) and any(child.uses(type_) for child in children)

    def _fields(self) -> tuple[Any, ...]:
        c = self._core
        return self.type, self.raw, c.weight, c.negate, c.layer, list(self.children), self.source, self.compiled

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AssertionSpec):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        c = self._core
        return (
            f"AssertionSpec(type={self.type!r}, raw={self.raw!r}, weight={c.weight!r}, negate={c.negate!r}, "
            f"layer={c.layer!r}, children={list(self.children)!r}, source={self.source!r})"
        )


@dataclass(slots=True)
class Turn:
    """One user turn of a multi-turn sample: sent after the earlier turns, checked on its own."""

    prompt: str
    assertions: list[AssertionSpec] = field(default_factory=list)
    rubric: str | None = None
    dimensions: dict[str, str] | None = None
    context: str | None = None
    expected: str | None = None  # a reference answer, for formats that carry one (M365 `expected_response`)
    raw: dict[str, Any] = field(default_factory=dict)
    source: SourceRef | None = None


# A sample's fields that hold several items besides its assertions: tuples, read-only like the
# rest of what loading shares between samples (build a new tuple to change one).
_TUPLES = ("capability", "mocks", "tools", "inlined_urls", "turns", "history", "gold")


@dataclass(slots=True)
class Sample:
    sample_id: str
    prompt: str
    context: str | None = None
    cwd: str | None = None
    workspace: str | None = None  # a folder copied into a fresh one the agent works in (omk.domain.workspace)
    rubric: str | None = None
    assertions: list[AssertionSpec] = field(default_factory=list)
    dimensions: dict[str, str] | None = None
    capability: tuple[str, ...] = ()
    difficulty: str | None = None
    construct: str | None = None
    provenance: str | None = None
    mocks: tuple[dict[str, Any], ...] = ()
    mocks_strict: bool = False
    tripwire: bool = False
    environment: dict[str, Any] | None = None
    tools: tuple[dict[str, Any], ...] = ()
    raw: dict[str, Any] = field(default_factory=dict)
    source: SourceRef | None = None
    base_dir: Path = field(default_factory=Path.cwd)  # folder of the samples file: hooks, return_file
    inlined_urls: tuple[dict[str, Any], ...] = ()  # filled by omk.inline
    turns: tuple[Turn, ...] = ()  # a conversation; empty for a single-prompt sample
    category: str | None = None  # a grouping that reports break down by (M365 `category`)
    source_format: str = "omk"  # "omk" | "m365" | "bigsky": the file format the sample came from
    history: tuple[dict[str, Any], ...] = ()  # chat messages sent before the prompt (Big Sky `inputs.messages`)
    variables: dict[str, Any] | None = None  # Big Sky `inputs.context`: rendered into the system prompt (targets/prompt.py)
    single_step: bool = False  # one model call: the tool calls it asks for are recorded, not run (Big Sky)
    comparisons: list[str] | None = None  # pairwise verdict keys under two --target; None: one default verdict
    gold: tuple[dict[str, Any], ...] = ()  # people's labels of this sample's output (`gold:`, omk.gold)

    def __post_init__(self) -> None:
        t = tuple
        if (  # given as lists (in-memory samples): kept as tuples like loaded ones
            self.capability.__class__ is not t or self.mocks.__class__ is not t or self.tools.__class__ is not t
            or self.inlined_urls.__class__ is not t or self.turns.__class__ is not t
            or self.history.__class__ is not t or self.gold.__class__ is not t
        ):  # fmt: skip
            for name in _TUPLES:
                value = getattr(self, name)
                if type(value) is not tuple:
                    setattr(self, name, tuple(value))

    @property
    def has_judge_work(self) -> bool:
        return bool(self.rubric or self.dimensions)

    def assertion_lists(self) -> list[list[AssertionSpec]]:
        """The sample's own assertions, then each turn's: every check a conversation holds."""
        return [self.assertions, *(t.assertions for t in self.turns)]

    @property
    def is_graded(self) -> bool:
        """Whether anything checks it: an assertion, a rubric or dimensions (here or on a turn)."""
        return any(self.assertion_lists()) or self.has_judge_work or any(t.rubric or t.dimensions for t in self.turns)


class Outcome(msgspec.Struct, gc=False):
    """What an assertion function returns: the raw verdict before `not` is applied. A msgspec
    struct (one is made for every check: made in C, and not tracked by the garbage collector, as
    it holds only its verdict, numbers and words); given like a dataclass, `Outcome(True, message=…)`."""

    passed: bool
    metric: float | None = None
    message: str | None = None
    score: float | None = None  # a 1-5 score for judge-scored and custom types that give one
    error: bool = False  # the check could not run (timeout, crash): fails even under `not`
    skipped: bool = False  # nothing to check against (groundedness without context): not scored
