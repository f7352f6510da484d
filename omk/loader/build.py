"""Validated dicts → `Sample` / `AssertionSpec`, running each type's `prepare` once.

Samples that write the same assertion at the same place get specs over one shared content (the
first one built in the load), so `prepare` runs once per distinct assertion, not per sample.

A `PrepareError` (a regex that does not compile, a JSON Schema that is itself invalid) is a
problem on that assertion's field; any other exception from `prepare` is reported the same
way rather than escaping as a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from omk.assertions.registry import PrepareError, registry
from omk.loader.document import Path_
from omk.loader.messages import field_label
from omk.loader.share import Sharer
from omk.samples.model import AssertionSpec, Layer, Sample, SourceRef, Turn

Found = list[tuple[Path_, str]]


class SourceInfo:
    """Where a sample was written, to place it and its parts.

    With `origin` (a sample in omk's own format), assertions and turns are placed inside the
    sample: their lines are found when asked for (omk.loader.places). Without it (the foreign
    formats, which name their parts their own way), each spec's line is found now with
    `line_of`, so nothing keeps the parsed file once loading is done."""

    __slots__ = ("file", "label", "line_of", "prefix", "origin", "shared")

    def __init__(
        self,
        file: str,
        label: str,
        line_of: Callable[[Path_], int | None] | None,
        prefix: Path_,
        origin: SourceRef | None = None,
        shared: Sharer | None = None,
    ):
        self.file = file
        self.label = label  # "samples[3]"
        self.line_of = line_of  # on document paths
        self.prefix = prefix  # the sample's path in the document
        self.origin = origin
        self.shared = shared if shared is not None else Sharer(data=False)

    def ref(self, path: Path_, label: str) -> SourceRef:
        if self.origin is not None:
            return self.origin.part(self.shared.path(path))
        return SourceRef(self.file, self.line_of(self.prefix + path) if self.line_of else None, label)


def build_spec(raw: dict[str, Any], path: Path_, src: SourceInfo, found: Found, label: str = "") -> AssertionSpec:
    placed = src.origin is not None and not label
    if placed:
        path = src.shared.path(path)
        if (first := src.shared.spec(raw, path)) is not None:  # an earlier sample wrote the same here
            return first.share_with(src.origin)
    before = len(found)
    spec = _new_spec(raw, path, src, found, label)
    if placed and len(found) == before:
        src.shared.keep(spec, path)
    return spec


def _new_spec(raw: dict[str, Any], path: Path_, src: SourceInfo, found: Found, label: str) -> AssertionSpec:
    weight = raw.get("weight", 1)
    spec = AssertionSpec.of(
        type=raw["type"],
        raw=raw,
        weight=1.0 if weight == 1 else float(weight),  # one shared 1.0, not one float per assertion
        negate=raw.get("not", False) is True,
        layer=Layer(raw["layer"]) if "layer" in raw else None,
    )
    if src.origin is not None and not label:
        spec.place(src.origin, path)
    else:
        spec.source = src.ref(path, label or f"{src.label}.{field_label(path)}")
    children = raw.get("children")
    if isinstance(children, list):
        spec.children = tuple(  # shared with other samples: a tuple, which nothing can change
            build_spec(child, path + ("children", i), src, found, f"{label}.children[{i}]" if label else "")
            for i, child in enumerate(children)
        )
    kind = registry().get(spec.type)
    if kind is not None and kind.prepare is not None:
        _prepare(kind.prepare, spec, path, src.shared, found)
    return spec


def _prepare(
    prepare: Callable[[AssertionSpec], Any], spec: AssertionSpec, path: Path_, shared: Sharer, found: Found
) -> None:
    """Run the type's `prepare`, once per load for an assertion dict that samples share."""
    done, compiled = shared.prepared(spec.raw)
    if done:
        spec.compiled = compiled
        return
    try:
        spec.compiled = prepare(spec)
    except PrepareError as exc:
        found.append((path + (exc.field,) if exc.field else path, str(exc)))
    except Exception as exc:  # noqa: BLE001 - a bad value must never become a traceback
        found.append((path, f"cannot use this assertion: {exc}"))
    else:
        shared.remember(spec.raw, spec.compiled)


def build_turn(raw: dict[str, Any], index: int, src: SourceInfo, found: Found) -> Turn:
    label = f"{src.label}.turns[{index}]"
    return Turn(
        prompt=raw["prompt"],
        assertions=[
            build_spec(a, ("turns", index, "assertions", k), src, found, "" if src.origin else f"{label}.assertions[{k}]")
            for k, a in enumerate(raw.get("assertions") or [])
        ],
        rubric=raw.get("rubric"),
        dimensions=raw.get("dimensions"),
        context=raw.get("context"),
        raw=raw,
        source=src.ref(("turns", index), label),
    )


def build_sample(raw: dict[str, Any], src: SourceInfo, base_dir: Path, found: Found) -> Sample:
    """A `Sample` from a dict that passed validation; prepare problems go to `found`.

    A conversation (`turns`) keeps its first turn's prompt as `prompt`, so whatever lists samples
    has a text to show; the run sends `turns`. Lists such as `capability` and `mocks` are the
    ones in `raw` (shared, read-only) as tuples.
    """
    turns = tuple(build_turn(t, j, src, found) for j, t in enumerate(raw.get("turns") or []))
    return Sample(
        sample_id=raw["sample_id"],
        prompt=turns[0].prompt if turns else raw["prompt"],
        context=raw.get("context"),
        cwd=raw.get("cwd"),
        workspace=raw.get("workspace"),
        rubric=raw.get("rubric"),
        assertions=_assertions(raw.get("assertions") or [], src, found),
        dimensions=raw.get("dimensions"),
        capability=src.shared.items(raw.get("capability")),
        category=raw.get("category"),
        difficulty=raw.get("difficulty"),
        construct=raw.get("construct"),
        provenance=raw.get("provenance"),
        mocks=src.shared.items(raw.get("mocks")),
        mocks_strict=raw.get("mocksStrict", False) is True,
        tripwire=raw.get("tripwire", False) is True,
        environment=raw.get("environment"),
        tools=src.shared.items(raw.get("tools")),
        raw=raw,
        source=src.origin if src.origin is not None else src.ref((), src.label),
        base_dir=base_dir,
        turns=turns,
        inlined_urls=(),
        history=(),
        gold=_gold(raw.get("gold")),
    )


def _assertions(items: list[dict[str, Any]], src: SourceInfo, found: Found) -> list[AssertionSpec]:
    """The specs of a sample's own assertions. In a sample placed by its origin, an assertion
    written at the same place by an earlier sample of the load is that spec, shared: it is
    looked up here once, the only work most of a large set's assertions need."""
    if src.origin is None:
        return [build_spec(a, ("assertions", i), src, found, f"{src.label}.assertions[{i}]") for i, a in enumerate(items)]
    out = src.shared.placed(items, ("assertions",), src.origin)
    for i, spec in enumerate(out):
        if spec.__class__ is tuple:  # none built from this dict at this place yet in the load
            out[i] = build_spec(items[i], spec, src, found)
    return out  # type: ignore[return-value]  # every path was replaced by its spec


def _gold(value: Any) -> tuple[dict[str, Any], ...]:
    """A sample's `gold:` (one label or one per rater) as a tuple of labels."""
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)
