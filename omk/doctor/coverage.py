"""What a sample set covers: counts by metadata, assertion type and layer."""

from __future__ import annotations

from collections import Counter
from typing import Any

from omk.assertions.engine import layer_of
from omk.model import AssertionSpec, Sample

UNSPECIFIED = "unspecified"


def _walk(specs: list[AssertionSpec]):
    for spec in specs:
        yield spec
        yield from _walk(spec.children)


def coverage(samples: list[Sample]) -> dict[str, Any]:
    capability: Counter[str] = Counter()
    for s in samples:
        for cap in dict.fromkeys(c.strip() for c in s.capability) or [UNSPECIFIED]:
            capability[cap] += 1
    types: Counter[str] = Counter()
    layers: Counter[str] = Counter()
    for s in samples:
        for spec in _walk(s.assertions):
            types[spec.type] += 1
        for spec in s.assertions:  # layers of the top-level assertions: what the scores see
            layers[layer_of(spec).value] += 1
    return {
        "samples": len(samples),
        "capability": dict(capability.most_common()),
        "difficulty": dict(Counter(s.difficulty or UNSPECIFIED for s in samples).most_common()),
        "construct": dict(Counter(s.construct or UNSPECIFIED for s in samples).most_common()),
        "provenance": dict(Counter(s.provenance or UNSPECIFIED for s in samples).most_common()),
        "assertion_types": dict(types.most_common()),
        "layers": dict(layers.most_common()),
        "with_rubric": sum(1 for s in samples if s.rubric),
        "with_dimensions": sum(1 for s in samples if s.dimensions),
        "with_mocks": sum(1 for s in samples if s.mocks),
        "tripwires": sum(1 for s in samples if s.tripwire),
    }
