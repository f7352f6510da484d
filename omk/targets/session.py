"""What one conversation carries from turn to turn: its history and its mock sandbox.

A multi-turn sample (`Sample.turns`) is sent one turn at a time; each call gets a `Session` with
the earlier turns as neutral messages (omk.domain.messages). The sandbox is shared so mocks keep their
state (a `return_seq` goes on where the previous turn left it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from omk.domain.messages import Message, user_message
from omk.targets.mocks import MockSandbox


@dataclass(slots=True)
class Session:
    index: int  # 0-based: the turn being sent
    count: int  # turns in the conversation
    sandbox: MockSandbox
    history: list[Message] = field(default_factory=list)  # the earlier turns, oldest first

    def messages(self, prompt: str) -> list[Message]:
        """The history and this turn's user message."""
        return [*self.history, user_message(prompt)]
