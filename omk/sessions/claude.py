"""Claude Code's session files (`~/.claude/projects/<project>/<session>.jsonl`, a subagent's in
`<session>/subagents/agent-*.jsonl`): one JSON record a line, with `type` and, for `user` and
`assistant` records, a `message`.

- One assistant message may span several lines (one content block a line): blocks are joined
  on `message.id`, and a block seen twice is kept once.
- A `tool_use` block is joined to the `tool_result` block (in a later `user` record) that names
  its id.
- A `user` record is a request only when a person wrote it: meta messages (`isMeta`: a skill's
  injected instructions, reminders), messages the CLI made (`promptSource: system`, an
  `origin` such as a subagent's task notification), command output and tool results are not.
- The skills the session could use come from the `skill_listing` attachment.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from omk.sessions.model import Session
from omk.sessions.reader import RequestBuilder, skill_name, text

# The record types Claude Code writes that say nothing about requests, calls or answers.
BOOKKEEPING = frozenset({
    "queue-operation", "atis-latch", "api-request", "api-request-shape", "api-request-blob", "tools-used",
    "last-prompt", "cost-state", "mode", "summary", "system", "file-history-snapshot", "custom-title",
    "permission-mode", "agent-name", "pr-link", "tag", "progress",
})
# A user message that starts like this was written by the CLI, not by a person.
CLI_MADE = ("<task-notification>", "<command-name>", "<command-message>", "<local-command-stdout>",
            "<local-command-stderr>", "<local-command-caveat>", "<system-reminder>", "<bash-stdout>", "<bash-stderr>",
            "Caveat: The messages below", "[Request interrupted")
REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
# How a tool result says the call never ran because it was not allowed.
DENIALS = ("haven't granted", "requested permissions", "doesn't want to proceed", "was blocked", "denied", "not allowed")


def read(path: Path, records: list[tuple[int, dict[str, Any]]], warnings: list[str]) -> Session:
    build = RequestBuilder(path, "claude", warnings)
    build.subagent = path.parent.name == "subagents"
    seen_blocks: set[tuple[str, str]] = set()
    for line, record in records:
        kind = record.get("type")
        _facts(build, record)
        if kind == "user":
            _user(build, record, line)
        elif kind == "assistant":
            _assistant(build, record, line, seen_blocks)
        elif kind == "attachment":
            _attachment(build, record)
        elif not isinstance(kind, str) or kind not in BOOKKEEPING:
            build.skipped[kind if isinstance(kind, str) else "(no type)"] += 1
    return build.session()


def _facts(build: RequestBuilder, record: dict[str, Any]) -> None:
    if not build.session_id and isinstance(record.get("sessionId"), str):
        build.session_id = record["sessionId"]
    if build.project is None and isinstance(record.get("cwd"), str):
        build.project = build.mask(record["cwd"])
    if build.started is None and isinstance(record.get("timestamp"), str):
        build.started = record["timestamp"]
    if record.get("isSidechain") is True:
        build.subagent = True


def _user(build: RequestBuilder, record: dict[str, Any], line: int) -> None:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                _result(build, block, record, line)
    if _made_by_cli(record, content):
        return
    said = REMINDER.sub("", text(content)).strip()  # what a hook or the CLI added to the prompt
    if said:
        build.begin(said, record.get("timestamp"))


def _made_by_cli(record: dict[str, Any], content: Any) -> bool:
    if record.get("isMeta") is True or record.get("isCompactSummary") is True or record.get("promptSource") == "system":
        return True
    if isinstance(record.get("origin"), dict) or record.get("sourceToolUseID"):
        return True
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return True
    return text(content).lstrip().startswith(CLI_MADE)


def _result(build: RequestBuilder, block: dict[str, Any], record: dict[str, Any], line: int) -> None:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        build.warnings.append(f"{build.path}:{line}: a tool result with no tool_use_id, left out")
        return
    said = text(block.get("content"))
    is_error = block.get("is_error") is True
    decision = record.get("permissionDecision")  # {"decision": "accept" | "reject", "source": …}
    denied = isinstance(decision, dict) and decision.get("decision") in ("reject", "deny")
    denied = denied or (is_error and any(d in said.lower() for d in DENIALS))
    build.output(call_id, said, is_error, denied)


def _assistant(build: RequestBuilder, record: dict[str, Any], line: int, seen: set[tuple[str, str]]) -> None:
    message = record.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        build.warnings.append(f"{build.path}:{line}: an assistant record with no message content, left out")
        return
    raw_id = message.get("id")
    message_id = raw_id if isinstance(raw_id, str) else f"line{line}"
    said = []
    for block in message["content"]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            if (message_id, block["text"]) not in seen:
                seen.add((message_id, block["text"]))
                said.append(block["text"])
        elif block.get("type") == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str) or (message_id, call_id) in seen:
                if not isinstance(call_id, str) or not isinstance(name, str):
                    build.warnings.append(f"{build.path}:{line}: a tool_use block with no id or name, left out")
                continue
            seen.add((message_id, call_id))
            build.call(call_id, name, block.get("input"), line)
    if said:
        build.answer("\n".join(said), line, message_id)


def _attachment(build: RequestBuilder, record: dict[str, Any]) -> None:
    attachment = record.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "skill_listing":
        return
    listing = attachment.get("content")
    for row in listing.splitlines() if isinstance(listing, str) else ():
        if row.startswith("- ") and ": " in row:
            name = skill_name(row[2:].split(": ", 1)[0])
            if name and " " not in name:
                build.installed.append(name)
