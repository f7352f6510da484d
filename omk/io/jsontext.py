"""The one JSON encoder for the files omk writes (results.jsonl, report.json, the run folders'
manifests): strict JSON, whatever the values hold.

JSON has no NaN or infinity. Python's `json` writes them bare (`NaN`, `Infinity`) unless told not
to, and a program's tool call or a hand-made trace can carry them; a strict reader (`jq`, a
browser, another language) then refuses the whole file. `dumps` writes each such number as `null`
and lists where it was, so the caller can say so.
"""

from __future__ import annotations

import json
import math
from typing import Any


class CheckedJson(str):
    """JSON text omk wrote itself in this process, strict as written: no NaN or infinity and no
    lone surrogate (a results.jsonl line the run wrote, read back for report.json, which then
    takes it as it is instead of looking it over for them again)."""

    __slots__ = ()


def dumps(value: Any, *, where: list[str] | None = None, at: str = "", **options: Any) -> str:
    """`value` as strict JSON text (UTF-8 characters kept as they are): a NaN or an infinity is
    written as `null`, and its place (`at.key[0]`…) appended to `where`."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    except ValueError:
        value = finite(value, at, [] if where is None else where)
    return json.dumps(value, ensure_ascii=False, allow_nan=False, **options)


def finite(value: Any, at: str, where: list[str]) -> Any:
    """`value` with every NaN or infinity (in dicts, lists and tuples) replaced by None; each
    place is appended to `where`."""
    if isinstance(value, float) and not math.isfinite(value):
        where.append(at or "(top)")
        return None
    if isinstance(value, dict):
        return {k: finite(v, f"{at}.{k}" if at else str(k), where) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v, f"{at}[{i}]", where) for i, v in enumerate(value)]
    return value


def nonfinite_warning(where: list[str]) -> list[str]:
    """The report's warning for the places `dumps` wrote as null (none when there are none)."""
    if not where:
        return []
    shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
    return [f"not-a-number or infinite values written as null (JSON has no such numbers): {shown}"]
