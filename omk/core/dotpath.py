"""Reading a value inside nested JSON by a dotted path (`order.items.0.sku`).

A target fills the `{{ dotted.path }}` placeholders of a system prompt from a sample's variables
this way, and Big Sky's `include_context` assertion reads the context the same way.
"""

from __future__ import annotations

from typing import Any


def lookup(variables: Any, path: str) -> Any:
    """`a.b.c` inside nested objects (and arrays by index); None when any step is missing."""
    value = variables
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value
