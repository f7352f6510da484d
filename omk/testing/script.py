"""The script of a scripted model: per prompt pattern, which tool calls to make in which order and
what to answer once their results are back.

    model: scripted                      # optional: the model name replies carry
    usage: {input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0}   # optional, every reply
    rules:
      - when: "release notes"            # a regular expression, searched (any case) in the user's latest prompt
        listed: {release-notes: "release notes"}   # optional: only when this skill is listed to the model
                                         # with a description the expression matches (any case)
        tools:                           # one model turn each, in this order
          - Skill: {skill: release-notes}
          - Bash: {command: git describe --tags --abbrev=0}
          - [{Read: {file_path: a.md}}, {Read: {file_path: b.md}}]   # two calls in one turn
          - apply_patch: "*** Begin Patch …"   # text: a freeform tool (Responses API only)
        answer: "## v1.5.0 …"            # the final answer, after the last tool's result
      - answer: "I can only write release notes."   # no `when`: any prompt

The first rule whose `when` and `listed` match is played: `listed` reads the skill listing the
client sends (omk.testing.conversation), so a skill's description decides whether it is called. Which turn comes next is read from the request:
the calls the model made carry ids naming the rule and the turn, and the results the client
sends back name those ids, so a request is answered the same whatever else the client put in
the conversation (and a retried request gets the same turn again).

A call whose input is text, not a mapping, is a call of a freeform (custom) tool: the Responses
API's `custom_tool_call`, as Codex calls `apply_patch`. The Anthropic and Chat Completions APIs
have no such tools, so a request of theirs that reaches such a turn gets an HTTP 400 saying so.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import ConfigError, Problem
from omk.io.safe_files import read_text_file
from omk.loader.document import Document, ParseFailure, Path_
from omk.loader.yaml_lines import parse_yaml
from omk.testing import anthropic, openai_chat, responses
from omk.testing.conversation import Exchange
from omk.testing.steps import HttpError, Request, ScriptTurn, ToolRequest

RULE_KEYS = frozenset({"when", "listed", "tools", "answer", "usage"})
SCRIPT_KEYS = frozenset({"model", "usage", "rules"})
_OWN_ID = re.compile(r"omk(\d+)s(\d+)c\d+x")
_READERS = {"anthropic": anthropic.read_exchange, "chat": openai_chat.read_exchange, "responses": responses.read_exchange}
_ERRORS = {"anthropic": anthropic.error_body, "chat": openai_chat.error_body, "responses": responses.error_body}


class ScriptRule(msgspec.Struct, frozen=True):
    pattern: re.Pattern[str] | None
    turns: tuple[tuple[tuple[str, dict[str, Any] | str], ...], ...]  # per model turn: (tool name, input) pairs; text: a freeform tool
    answer: str
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    listed: tuple[tuple[str, re.Pattern[str]], ...] = ()  # (skill, pattern its listed description must match)

    def matches(self, exchange: Exchange) -> bool:
        if self.pattern is not None and not self.pattern.search(exchange.prompt):
            return False
        return all(name in exchange.skills and pattern.search(exchange.skills[name]) for name, pattern in self.listed)


class ModelScript(msgspec.Struct, frozen=True):
    rules: tuple[ScriptRule, ...]
    model: str = "scripted"
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    source: str = "script"

    def __call__(self, request: Request) -> Any:
        """The step that answers `request` (the server's responder)."""
        api = request.api
        if api is None or not isinstance(request.json, dict):
            return HttpError(404, {"error": {"message": f"no route {request.path}"}})
        exchange = _READERS[api](request.json)
        found = next(((i, r) for i, r in enumerate(self.rules) if r.matches(exchange)), None)
        if found is None:
            shown = " ".join(exchange.prompt.split())[:200]
            return HttpError(400, _ERRORS[api](400, f"no rule of {self.source} matches the prompt {shown!r}"))
        index, rule = found
        turn = _next_turn(index, exchange)
        usage = {**self.usage, **rule.usage}
        if turn >= len(rule.turns):
            return ScriptTurn(text=rule.answer, usage=usage, model=self.model)
        freeform = [name for name, args in rule.turns[turn] if isinstance(args, str)]
        if freeform and api != "responses":
            why = f"{self.source}: rules[{index}] calls {freeform[0]} with text, a freeform tool only the Responses API has"
            return HttpError(400, _ERRORS[api](400, why))
        prefix, nonce = ("toolu_" if api == "anthropic" else "call_"), secrets.token_hex(4)
        calls = tuple(_call(f"{prefix}omk{index}s{turn}c{i}x{nonce}", name, args) for i, (name, args) in enumerate(rule.turns[turn]))
        return ScriptTurn(calls=calls, usage=usage, model=self.model)


def _call(call_id: str, name: str, args: dict[str, Any] | str) -> ToolRequest:
    return ToolRequest(call_id, name, {}, args) if isinstance(args, str) else ToolRequest(call_id, name, dict(args))


def _next_turn(rule: int, exchange: Exchange) -> int:
    """One past the latest turn of `rule` whose calls have results, since the prompt."""
    done = [int(m.group(2)) for m in map(_OWN_ID.search, exchange.answered) if m and int(m.group(1)) == rule]
    return max(done) + 1 if done else 0


def load_script(path: Path) -> ModelScript:
    """Read a script file; bad input raises `ConfigError` naming the file, the line and the field."""
    try:
        doc = parse_yaml(read_text_file(path))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as exc:  # a FIFO, a device, /proc, a folder, over the cap: it says which
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except ParseFailure as exc:
        raise ConfigError([Problem(str(path), exc.line, "", "", str(exc))]) from None
    return read_script(doc, str(path))


def read_script(doc: Document, source: str) -> ModelScript:
    data = doc.data

    def bad(where: Path_, message: str) -> ConfigError:
        name = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in where).replace(".[", "[")
        return ConfigError([Problem(source, doc.line(where), "", name, message)])

    if not isinstance(data, dict):
        raise bad((), "a script is a mapping with `rules:`")
    if unknown := sorted(set(data) - SCRIPT_KEYS):
        raise bad((unknown[0],), f"unknown field; expected one of {', '.join(sorted(SCRIPT_KEYS))}")
    rules = data.get("rules")
    if not isinstance(rules, list) or not rules:
        raise bad(("rules",), "must be a non-empty list of rules")
    built = tuple(_rule(rule, ("rules", i), bad) for i, rule in enumerate(rules))
    model = data.get("model", "scripted")
    if not isinstance(model, str):
        raise bad(("model",), "must be text")
    return ModelScript(built, model, _usage(data.get("usage"), ("usage",), bad), source)


def _rule(raw: Any, where: Path_, bad: Any) -> ScriptRule:
    if not isinstance(raw, dict):
        raise bad(where, "a rule is a mapping with `when`, `tools` and `answer`")
    if unknown := sorted(set(raw) - RULE_KEYS):
        raise bad((*where, unknown[0]), f"unknown field; expected one of {', '.join(sorted(RULE_KEYS))}")
    pattern = _pattern(raw["when"], (*where, "when"), bad) if "when" in raw else None
    listed = raw.get("listed") or {}
    if not isinstance(listed, dict):
        raise bad((*where, "listed"), "must map skill names to regular expressions their listed descriptions must match")
    skills = tuple((str(name), _pattern(p, (*where, "listed", name), bad)) for name, p in listed.items())
    if not isinstance(raw.get("answer"), str):
        raise bad((*where, "answer"), "must be text: what the model answers after its tool calls")
    tools = raw.get("tools") or []
    if not isinstance(tools, list):
        raise bad((*where, "tools"), "must be a list of tool calls")
    turns = tuple(_turn(item, (*where, "tools", i), bad) for i, item in enumerate(tools))
    return ScriptRule(pattern, turns, raw["answer"], _usage(raw.get("usage"), (*where, "usage"), bad), skills)


def _pattern(raw: Any, where: Path_, bad: Any) -> re.Pattern[str]:
    if not isinstance(raw, str):
        raise bad(where, "must be text (a regular expression)")
    try:
        return re.compile(raw, re.IGNORECASE)
    except re.error as exc:
        raise bad(where, f"not a regular expression: {exc}") from None


def _turn(item: Any, where: Path_, bad: Any) -> tuple[tuple[str, dict[str, Any] | str], ...]:
    calls = item if isinstance(item, list) else [item]
    found: list[tuple[str, dict[str, Any] | str]] = []
    for call in calls:
        if not isinstance(call, dict) or len(call) != 1:
            raise bad(where, "a tool call is `TOOL: {input}`, one per item (a list of them: calls in one turn)")
        (name, args), = call.items()
        if not isinstance(args, dict | str):
            raise bad((*where, name) if not isinstance(item, list) else where, "the tool's input must be a mapping (or text, for a freeform tool)")
        found.append((str(name), args))
    if not found:
        raise bad(where, "an empty list of calls")
    return tuple(found)


def _usage(raw: Any, where: Path_, bad: Any) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in raw.values()):
        raise bad(where, "must map token kinds (input_tokens, output_tokens, cache_read_input_tokens…) to whole numbers")
    return {str(k): int(v) for k, v in raw.items()}
