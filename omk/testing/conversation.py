"""What a scripted model reads of a conversation: the user's latest prompt, and which of its own
tool calls have been answered since. Each API's module fills an `Exchange` from a request by
message role and by call ids, never by position: clients add messages of their own (Claude Code
appends a `system`-role message after the user's turn, Codex sends its environment as a user
message before the prompt)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Text a client adds inside the user's message (Claude Code's reminders): not the user's words.
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def strip_reminders(text: str) -> str:
    return _REMINDER.sub("", text).strip()


@dataclass(slots=True)
class Exchange:
    prompt: str = ""
    answered: set[str] = field(default_factory=set)  # ids of tool calls whose results came back

    def prompt_from(self, text: str) -> None:
        """A user message with words in it starts a new exchange; one with none changes nothing."""
        if text:
            self.prompt = text
            self.answered = set()
