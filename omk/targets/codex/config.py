"""Codex's configuration as data: `-c key=value` overrides written from a Python table.

Codex reads each override's value as TOML. Every text that reaches one (a model name, the
system prompt, a path, a stand-in MCP server's command) is written by a TOML writer (tomli-w),
never spliced into TOML by hand; a key (a table's name, such as the stand-in server's name, which
comes from a sample's mock) must be a bare TOML key of letters, digits, `_` and `-`, which is
also all a tool or MCP server name may hold (omk.domain.toolnames). Anything else raises ValueError.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import tomli_w

BARE_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")


def key(name: str) -> str:
    """`name` as a bare TOML key; ValueError when it is not one."""
    if not isinstance(name, str) or not BARE_KEY.fullmatch(name):
        raise ValueError(f"codex: {str(name)[:80]!r} cannot be a configuration key (letters, digits, '_', '-' only)")
    return name


def value(item: Any) -> str:
    """`item` (text, number, true/false, a list or a table of them) as one line of TOML."""
    if isinstance(item, Mapping):
        return "{" + ", ".join(f"{key(k)}={value(v)}" for k, v in item.items()) + "}"
    if isinstance(item, list | tuple):
        return "[" + ", ".join(value(v) for v in item) + "]"
    if isinstance(item, str | int | float | bool):
        line = tomli_w.dumps({"v": item})  # `v = <value>\n`: the writer quotes and escapes
        return line[len("v = "):].rstrip("\n")
    raise ValueError(f"codex: a {type(item).__name__} cannot be a configuration value")


def overrides(table: Mapping[str, Any]) -> list[str]:
    """`-c path=value` for each entry; a nested table whose name is `a.b` is given as `a.b`, one
    checked key at a time, so the override adds to a table rather than replacing it."""
    argv: list[str] = []
    for path, item in table.items():
        dotted = ".".join(key(part) for part in path.split("."))
        argv += ["-c", f"{dotted}={value(item)}"]
    return argv
