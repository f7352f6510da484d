"""What a sample's `mocks` declare, as the loader checks them, the mock sandbox answers from them
and the response cache keys them: each mock's key and where its `return_file` is read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


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
    from omk.safe_files import sample_path

    return sample_path(name, base_dir)


RECORDED = "production-trace"  # the `provenance` of a sample recorded from a run (omk sample --from-run)


def drift_notes(provenance: str | None, mocks: Sequence[dict[str, Any]], calls: Sequence[Any]) -> list[str]:
    """What a recorded sample's agent now does that the recording never did: one line per tool
    call no mock answered (`calls` are the trace's ToolCalls). Empty for a sample that was not
    recorded (`provenance` other than production-trace) or has no mocks."""
    from omk.toolnames import same_tool

    if provenance != RECORDED or not mocks:
        return []
    notes = []
    for call in calls:
        if call.mocked:
            continue
        tool = str(call.tool)
        if any(same_tool(str(m.get("tool", "")), tool) or m.get("tool") == tool for m in mocks):
            shown = json.dumps(call.input, ensure_ascii=False, default=str)
            shown = shown if len(shown) <= 120 else shown[:119] + "…"
            notes.append(f"mock drift: the agent now calls {tool} with {shown}, an input the recording never had")
        else:
            notes.append(f"mock drift: the agent now calls {tool}, which the recording never did")
    return list(dict.fromkeys(notes))
