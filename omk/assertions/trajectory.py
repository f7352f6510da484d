"""Trajectory assertions: the path the agent took, as an ordered list of tool calls.

`tool_sequence` compares the trace's tool calls with `steps` (omk.assertions.steps) in one of
three modes: `exact` (these calls, in this order, nothing else), `in_order` (these calls in this
order, others may come between) and `any_order` (these calls and no others, in any order: the
same multiset). A failure shows both sequences side by side, with the first step that differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.registry import assertion
from omk.assertions.steps import STEPS, Step, call_label, parse_steps
from omk.records import ToolCall
from omk.samples.model import AssertionSpec, Layer, Outcome

MODES = ("exact", "in_order", "any_order")
Row = tuple[str, str, bool]  # (expected, actual, is this the step that differs)


def prepare_sequence(spec: AssertionSpec) -> tuple[Step, ...]:
    return parse_steps(spec.get("steps"))


def _steps(spec: AssertionSpec) -> tuple[Step, ...]:
    compiled = spec.compiled
    return compiled if isinstance(compiled, tuple) else prepare_sequence(spec)


@assertion(
    "tool_sequence",
    layer=Layer.BEHAVIOR,
    schema={"required": ["steps"], "properties": {"steps": STEPS, "mode": {"enum": list(MODES)}}},
    prepare=prepare_sequence,
)
def tool_sequence(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The tool calls follow `steps` (`mode`: exact, the default; in_order; any_order)."""
    steps, calls = _steps(spec), ctx.trace.tool_calls
    mode = spec.get("mode") or "exact"
    if mode == "in_order":
        ok, rows, at = _in_order(steps, calls)
    elif mode == "any_order":
        ok, rows, at = _any_order(steps, calls)
    else:
        ok, rows, at = _exact(steps, calls)
    head = f"{len(calls)} tool call(s) follow the {len(steps)} step(s) ({mode})"
    if not ok:
        head = f"tool calls differ from the steps ({mode}) at step {at}" if at else f"tool calls differ from the steps ({mode})"
    return Outcome(ok, message=head + "\n" + _table(rows))


def _exact(steps: tuple[Step, ...], calls: Sequence[ToolCall]) -> tuple[bool, list[Row], int | None]:
    rows: list[Row] = []
    first: int | None = None
    for i, (step, call) in enumerate(zip_longest(steps, calls), 1):
        differs = step is None or call is None or not step.matches(call)
        if differs and first is None:
            first = i
        rows.append((step.label() if step else "", call_label(call) if call else "", differs and first == i))
    return first is None, rows, first


def _in_order(steps: tuple[Step, ...], calls: Sequence[ToolCall]) -> tuple[bool, list[Row], int | None]:
    """Each step takes the earliest call after the previous step's (the greedy choice is optimal
    for a subsequence); the first step that finds none is the one that differs."""
    rows: list[Row] = []
    k = 0
    for i, step in enumerate(steps, 1):
        found = next((j for j in range(k, len(calls)) if step.matches(calls[j])), None)
        if found is None:
            rows += [("", call_label(c), False) for c in calls[k:]]
            rows.append((step.label(), "", True))
            rows += [(s.label(), "", False) for s in steps[i:]]
            return False, rows, i
        rows += [("", call_label(c), False) for c in calls[k:found]]
        rows.append((step.label(), call_label(calls[found]), False))
        k = found + 1
    rows += [("", call_label(c), False) for c in calls[k:]]
    return True, rows, None


def _pairing(steps: tuple[Step, ...], calls: Sequence[ToolCall]) -> dict[int, int]:
    """The most steps paired with distinct calls each matches (call index -> step index):
    a bipartite matching by augmenting paths, small enough for any real trace."""
    owner: dict[int, int] = {}

    def place(s: int, seen: set[int]) -> bool:
        for c, call in enumerate(calls):
            if c not in seen and steps[s].matches(call):
                seen.add(c)
                if c not in owner or place(owner[c], seen):
                    owner[c] = s
                    return True
        return False

    for s in range(len(steps)):
        place(s, set())
    return owner


def _any_order(steps: tuple[Step, ...], calls: Sequence[ToolCall]) -> tuple[bool, list[Row], int | None]:
    owner = _pairing(steps, calls)
    by_step = {s: c for c, s in owner.items()}
    missing = [s for s in range(len(steps)) if s not in by_step]
    extra = [c for c in range(len(calls)) if c not in owner]
    rows: list[Row] = [(steps[s].label(), call_label(calls[by_step[s]]), False) for s in range(len(steps)) if s in by_step]
    rows += [(steps[s].label(), "", s == (missing[0] if missing else None)) for s in missing]
    rows += [("", call_label(calls[c]), not missing and c == extra[0]) for c in extra]
    first = missing[0] + 1 if missing else None
    return not missing and not extra, rows, first


def _table(rows: list[Row]) -> str:
    """The two sequences side by side; `>` marks the step that differs, `—` a missing side."""
    width = max([len("expected"), *(len(e) for e, _, _ in rows)])
    lines = [f"   {'expected'.ljust(width)}  actual"]
    for expected, actual, mark in rows:
        lines.append(f"{'>' if mark else ' '}  {(expected or '—').ljust(width)}  {actual or '—'}")
    return "\n".join(lines)


def step_values(values: Any) -> tuple[Step, ...]:
    return parse_steps(values, "values")
