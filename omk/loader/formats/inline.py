"""Samples from the command line, as runevals takes them: `omk eval --prompts "…" "…" --expected "…" "…"`.

Prompts and expected answers pair by position; the items are read exactly like the items of an
M365 eval document (schema 1.2.0), so the same evaluators apply: Relevance and Coherence unless
`--evaluators` names others (M365 names, comma-separated, e.g. `PartialMatch,Similarity`). Ids are
`prompt-1`, `prompt-2`, …
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.core.errors import InputError, Problem
from omk.loader.document import Document, NoLines
from omk.loader.formats.m365 import CURRENT_VERSION, read_m365

SOURCE = "--prompts"


def inline_samples(prompts: list[str], expected: list[str] | None, evaluators: str | None, cwd: Path) -> list[Any]:
    """Samples for the prompts given on the command line; bad input raises `InputError`."""
    if expected is not None and len(expected) != len(prompts):
        raise InputError(
            f"--expected: {len(expected)} expected answer(s) for {len(prompts)} prompt(s); give one per prompt, in the same order"
        )
    items = [{"prompt": p, **({"expected_response": expected[i]} if expected is not None else {})} for i, p in enumerate(prompts)]
    document: dict[str, Any] = {"schemaVersion": CURRENT_VERSION, "items": items}
    if evaluators:
        names = [n.strip() for n in evaluators.split(",") if n.strip()]
        document["default_evaluators"] = {n: {} for n in names}
    samples, problems = read_m365(Document(document, NoLines()), SOURCE, cwd, {}, stem="prompt")
    if problems:
        raise InputError([_cli_wording(p) for p in problems])
    return samples


def _cli_wording(p: Problem) -> Problem:
    """Name the command-line option, not the document the options were turned into."""
    where = p.where.replace("items[", "--prompts[")
    field = p.field
    if field.startswith("default_evaluators"):
        where, field = "", "--evaluators " + field.split(".", 1)[-1].split(".")[0]
    elif field == "expected_response":
        field = "--expected"
    elif field == "prompt":
        field = ""
    message = p.message.replace("(from default_evaluators)", "(from --evaluators)")
    return Problem("", None, where, field, message)
