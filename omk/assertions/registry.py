"""The registry of assertion types.

Adding a type is one decorated function in the module of its family:

    @assertion("contains", layer=Layer.FACT, schema={"required": ["value"], "properties": {"value": TEXT}})
    def contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome: ...

`schema` is the JSON Schema of the type's own fields; the shipped
`omk/schema/eval-samples.schema.json` is generated from it (`python -m omk.schema.build`), and
the loader validates each assertion against it. `prepare` runs at load (compile a regex, build
a schema validator) and raises `PrepareError(field, message)` for a bad value. It runs once per
distinct assertion of a load: samples that write the same assertion share what it returns, so
that must depend on `spec.raw` alone and never change at run time.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from omk.samples.model import AssertionSpec, Layer, Outcome

if TYPE_CHECKING:
    from omk.assertions.context import CheckContext

Kind = Literal["sync", "async", "judge"]
CheckFn = Callable[[AssertionSpec, "CheckContext"], "Outcome | Awaitable[Outcome]"]

# Reusable JSON Schema fragments for the `schema=` of a type.
TEXT: dict[str, Any] = {"type": ["string", "number"], "minLength": 1}  # a number compares as its text
NON_NEGATIVE: dict[str, Any] = {"type": "number", "minimum": 0}
STRINGS: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "items": {"type": "string", "minLength": 1},
}
RATIO: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
JUDGE_THRESHOLD: dict[str, Any] = {"type": "number", "minimum": 1, "maximum": 5}
TOOL_NEEDLE: dict[str, Any] = {"type": "string", "pattern": "^[^:]+:"}  # "Tool:needle"


class PrepareError(ValueError):
    """A value that cannot be used, found while preparing an assertion at load time."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


class AssertionType(msgspec.Struct, frozen=True):
    name: str
    layer: Layer
    check: CheckFn
    kind: Kind = "sync"
    schema: dict[str, Any] = msgspec.field(default_factory=dict)
    prepare: Callable[[AssertionSpec], Any] | None = None
    description: str = ""
    # A judge type that can settle some cases itself (compare_content: an empty text): true for
    # those, and the check then runs without a judge instead of being skipped.
    decides_alone: Callable[[AssertionSpec, CheckContext], bool] | None = None

    @property
    def nestable(self) -> bool:
        """Judge-scored types cannot sit inside an assert-set (omk 0.54 contract)."""
        return self.kind != "judge"


_REGISTRY: dict[str, AssertionType] = {}
_revision = 0  # counts changes, so what was built from the registry (the loader's schemas) can tell it is stale

# The modules that define types; imported on first use so `omk --help` stays fast.
FAMILIES = (
    "omk.assertions.text",
    "omk.assertions.structured",
    "omk.assertions.similarity",
    "omk.assertions.agent",
    "omk.assertions.trajectory",
    "omk.assertions.workspace",
    "omk.assertions.skills",
    "omk.assertions.custom",
    "omk.assertions.judged",
    "omk.assertions.likert",
    "omk.assertions.m365",
    "omk.assertions.bigsky",
    "omk.assertions.sets",
)
_loaded = False


def assertion(
    name: str,
    *,
    layer: Layer,
    kind: Kind = "sync",
    schema: dict[str, Any] | None = None,
    prepare: Callable[[AssertionSpec], Any] | None = None,
    decides_alone: Callable[[AssertionSpec, CheckContext], bool] | None = None,
) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        global _revision
        if name in _REGISTRY:
            raise RuntimeError(f"assertion type {name!r} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()
        _REGISTRY[name] = AssertionType(
            name=name,
            layer=layer,
            check=fn,
            kind=kind,
            schema=schema or {},
            prepare=prepare,
            description=doc[0] if doc else "",
            decides_alone=decides_alone,
        )
        _revision += 1
        return fn

    return register


def judge_assertion(
    name: str,
    description: str,
    *,
    module: str,
    schema: dict[str, Any] | None = None,
) -> CheckFn:
    """Register a judge-scored type (a fact) whose whole check is the judge's: `Judge.check_assertion`
    builds the prompt for `spec.type` and scores the reply. `module` is the family's `__name__`
    (listings keep FAMILIES order); `description` is what a docstring would say."""

    async def check(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
        return await ctx.require_judge().check_assertion(spec, ctx)

    check.__name__ = check.__qualname__ = name
    check.__module__ = module
    check.__doc__ = description
    return assertion(name, layer=Layer.FACT, kind="judge", schema=schema)(check)


def _load_families() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in FAMILIES:
            importlib.import_module(module)
        # A family imported early (omk.loader.formats reads constants of omk.assertions.m365) registered
        # its types first: put them back in FAMILIES order, so the schema and listings are stable.
        rank = {module: i for i, module in enumerate(FAMILIES)}
        ordered = sorted(_REGISTRY.values(), key=lambda t: rank.get(t.check.__module__, len(FAMILIES)))
        _REGISTRY.clear()
        _REGISTRY.update((t.name, t) for t in ordered)


def revision() -> int:
    """A number that changes whenever a type is added or removed."""
    return _revision


def remove(name: str) -> None:
    global _revision
    if _REGISTRY.pop(name, None) is not None:
        _revision += 1


def registry() -> dict[str, AssertionType]:
    _load_families()
    return _REGISTRY


def get(name: str) -> AssertionType | None:
    if not _loaded:
        _load_families()
    return _REGISTRY.get(name)
