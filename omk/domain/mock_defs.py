"""What a sample's `mocks` declare, as the loader checks them, the mock sandbox answers from them
and the response cache keys them: each mock's key, where its `return_file` is read, what
`match.input` means, and the drift of a sample recorded from a run (a call no mock answered).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omk.records import ToolCall


def mock_keys(mocks: Sequence[dict[str, Any]]) -> list[str]:
    """`<tool>:<ordinal among mocks with the same literal tool string>`, one per mock, in order."""
    seen: dict[str, int] = {}
    keys = []
    for mock in mocks:
        tool = str(mock.get("tool", ""))
        seen[tool] = seen.get(tool, 0) + 1
        keys.append(f"{tool}:{seen[tool]}")
    return keys


def return_file_path(name: str, base_dir: Path) -> Path:
    """Where a mock's `return_file` is read: `~` expanded, relative to the samples file's folder.
    The loader checks the file is there (omk/loader/files.py); a file gone by run time is a marked error."""
    from omk.io.safe_files import sample_path

    return sample_path(name, base_dir)


def _same_value(expected: Any, actual: Any) -> bool:
    """Deep equality as JSON sees it (True is not 1)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
            _same_value(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            _same_value(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return expected == actual


def is_subset(expected: Any, actual: Any) -> bool:
    """`match.input`: every key of `expected` is in `actual` with a matching value (recursively);
    arrays and scalars must be deep-equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and is_subset(v, actual[k]) for k, v in expected.items())
    return _same_value(expected, actual)


RECORDED = "production-trace"  # the `provenance` of a sample recorded from a run (omk sample --from-run)


# The agent CLI's own bookkeeping tools (Claude Code loading a skill, searching its deferred tools,
# keeping its to-do list, starting a subagent): they run in a replay without a mock (the hook lets
# them through) and touch nothing outside the session, so calling them is no drift.
BOOKKEEPING_TOOLS = frozenset({"Skill", "ToolSearch", "TodoWrite", "Task", "Agent"})


def drift_notes(
    provenance: str | None,
    mocks: Sequence[dict[str, Any]],
    calls: Sequence[ToolCall],
    matches: Callable[[dict[str, Any], str, Any], bool] | None = None,
) -> list[str]:
    """What a recorded sample's agent now does that the recording never did: one line per tool
    call no mock answered (`calls` are the trace's ToolCalls). Empty for a sample that was not
    recorded (`provenance` other than production-trace) or has no mocks. `matches(mock, tool,
    input)` is the mock sandbox's test (omk.targets.mocks.mock_matches).

    A call no mock answered is not drift when a mock holds that very call but the agent refused
    it before any mock could answer: a tool it does not offer (`outcome: unsupported`, which the
    trace names apart) or a check of its own (`refused`, noted as such). Claude Code
    checks that a file to edit exists and was read before its hooks run; in a replay the read was
    a mock's answer, so it refuses the edit the recording saw run. That is said as it is."""
    if provenance != RECORDED or not mocks:
        return []
    from omk.domain.toolnames import same_tool

    notes = []
    for call in calls:
        tool = str(call.tool)
        if call.mocked or call.mock_key is not None:  # a mock answered it, or let the real tool run (`run: true`)
            continue
        recorded = matches is not None and any(matches(m, tool, call.input) for m in mocks)
        if recorded and call.outcome == "unsupported":
            continue  # the trace names it apart (omk.domain.toolnames.unsupported_note)
        if recorded and call.outcome == "refused":
            notes.append(REFUSED.format(tool=tool, reason=refusal(call.output)))
        elif tool in BOOKKEEPING_TOOLS:
            continue
        elif any(same_tool(str(m.get("tool", "")), tool) or m.get("tool") == tool for m in mocks):
            shown = json.dumps(call.input, ensure_ascii=False, default=str)
            shown = shown if len(shown) <= 120 else shown[:119] + "…"
            notes.append(f"mock drift: the agent now calls {tool} with {shown}, an input the recording never had")
        else:
            notes.append(f"mock drift: the agent now calls {tool}, which the recording never did")
    return list(dict.fromkeys(notes))


DRIFT_PREFIX = "mock drift: "  # a note that is drift (the others say what happened instead)
REFUSED = "the agent CLI refused {tool} before its recorded mock could answer ({reason})"


def refusal(output: Any) -> str:
    """The reason in an agent CLI's refusal (`<tool_use_error>File does not exist.</tool_use_error>`), cut short."""
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    text = " ".join(text.replace("<tool_use_error>", "").replace("</tool_use_error>", "").split())
    return text if len(text) <= 100 else text[:99] + "…"
