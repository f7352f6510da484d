"""Validated dicts → `Sample` / `AssertionSpec`, running each type's `prepare` once.

A `PrepareError` (a regex that does not compile, a JSON Schema that is itself invalid) is a
problem on that assertion's field; any other exception from `prepare` is reported the same
way rather than escaping as a traceback.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from omk.assertions.registry import PrepareError, registry
from omk.loader.document import Path_
from omk.loader.messages import field_label
from omk.model import AssertionSpec, Layer, Sample, SourceRef, Turn

Found = list[tuple[Path_, str]]


class SourceInfo:
    """Where a sample was written, to give it and each of its specs a `SourceRef`."""

    __slots__ = ("file", "label", "line_of", "prefix")

    def __init__(self, file: str, label: str, line_of: Any, prefix: Path_):
        self.file = file
        self.label = label  # "samples[3]"
        self.line_of = line_of  # Callable[[Path_], int | None] on document paths
        self.prefix = prefix  # the sample's path in the document

    def ref(self, path: Path_, label: str) -> SourceRef:
        return SourceRef(self.file, functools.partial(self.line_of, self.prefix + path), label)  # found on first use


def build_spec(raw: dict[str, Any], path: Path_, src: SourceInfo, found: Found, label: str = "") -> AssertionSpec:
    label = label or f"{src.label}.{field_label(path)}"
    spec = AssertionSpec(
        type=raw["type"],
        raw=raw,
        weight=float(raw.get("weight", 1)),
        negate=raw.get("not", False) is True,
        layer=Layer(raw["layer"]) if "layer" in raw else None,
        source=src.ref(path, label),
    )
    children = raw.get("children")
    if isinstance(children, list):
        spec.children = [
            build_spec(child, path + ("children", i), src, found, f"{label}.children[{i}]")
            for i, child in enumerate(children)
        ]
    kind = registry().get(spec.type)
    if kind is not None and kind.prepare is not None:
        try:
            spec.compiled = kind.prepare(spec)
        except PrepareError as exc:
            found.append((path + (exc.field,) if exc.field else path, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bad value must never become a traceback
            found.append((path, f"cannot use this assertion: {exc}"))
    return spec


def build_turn(raw: dict[str, Any], index: int, src: SourceInfo, found: Found) -> Turn:
    label = f"{src.label}.turns[{index}]"
    return Turn(
        prompt=raw["prompt"],
        assertions=[
            build_spec(a, ("turns", index, "assertions", k), src, found, f"{label}.assertions[{k}]")
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
    has a text to show; the run sends `turns`.
    """
    turns = [build_turn(t, j, src, found) for j, t in enumerate(raw.get("turns") or [])]
    return Sample(
        sample_id=raw["sample_id"],
        prompt=turns[0].prompt if turns else raw["prompt"],
        context=raw.get("context"),
        cwd=raw.get("cwd"),
        rubric=raw.get("rubric"),
        assertions=[
            build_spec(a, ("assertions", i), src, found, f"{src.label}.assertions[{i}]")
            for i, a in enumerate(raw.get("assertions") or [])
        ],
        dimensions=raw.get("dimensions"),
        capability=list(raw.get("capability") or []),
        category=raw.get("category"),
        difficulty=raw.get("difficulty"),
        construct=raw.get("construct"),
        provenance=raw.get("provenance"),
        mocks=list(raw.get("mocks") or []),
        mocks_strict=raw.get("mocksStrict", False) is True,
        tripwire=raw.get("tripwire", False) is True,
        environment=raw.get("environment"),
        tools=list(raw.get("tools") or []),
        raw=raw,
        source=src.ref((), src.label),
        base_dir=base_dir,
        turns=turns,
    )
