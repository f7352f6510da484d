"""The agent loop shared by the API targets: call the model, answer its tool calls, repeat.

A provider (OpenAI, Anthropic) supplies a `Conversation`: it sends the messages so far and parses
the reply into a `ModelTurn`, and appends tool results in its own wire format. The loop itself is
provider-free: it stops at a reply with no tool calls (the final answer) or after `max_turns`
model calls, and builds the trace (turns, tool calls, summed tokens, cost, wall-clock latency,
mock statistics).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from omk.core.errors import ConfigError
from omk.domain.messages import Message, assistant_message, tool_message
from omk.io.safe_files import read_text_file
from omk.llm.client import ModelTurn, RequestedCall
from omk.llm.pricing import cost_usd
from omk.records import Tokens, ToolCall, Trace
from omk.settings.target_settings import TargetSettings
from omk.targets.base import TargetResult
from omk.targets.mocks import MockSandbox, ToolAnswer

DEFAULT_MAX_TURNS = 10


class Conversation(Protocol):
    async def step(self) -> ModelTurn:
        """Send the conversation so far; parse the model's reply (and remember it)."""
        ...

    def add_results(self, results: list[tuple[RequestedCall, ToolAnswer]]) -> None:
        """Append the answers to the last turn's tool calls."""
        ...


def _add(total: int | None, more: int | None) -> int | None:
    if more is None:
        return total
    return more if total is None else total + more


async def run_agent_loop(
    conversation: Conversation,
    sandbox: MockSandbox,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    price: tuple[float, float] | None = None,
    record_unanswered: bool = False,
) -> TargetResult:
    """`record_unanswered`: tool calls asked for at the last allowed turn go into the trace (not
    run, output None) instead of being dropped; a single-step sample's calls are the point."""
    started = time.perf_counter()
    turns = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    notes: list[str] = []
    unanswered: list[ToolCall] = []
    messages: list[Message] = []  # neutral, for the next turn of a conversation (omk.domain.messages)
    text = ""
    while True:
        turn = await conversation.step()
        turns += 1
        tokens_in = _add(tokens_in, turn.input_tokens)
        tokens_out = _add(tokens_out, turn.output_tokens)
        text = turn.text
        if not turn.calls:
            break
        if turns >= max_turns:
            if record_unanswered:
                unanswered = [ToolCall(tool=c.name, input=c.input) for c in turn.calls]
                notes.append(f"single step: {len(turn.calls)} tool call(s) recorded, not run")
            else:
                notes.append(
                    f"stopped at max_turns ({max_turns}): the model still asked for {len(turn.calls)} tool call(s); "
                    "the output is its last text"
                )
            break
        results = [(call, await sandbox.answer(call.name, call.input)) for call in turn.calls]
        conversation.add_results(results)
        messages.append(assistant_message(turn.text, [(c.id, c.name, c.input) for c in turn.calls]))
        messages += [tool_message(c.id, c.name, a.text, a.is_error) for c, a in results]
    messages.append(assistant_message(text))  # unanswered calls at max_turns are left out of the history
    trace = Trace(
        turns=turns,
        tool_calls=(*sandbox.calls, *unanswered),
        cost_usd=cost_usd(price, tokens_in, tokens_out),
        latency_ms=round((time.perf_counter() - started) * 1000, 1),
        tokens=Tokens(tokens_in, tokens_out),
        mock_stats=sandbox.stats.record(),
        notes=tuple(notes),
    )
    return TargetResult(output=text, trace=trace, messages=messages)


# --- settings shared by every target that talks to a model ----------------------------------


@dataclass(slots=True)
class SystemPrompt:
    """The system prompt under test: omk.yaml `system:` (text) or `skill:` (a file, or a skill
    folder, whose SKILL.md is the text; the `claude:` target installs the folder instead)."""

    text: str | None = None
    source: str | None = None  # "system" | "skill"
    path: str | None = None

    def describe(self) -> dict[str, Any] | None:
        if self.text is None:
            return None
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]
        return {"source": self.source, "path": self.path, "sha256": digest, "chars": len(self.text)}


def system_prompt(settings: TargetSettings) -> SystemPrompt:
    text, skill = settings.system, settings.skill
    if settings.skills is not None or isinstance(skill, list):
        from omk.domain.skillset import configured_skills

        found = configured_skills(settings)
        if len(found) > 1:
            raise ConfigError("omk.yaml skills: several skills are installed together only by the claude: target; an API model takes one skill as its system prompt")
        skill = str(found[0].path)
    if text is not None and skill is not None:
        raise ConfigError("omk.yaml: set either `system` (text) or `skill` (a file), not both")
    if text is not None:
        if not isinstance(text, str):
            raise ConfigError("omk.yaml system: must be text")
        return SystemPrompt(text=text, source="system")
    if skill is not None:
        path = Path(str(skill))
        if path.is_dir():  # a skill folder: an API model gets its SKILL.md as the system prompt
            path = path / "SKILL.md"
        try:
            content = read_text_file(path)
        except FileNotFoundError:
            raise ConfigError(f"omk.yaml skill: file not found: {path}") from None
        except OSError as exc:
            raise ConfigError(f"omk.yaml skill: cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"omk.yaml skill: cannot read {path}: {exc}") from None
        return SystemPrompt(text=content, source="skill", path=str(path))
    return SystemPrompt()


def max_turns(settings: TargetSettings) -> int:
    value = DEFAULT_MAX_TURNS if settings.max_turns is None else settings.max_turns
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"omk.yaml max_turns: must be a whole number of at least 1 (got {value!r})")
    return value
