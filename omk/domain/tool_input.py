"""One reading of a tool call's input, shared by recording a call into a mock (`omk sample
--from-run`, omk/authoring/from_run.py) and matching a call against a mock (the mock sandbox,
omk/targets/mocks.py, which the `claude:` and `codex:` hooks run too).

- `normalized`: the input as plain JSON values (what report.json kept and what a hook reads
  from the CLI's JSON): a tuple is a list, a key is a string, anything else its text. Line ends,
  Unicode and key order are kept as they are (a YAML samples file round-trips them exactly).
- `path_of` / `command_of`: the field naming a file (`file_path`, `path`, `notebook_path`) or
  a command (`command`, `cmd`; Codex's shell gives a list of words, joined as its shell would).
- `recorded_match`: how a mock recognises a recorded call: its whole input, except a file path or
  command naming the fresh folder the agent worked in, new on every run
  (`…/omk-claude-XXXX/work/…`): a path there is matched by its end (`file_path_endswith`), a
  command by a glob with `*` in the folder's place (`command_glob`).
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

# The fresh folder an agent target works in (omk/domain/workspace.py, the claude: and codex: workspaces).
FRESH_FOLDER = re.compile(r"(?:[A-Za-z]:)?[^\s\"'=]*?[/\\]omk-[a-z]+-[A-Za-z0-9_]+[/\\]work(?=[/\\]|\b|$)")
PATH_KEYS = ("file_path", "path", "notebook_path")
COMMAND_KEYS = ("command", "cmd")


def normalized(value: Any) -> Any:
    """`value` as plain JSON values; the same value for a recorded call and a live one."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def call_key(tool: str, value: Any) -> str:
    """One text per (tool, input), equal for equal calls whatever their keys' order."""
    return json.dumps([tool, normalized(value)], sort_keys=True, ensure_ascii=False)


def path_of(value: Any) -> str | None:
    """The file a call names, if any."""
    return _field(value, PATH_KEYS)


def command_of(value: Any) -> str | None:
    """The command a call runs, if any (a list of words joined as a shell would quote them)."""
    if not isinstance(value, dict):
        return None
    for key in COMMAND_KEYS:
        found = value.get(key)
        if isinstance(found, str):
            return found
        if isinstance(found, list) and found and all(isinstance(w, str) for w in found):
            return shlex.join(found)
    return None


def _field(value: Any, keys: tuple[str, ...]) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in keys:
        found = value.get(key)
        if isinstance(found, str):
            return found
    return None


def recorded_match(call_input: Any) -> dict[str, Any] | None:
    """A mock's `match` for a recorded call (see the module's text); None for an empty input."""
    call_input = normalized(call_input)
    if call_input in (None, {}, ""):
        return None
    if not isinstance(call_input, dict):
        return {"input": call_input}
    rest, match = dict(call_input), dict[str, Any]()
    for key in PATH_KEYS:
        value = rest.get(key)
        found = FRESH_FOLDER.match(value) if isinstance(value, str) else None
        inside = found.string[found.end() :].lstrip("/\\") if found else ""
        if inside:
            del rest[key]
            match["file_path_endswith"] = inside
            break
    for key in COMMAND_KEYS:
        value = rest.get(key)
        if isinstance(value, str) and FRESH_FOLDER.search(value):
            del rest[key]
            match["command_glob"] = FRESH_FOLDER.sub("*", value)
            break
    if rest or not match:
        match["input"] = rest
    return match
