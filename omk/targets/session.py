"""What one conversation carries from turn to turn: its history and its mock sandbox.

A multi-turn sample (`Sample.turns`) is sent one turn at a time; each call gets a `Session` with
the earlier turns as *neutral messages* (the same shape for every target, documented in
docs/targets.md and given as-is to `cmd:` programs):

    {"role": "user", "content": "<the turn's composed prompt>"}
    {"role": "assistant", "content": "<text>", "tool_calls": [{"id", "tool", "input"}]}  # tool_calls only when asked
    {"role": "tool", "tool_call_id": "<id>", "tool": "<name>", "content": "<result text>", "is_error": false}

The API targets translate them into their wire format; the sandbox is shared so mocks keep
their state (a `return_seq` goes on where the previous turn left it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omk.targets.mocks import MockSandbox

Message = dict[str, Any]


@dataclass(slots=True)
class Session:
    index: int  # 0-based: the turn being sent
    count: int  # turns in the conversation
    sandbox: MockSandbox
    history: list[Message] = field(default_factory=list)  # the earlier turns, oldest first

    def messages(self, prompt: str) -> list[Message]:
        """The history and this turn's user message."""
        return [*self.history, user_message(prompt)]


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
