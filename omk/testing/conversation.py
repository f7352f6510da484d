"""What a scripted model reads of a conversation: the user's latest prompt, which of its own tool
calls have been answered since, and the skills the client lists to the model with their
descriptions. Each API's module fills an `Exchange` from a request by message role and by call
ids, never by position: clients add messages of their own (Claude Code appends a `system`-role
message after the user's turn, Codex sends its environment as a user message before the prompt).

The skill listing is read from the text the client wrote (system prompt, `system` and `developer`
messages, and the user's messages, reminders included): Claude Code's "The following skills are
available for use with the Skill tool:" followed by `- NAME: DESCRIPTION` lines, and Codex's
`<skills_instructions>` block, whose `- NAME: DESCRIPTION (file: PATH)` lines follow "### Available
skills". A description may run over several lines; it ends at a blank line or the next entry."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Text a client adds inside the user's message (Claude Code's reminders): not the user's words.
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


_LISTINGS = ("The following skills are available for use with the Skill tool:", "### Available skills")
_ENTRY = re.compile(r"^- ([^`:\s]+): (.*)$")
_FILE = re.compile(r"\s*\(file: [^)]*\)\s*$")
_ENDS = ("- ", "#", "<")


def strip_reminders(text: str) -> str:
    return _REMINDER.sub("", text).strip()


def listed_skills(text: str) -> dict[str, str]:
    """The skills a client's text lists to the model, name to description (see the module)."""
    found: dict[str, str] = {}
    for heading in _LISTINGS:
        start = text.find(heading)
        if start < 0:
            continue
        name = None
        for line in text[start + len(heading) :].splitlines():
            entry = _ENTRY.match(line)
            if entry:
                name = entry.group(1)
                found[name] = entry.group(2)
            elif name is not None and (not line.strip() or line.startswith(_ENDS)):
                break
            elif name is not None:
                found[name] += "\n" + line
        found = {n: _FILE.sub("", d).strip() for n, d in found.items()}
    return found


@dataclass(slots=True)
class Exchange:
    prompt: str = ""
    answered: set[str] = field(default_factory=set)  # ids of tool calls whose results came back
    skills: dict[str, str] = field(default_factory=dict)  # the skills listed to the model: name → description

    def listing_from(self, text: str) -> None:
        """Text the client wrote: the skills it lists, if any, are added."""
        self.skills.update(listed_skills(text))

    def prompt_from(self, text: str) -> None:
        """A user message with words in it starts a new exchange; one with none changes nothing."""
        if text:
            self.prompt = text
            self.answered = set()
