"""How deeply a samples file may nest, and where a value nests deeper.

The YAML reader (omk.loader.yaml_lines) stops a file whose containers nest deeper than
`MAX_DEPTH`. What omk writes as a samples file itself (samples drafted by a model, samples
recorded from a run) is held to the same limit before it is written: it loads again, and no
recursive writer or walker (the YAML writer, the masker) is ever given data nested deeper.
"""

from __future__ import annotations

from typing import Any

from omk.loader.document import Path_

MAX_DEPTH = 200  # containers nested in one samples file
SAMPLE_DEPTH = MAX_DEPTH - 2  # one sample, below the file's mapping and its `samples:` list


def deeper_than(value: Any, limit: int) -> Path_ | None:
    """The path of the first container nested more than `limit` deep in `value` (`value` itself,
    when a container, is depth 1), or None. Walks with a list, never by recursion."""
    stack: list[tuple[Any, Path_]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if not isinstance(item, dict | list | tuple):
            continue
        if len(path) >= limit:
            return path
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        stack.extend((v, (*path, k if isinstance(k, int | str) else str(k))) for k, v in pairs)
    return None


def nested_too_deep(value: Any, limit: int = SAMPLE_DEPTH) -> str | None:
    """`mocks[0].return[0]…: nested deeper than 200 levels, the most a samples file holds`
    for a sample nested past the limit, else None."""
    from omk.loader.messages import field_label

    path = deeper_than(value, limit)
    if path is None:
        return None
    shown = field_label(path[:4]) + ("…" if len(path) > 4 else "")
    return f"{shown}: nested deeper than {MAX_DEPTH} levels, the most a samples file holds"
