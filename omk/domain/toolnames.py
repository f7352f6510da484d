"""Tool identity: one canonical name per tool, whatever the agent runtime called it.

omk 0.54 maps the names that different agent runtimes give the same tool onto one identity
(`bash`, `shell`, `exec_command` are all `Bash`; `mcp__srv__tool` is `srv.tool`). Assertions
and mock matching both compare tools through `same_tool`.
"""

from __future__ import annotations

import re

_ALIASES: dict[str, str] = {
    # shell
    "bash": "Bash",
    "shell": "Bash",
    "exec_command": "Bash",
    "command_execution": "Bash",
    "execute_command": "Bash",
    "run_shell_command": "Bash",
    # files
    "read": "Read",
    "file_read": "Read",
    "read_file": "Read",
    "write": "Write",
    "file_write": "Write",
    "write_file": "Write",
    "edit": "Edit",
    "apply_patch": "Edit",
    "file_change": "Edit",
    "multiedit": "MultiEdit",
    "multi_edit": "MultiEdit",
    # search
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "list_dir": "LS",
    # web
    "web_search": "WebSearch",
    "websearch": "WebSearch",
    "web_fetch": "WebFetch",
    "webfetch": "WebFetch",
    # planning / agents
    "todowrite": "TodoWrite",
    "todo_write": "TodoWrite",
    "task": "Task",
}


def canonical_tool(name: str) -> str:
    """The canonical name of a tool: alias table, then `mcp__server__tool` → `server.tool`."""
    name = name.strip()
    alias = _ALIASES.get(name.lower())
    if alias:
        return alias
    if name.lower().startswith("mcp__"):
        server, sep, tool = name[5:].partition("__")
        if server and sep and tool:
            return f"{server}.{tool}"
    return name


def tool_key(name: str) -> str:
    """A comparison key: canonical name, case-insensitive."""
    return canonical_tool(name).lower()


def same_tool(a: str, b: str) -> bool:
    return tool_key(a) == tool_key(b)


# What a tool or MCP server name may hold: what Claude Code and Codex accept for the names of
# tools and MCP servers (the model APIs allow tool names of 1-64 such characters). A mock's or a
# declared tool's name becomes the name of a stand-in MCP server in the agent CLI's
# configuration, so nothing else may reach it.
NAME_CHARS = re.compile(r"[A-Za-z0-9_-]{1,64}")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a mock's or a declared tool's name, or None: it must be `*`, a name of
    NAME_CHARS, `mcp__SERVER__TOOL` or `SERVER.TOOL` with both parts of NAME_CHARS."""
    if name == "*" or NAME_CHARS.fullmatch(name):
        return None
    server, tool = "", ""
    if name.startswith("mcp__"):
        server, _, tool = name[5:].partition("__")
    elif name.count(".") == 1:
        server, _, tool = name.partition(".")
    if NAME_CHARS.fullmatch(server) and NAME_CHARS.fullmatch(tool):
        return None
    return (f"{name[:80]!r} is not a tool name: use 1-64 letters, digits, '_' or '-' "
            "(an MCP tool: mcp__SERVER__TOOL or SERVER.TOOL, each part so)")


UNSUPPORTED_NOTE = "the agent called {tool}, which {target} does not offer"
RUN_NOT_HONOURED_NOTE = "mock {key} says run: true, which {target} cannot do (omk answers its tools itself): its return answered"


def target_kind(spec: str | None) -> str:
    """`codex:` of `codex:gpt-5`; a spec without a kind as it is."""
    spec = spec or "?"
    return spec.split(":", 1)[0] + ":" if ":" in spec else spec


def run_not_honoured_note(key: str, spec: str | None) -> str:
    """What a trace says of a mock with `run: true` that answered with its return: only the agent
    CLIs (claude:, codex:) run a real tool; omk answers every other target's tools itself."""
    return RUN_NOT_HONOURED_NOTE.format(key=key, target=target_kind(spec))


def unsupported_note(tool: str, spec: str | None) -> str:
    """What a trace says of a call its target does not offer (a tool call's `outcome:
    unsupported`): `the agent called Skill, which codex: does not offer`."""
    return UNSUPPORTED_NOTE.format(tool=tool, target=target_kind(spec))
