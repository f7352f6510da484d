"""Codex's session files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`): one
`{timestamp, type, payload}` record a line.

- `session_meta`: the session's id, its folder (`cwd`) and start.
- `response_item`: what went to and came from the model: `message` (a user's request, an
  assistant's answer; the CLI's own context messages are not requests), `function_call` /
  `custom_tool_call` (apply_patch) and their `…_output`, joined on `call_id`; the `<skill>`
  message Codex adds when the user names a skill (`$greeter`), and the skill list in the
  `<skills_instructions>` message.
- `event_msg` and `turn_context`: progress the CLI reports; nothing a sample needs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from omk.sessions.model import Session
from omk.sessions.reader import RequestBuilder, skill_name, text

QUIET = frozenset({"event_msg", "turn_context", "compacted", "world_state", "token_usage_record"})
ITEMS_QUIET = frozenset({"reasoning", "additional_tools", "web_search_call", "local_shell_call_output", "ghost_snapshot"})
# A user message that starts like this was written by the CLI, not by a person.
CLI_MADE = ("<environment_context>", "<user_instructions>", "<skills_instructions>", "# AGENTS.md", "<turn_aborted>",
            "<user_shell_command>", "<subagent_notification>")
SKILL_INJECTED = re.compile(r"^\s*<skill>\s*<name>([^<\s]+)</name>")
LISTED = re.compile(r"^- ([^:\s]+): .*\(file: ([^)]*)\)\s*$", re.MULTILINE)
EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:) (-?\d+)")


def read(path: Path, records: list[tuple[int, dict[str, Any]]], warnings: list[str]) -> Session:
    build = RequestBuilder(path, "codex", warnings)
    for line, record in records:
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(payload, dict):
            build.skipped[kind if isinstance(kind, str) else "(no type)"] += 1
            continue
        if kind == "session_meta":
            _meta(build, payload, record)
        elif kind == "response_item":
            _item(build, payload, record, line)
        elif not isinstance(kind, str) or kind not in QUIET:
            build.skipped[kind if isinstance(kind, str) else "(no type)"] += 1
    return build.session()


def _meta(build: RequestBuilder, payload: dict[str, Any], record: dict[str, Any]) -> None:
    if isinstance(payload.get("id"), str):
        build.session_id = payload["id"]
    if isinstance(payload.get("cwd"), str):
        build.project = build.mask(payload["cwd"])
    started = payload.get("timestamp") or record.get("timestamp")
    build.started = started if isinstance(started, str) else build.started
    source = payload.get("source")
    build.subagent = isinstance(source, dict) and "subagent" in source


def _item(build: RequestBuilder, item: dict[str, Any], record: dict[str, Any], line: int) -> None:
    kind = item.get("type")
    if kind == "message":
        _message(build, item, record, line)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        _call(build, item, line)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        _output(build, item, line)
    elif not isinstance(kind, str) or kind not in ITEMS_QUIET:
        build.skipped[f"response_item.{kind}" if isinstance(kind, str) else "response_item"] += 1


def _message(build: RequestBuilder, item: dict[str, Any], record: dict[str, Any], line: int) -> None:
    said = text(item.get("content"))
    role = item.get("role")
    if "<skills_instructions>" in said:
        build.installed += [name for name, where in LISTED.findall(said) if not _system_root(said, where) and skill_name(name) == name]
    if role == "assistant":
        if said.strip():
            build.answer(said, line, item.get("id") if isinstance(item.get("id"), str) else None)
        return
    if role != "user":
        return
    injected = SKILL_INJECTED.match(said)
    if injected:
        build.fired(injected.group(1), "codex_injection", None)
        return
    if said.strip() and not said.lstrip().startswith(CLI_MADE):
        build.begin(said.strip(), record.get("timestamp"))


def _system_root(listing: str, where: str) -> bool:
    """Whether a listed skill's `rN/…` path is under a root that is Codex's own (`…/.system`)."""
    root = where.split("/", 1)[0]
    found = re.search(rf"^- `{re.escape(root)}` = `([^`]*)`", listing, re.MULTILINE)
    return bool(found and found.group(1).rstrip("/").endswith("/.system"))


def _call(build: RequestBuilder, item: dict[str, Any], line: int) -> None:
    call_id, name = item.get("call_id"), item.get("name")
    if item.get("type") == "local_shell_call":
        name = name or "shell"
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
        build.warnings.append(f"{build.path}:{line}: a tool call with no call_id or name, left out")
        return
    if item.get("type") == "custom_tool_call":
        call_input: Any = item.get("input") if isinstance(item.get("input"), str) else ""
    else:
        call_input = _arguments(item.get("arguments", item.get("action")))
    build.call(call_id, name, call_input, line)


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw if isinstance(raw, dict) else {}
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    return parsed


def _output(build: RequestBuilder, item: dict[str, Any], line: int) -> None:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        build.warnings.append(f"{build.path}:{line}: a tool output with no call_id, left out")
        return
    raw = item.get("output")
    if isinstance(raw, dict):  # older Codex: {content, success}
        said, failed = text(raw.get("content")) or str(raw.get("content") or ""), raw.get("success") is False
    else:
        said, failed = text(raw), False
    code = EXIT_CODE.search(said)
    failed = failed or bool(code and code.group(1) != "0")
    denied = "rejected by user" in said.lower() or "declined" in said.lower() or "blocked by" in said.lower()
    build.output(call_id, said, failed or denied, denied)
