"""Which format a parsed file is in, from its shape alone (no name or marker needed).

* omk: an object with `samples`, or a list whose items carry `sample_id` (or anything that is
  neither of the others, so omk's own messages explain what is wrong);
* M365 (`runevals`): an object with `items` or `schemaVersion`; or, in a `.json` file, a list
  of objects that look like legacy M365 items: no `sample_id`, every key an M365 item key, and at
  least one `expected_response` or `turns` (a legacy array is `[{prompt, expected_response}]`);
* Big Sky: an object with `data` (and no `samples` / `items`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

OMK, M365, BIGSKY = "omk", "m365", "bigsky"

# Keys a legacy M365 item may carry (schema 1.x input and output fields, plus the seed's labels).
M365_ITEM_KEYS = frozenset(
    {
        "prompt",
        "expected_response",
        "context",
        "evaluators",
        "evaluators_mode",
        "extensions",
        "testId",
        "category",
        "notes",
        "name",
        "description",
        "turns",
        "conversation_id",
        "response",
        "citations",
        "scores",
        "diagnostics",
        "status",
        "error",
        "summary",
    }
)

JS_SUFFIXES = (".js", ".mjs", ".cjs")


def detect(data: Any, path: Path | None = None) -> str:
    if isinstance(data, dict):
        if "samples" in data:
            return OMK
        if "items" in data or "schemaVersion" in data:
            return M365
        if "data" in data:
            return BIGSKY
        return OMK
    if isinstance(data, list) and data and (path is None or path.suffix.lower() == ".json"):
        items = [d for d in data if isinstance(d, dict)]
        if (
            len(items) == len(data)
            and all(set(d) <= M365_ITEM_KEYS for d in items)
            and any("expected_response" in d or "turns" in d for d in items)
        ):
            return M365  # no `sample_id`: M365_ITEM_KEYS does not have it
    return OMK


def refuse(path: Path) -> str | None:
    """Why a file cannot be read at all, before parsing (a JavaScript dataset module)."""
    if path.suffix.lower() in JS_SUFFIXES:
        return (
            "a JavaScript dataset module (Big Sky accepts these) cannot be read by omk; export it to JSON first, e.g. "
            f"node -e \"import('./{path.name}').then(m => console.log(JSON.stringify(m.default, null, 2)))\" "
            f"> {path.stem}.json"
        )
    return None
