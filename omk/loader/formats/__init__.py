"""Dataset formats written for other tools, read as they are into omk `Sample`s.

| shape | module | what it is |
| --- | --- | --- |
| `{"schemaVersion", "items"}` or a bare `[{"prompt", "expected_response"}]` | `m365` | Microsoft 365 Agents Toolkit eval documents (`runevals`) |
| `{"name", "data": [{"inputs", "outputs"}], "evaluators"}` | `bigsky` | Big Sky Agents `eval-agents` datasets |

`detect` tells the shapes apart (the loader asks it about every file); `read_foreign` turns a
parsed `Document` into samples and problems in the loader's `FILE:LINE: where field: what` form.
`migrate` upgrades legacy M365 arrays (`omk migrate`); `inline` builds samples from
`omk eval --prompts … --expected …`. docs/formats.md is the user-facing account.
"""

from __future__ import annotations

from pathlib import Path

from omk.core.errors import Problem
from omk.loader.document import Document
from omk.loader.formats.detect import BIGSKY, M365, OMK, detect, refuse
from omk.samples.model import Sample

__all__ = ["BIGSKY", "M365", "OMK", "detect", "read_foreign", "refuse"]


def read_foreign(
    shape: str, doc: Document, file: str, base_dir: Path, first_ids: dict[str, tuple[str, int | None]]
) -> tuple[list[Sample], list[Problem]]:
    """Samples and problems for a file `detect` did not call omk's own. `first_ids` is shared
    with the loader, so ids stay unique across every file of the run."""
    if shape == M365:
        from omk.loader.formats.m365 import read_m365

        return read_m365(doc, file, base_dir, first_ids)
    if shape == BIGSKY:
        from omk.loader.formats.bigsky import read_bigsky

        return read_bigsky(doc, file, base_dir, first_ids)
    raise ValueError(f"not a foreign shape: {shape!r}")
