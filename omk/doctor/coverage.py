"""What a sample set covers: counts by metadata, assertion type and layer, as omk 0.23 counts them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from omk.assertions.evaluate import layer_of
from omk.samples.model import AssertionSpec, Sample

UNSPECIFIED = "unspecified"


def _walk(specs: Sequence[AssertionSpec]) -> Iterator[AssertionSpec]:
    for spec in specs:
        yield spec
        yield from _walk(spec.children)


def _capabilities(samples: list[Sample]) -> dict[str, int]:
    """Samples per capability, grouped by normalised name and shown under its first spelling."""
    from omk.doctor.diagnostics import normalize_capability

    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for s in samples:
        caps = [c.strip() for c in s.capability if c.strip()]
        if not caps:
            counts[UNSPECIFIED] += 1
            shown.setdefault(UNSPECIFIED, UNSPECIFIED)
        for key, name in {normalize_capability(c): c for c in reversed(caps)}.items():
            counts[key] += 1
            shown.setdefault(key, name)
    return {shown[k]: n for k, n in counts.most_common()}


def coverage(samples: list[Sample]) -> dict[str, Any]:
    types: Counter[str] = Counter()
    layers: Counter[str] = Counter()
    for s in samples:
        for specs in s.assertion_lists():  # a conversation's turns count too
            for spec in _walk(specs):
                types[spec.type] += 1
            for spec in specs:  # layers of the top-level assertions: what the scores see
                layers[layer_of(spec).value] += 1
    rubrics = [len(r.strip()) for s in samples for r in (s.rubric, *(t.rubric for t in s.turns)) if r and r.strip()]
    return {
        "samples": len(samples),
        "capability": _capabilities(samples),
        "difficulty": dict(Counter(s.difficulty or UNSPECIFIED for s in samples).most_common()),
        "construct": dict(Counter(s.construct or UNSPECIFIED for s in samples).most_common()),
        "provenance": dict(Counter(s.provenance or UNSPECIFIED for s in samples).most_common()),
        "assertion_types": dict(types.most_common()),
        "layers": dict(layers.most_common()),
        "declared": {
            "capability": sum(1 for s in samples if any(c.strip() for c in s.capability)),
            "difficulty": sum(1 for s in samples if s.difficulty),
            "construct": sum(1 for s in samples if s.construct),
            "provenance": sum(1 for s in samples if s.provenance),
        },
        "avg_rubric_length": round(sum(rubrics) / len(rubrics)) if rubrics else None,
        "with_rubric": sum(1 for s in samples if s.rubric or any(t.rubric for t in s.turns)),
        "with_dimensions": sum(1 for s in samples if s.dimensions or any(t.dimensions for t in s.turns)),
        "conversations": sum(1 for s in samples if s.turns),
        "with_mocks": sum(1 for s in samples if s.mocks),
        "with_environment": sum(1 for s in samples if s.environment),
        "tripwires": sum(1 for s in samples if s.tripwire),
    }
