"""`assert-set`: any/all over nested assertions. The engine evaluates it; this registers its shape."""

from __future__ import annotations

from omk.assertions.context import CheckContext
from omk.assertions.registry import assertion
from omk.samples.model import AssertionSpec, Layer, Outcome


@assertion(
    "assert-set",
    layer=Layer.FACT,  # the real layer is derived from the leaves (engine.layer_of)
    schema={
        "required": ["children"],
        "properties": {
            "mode": {"enum": ["any", "all"]},
            "children": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/assertion"}},
        },
    },
)
def assert_set(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Combine nested assertions with `mode: any` (OR) or `all` (AND, the default)."""
    raise RuntimeError("assert-set is evaluated by omk.assertions.evaluate")
