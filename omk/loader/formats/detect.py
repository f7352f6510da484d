"""Which format a parsed file is in, from its shape alone (no name or marker needed).

* omk: an object with `samples` or an omk `schemaVersion` (`omk.eval-sample-set/v1`), or a list whose items carry `sample_id` (or anything that is
  neither of the others, so omk's own messages explain what is wrong);
* M365 (`runevals`): an object with `items` or `schemaVersion`, or the oldest legacy object
  `{"prompts": [...], "expected_responses": [...]}`; or, in a `.json` file, a legacy
  bare array `[{prompt, expected_response?}, …]`: a list of objects that each have `prompt` or
  `turns` and none of which has a key only omk has (`sample_id`, `assertions`, `rubric`, an
  `x-` key…, also in a turn) or a misspelling closer to one of those than to an M365 key. So
  `[{"prompt": "Tell me about returns"}]` is M365 and a typo such as
  `expected_respons` is reported with M365's suggestions, while an omk sample that forgot its
  `sample_id` but has checks still gets omk's own message; a YAML or JSONL list is always omk;
* Big Sky: an object with `data` (and no `samples` / `items`).
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path
from typing import Any

OMK, M365, BIGSKY = "omk", "m365", "bigsky"

# Keys a legacy M365 item may carry (schema 1.x input and output fields, plus the labels the M365 documentation uses).
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
CLOSE = 0.6  # difflib's cutoff, as the loader's "did you mean"


@cache
def omk_only_keys() -> tuple[frozenset[str], frozenset[str]]:
    """Sample keys and turn keys that omk has and an M365 item or turn does not."""
    from omk.schema.parts import sample_properties, turn_def

    sample = frozenset(sample_properties()) - M365_ITEM_KEYS
    turn = frozenset(turn_def()["properties"]) - M365_ITEM_KEYS
    return sample, turn


def _omk_key(key: Any, omk_keys: frozenset[str]) -> bool:
    """Is `key` omk's own, an `x-` extension, or a misspelling nearer omk's keys than M365's?"""
    if not isinstance(key, str) or key in M365_ITEM_KEYS:
        return False
    if key in omk_keys or key.startswith("x-"):
        return True

    def nearest(names: frozenset[str]) -> float:
        return max((difflib.SequenceMatcher(None, key, n).ratio() for n in names), default=0.0)

    to_omk = nearest(omk_keys)
    return to_omk >= CLOSE and to_omk > nearest(M365_ITEM_KEYS)


def _legacy_m365(items: list[Any]) -> bool:
    sample_keys, turn_keys = omk_only_keys()
    for item in items:
        if not isinstance(item, dict) or not ("prompt" in item or "turns" in item):
            return False
        if any(_omk_key(k, sample_keys) for k in item):
            return False
        turns = item.get("turns")
        if isinstance(turns, list) and any(isinstance(t, dict) and any(_omk_key(k, turn_keys) for k in t) for t in turns):
            return False
    return True


def omk_version(value: Any) -> bool:
    """A `schemaVersion` of omk's own (`omk.eval-sample-set/v1`, or a later one omk must refuse)."""
    return isinstance(value, str) and value.startswith("omk.")


def detect(data: Any, path: Path | None = None) -> str:
    if isinstance(data, dict):
        if "samples" in data or omk_version(data.get("schemaVersion")):
            return OMK
        if "items" in data or "schemaVersion" in data or "prompts" in data:
            return M365
        if "data" in data:
            return BIGSKY
        return OMK
    if isinstance(data, list) and data and (path is None or path.suffix.lower() == ".json") and _legacy_m365(data):
        return M365
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
