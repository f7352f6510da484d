"""Neutral messages: a conversation's turns in one shape for every target, documented in
docs/targets.md and given as-is to `cmd:` programs:

    {"role": "user", "content": "<the turn's composed prompt>"}
    {"role": "assistant", "content": "<text>", "tool_calls": [{"id", "tool", "input"}]}  # tool_calls only when asked
    {"role": "tool", "tool_call_id": "<id>", "tool": "<name>", "content": "<result text>", "is_error": false}

The API targets translate them into their wire format. A Big Sky sample's history is read into
them (omk/loader/formats/bigsky.py); a conversation carries them from turn to turn (omk.targets.session).
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]


def user_message(prompt: str) -> Message:
    return {"role": "user", "content": prompt}


def assistant_message(text: str, calls: list[tuple[str, str, Any]] | None = None) -> Message:
    """`calls` are (id, tool, input) the assistant asked for in this step."""
    message: Message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": i, "tool": tool, "input": value} for i, tool, value in calls]
    return message


def tool_message(call_id: str, tool: str, text: str, is_error: bool) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "tool": tool, "content": text, "is_error": is_error}


def reply_messages(output: str, messages: list[Message]) -> list[Message]:
    """What a turn adds after its user message: the target's own record, or just the output."""
    return list(messages) if messages else [assistant_message(output)]
