"""Rules a JSON Schema cannot express (omk 0.54's), checked on an assertion of valid shape.

* numbers must be finite (`.inf` / `.nan` are YAML numbers, not useful weights or limits);
* `tool_*` values are `Tool:needle` with both sides non-blank;
* `mock_hit` must name a mock of the sample (`Tool:N`, the keys the mock sandbox gives);
* `faithfulness` and `context_recall` need the sample's `context` or their own `reference`.

Duplicate sample ids, nesting depth and judge types inside assert-set are checked by the
loader and `validate` where the whole set or the nesting is in view.
"""

from __future__ import annotations

import math
from typing import Any

from omk.assertions.registry import AssertionType
from omk.domain.mock_defs import mock_keys
from omk.loader.document import Path_
from omk.loader.messages import MOCK_KEY_PATTERN, TOOL_NEEDLE_PATTERN, show

NEEDS_CONTEXT = ("faithfulness", "context_recall")


_PLANS: dict[str, tuple[bool, bool, bool]] = {}


def _plan(kind: AssertionType) -> tuple[bool, bool, bool]:
    """Which rules apply to a type: (Tool:needle value, mock key value, needs context)."""
    plan = _PLANS.get(kind.name)
    if plan is None:
        plan = _PLANS[kind.name] = _make_plan(kind)
    return plan


def _make_plan(kind: AssertionType) -> tuple[bool, bool, bool]:
    value = kind.schema.get("properties", {}).get("value")
    pattern = value.get("pattern") if isinstance(value, dict) else None
    return pattern == TOOL_NEEDLE_PATTERN, pattern == MOCK_KEY_PATTERN, kind.name in NEEDS_CONTEXT


def uses_sample(kind: AssertionType) -> bool:
    """Whether a type's rules look at its sample (its mocks or its context), not only at the assertion."""
    _, mock_key, needs_context = _plan(kind)
    return mock_key or needs_context


def check_assertion(item: dict[str, Any], kind: AssertionType, sample: dict[str, Any]) -> list[tuple[Path_, str]]:
    found: list[tuple[Path_, str]] = []
    for key, value in item.items():
        if value.__class__ is float and not math.isfinite(value):
            found.append(((key,), f"must be a finite number (got {show(value)})"))
    needle, mock_key, needs_context = _plan(kind)
    value = item.get("value")
    if needle and isinstance(value, str):
        tool, _, text = value.partition(":")
        if not tool.strip() or not text.strip():
            found.append(
                (("value",), f'must be "Tool:text" with a non-blank tool name and text (got {show(value)})')
            )
    elif mock_key and isinstance(value, str):
        keys = _mock_keys(sample)
        if value not in keys and value.lower() not in {k.lower() for k in keys}:
            available = ", ".join(keys) if keys else "(none)"
            found.append((("value",), f'references missing mock "{value}"; available mock keys: {available}'))
    if needs_context and not item.get("reference") and not sample.get("context"):
        found.append(((), f'"{kind.name}" needs the sample\'s "context" or its own "reference"'))
    return found


def _mock_keys(sample: dict[str, Any]) -> list[str]:
    mocks = sample.get("mocks")
    if not isinstance(mocks, list):
        return []
    return mock_keys([m for m in mocks if isinstance(m, dict)])
