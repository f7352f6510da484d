"""Optional parts of omk, installed as pip extras, and the one-line message when a run needs one.

The default install leaves out what few runs use and much weighs (docs/benchmarks.md): the MCP SDK
(`omk[mcp]`) serves URL inlining through `.mcp.json` servers and the claude target's stand-in MCP
server for mocked `mcp__` tools.
"""

from __future__ import annotations

import importlib.util

# extra -> (the module it provides, what it is called in a message)
EXTRAS: dict[str, tuple[str, str]] = {"mcp": ("mcp", "the MCP SDK")}


def installed(extra: str) -> bool:
    """Whether the extra's module can be imported (looked up, not imported: the MCP SDK is slow to load)."""
    module = EXTRAS[extra][0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-removed install counts as missing
        return False


def missing_message(extra: str, purpose: str) -> str:
    """`<purpose> needs <what>, an optional part of omk: pip install 'omk[<extra>]'`."""
    return f"{purpose} needs {EXTRAS[extra][1]}, an optional part of omk: pip install 'omk[{extra}]'"
