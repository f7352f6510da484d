"""Small builders for assertion tests: specs from dicts, contexts, and one-call evaluation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from omk.assertions import registry
from omk.assertions.context import CheckContext
from omk.assertions.evaluate import evaluate
from omk.records import AssertionResult, Trace
from omk.samples.model import AssertionSpec, Layer, Sample

_COMMON = {"type", "not", "weight", "layer", "children"}


def make_spec(raw: dict[str, Any] | str, **fields: Any) -> AssertionSpec:
    """An AssertionSpec as the loader would build it (common fields lifted, `prepare` run).

    `make_spec("contains", value="x")` or `make_spec({"type": "contains", "value": "x"})`.
    """
    raw = {"type": raw, **fields} if isinstance(raw, str) else {**raw, **fields}
    spec = AssertionSpec.of(
        type=raw["type"],
        raw=raw,
        weight=float(raw.get("weight", 1)),
        negate=bool(raw.get("not", False)),
        layer=Layer(raw["layer"]) if "layer" in raw else None,
        children=[make_spec(child) for child in raw.get("children", [])],
    )
    kind = registry.get(spec.type)
    if kind is not None and kind.prepare is not None:
        spec.compiled = kind.prepare(spec)
    return spec


def make_ctx(
    output: str = "",
    trace: Trace | None = None,
    sample: Sample | None = None,
    base_dir: Path | None = None,
    **fields: Any,
) -> CheckContext:
    if sample is None:
        sample = Sample(sample_id="s1", prompt="p", raw={"sample_id": "s1", "prompt": "p"})
    if base_dir is not None:
        sample.base_dir = base_dir
    return CheckContext(output=output, trace=trace or Trace(), sample=sample, **fields)


def run(specs: list[AssertionSpec] | AssertionSpec, ctx: CheckContext) -> list[AssertionResult]:
    """Evaluate through the engine (so `not`, sets and layers apply)."""
    return asyncio.run(evaluate(specs if isinstance(specs, list) else [specs], ctx))


def check(
    raw: dict[str, Any] | str, output: str = "", trace: Trace | None = None, **fields: Any
) -> AssertionResult:
    """One assertion on one output, through the engine."""
    return run(make_spec(raw, **fields), make_ctx(output, trace))[0]
