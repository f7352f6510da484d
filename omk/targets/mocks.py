"""The mock sandbox: answers an agent's tool calls from the sample's `mocks`, as omk 0.54 does.

One `MockSandbox` per sample run. Each call is matched against the mocks in list order; the
first match answers it. Keys are `<tool>:<N>`, N counting mocks with the same literal `tool`
string (`[Read, Bash, Bash]` → `Read:1`, `Bash:1`, `Bash:2`). A call no mock matches is denied
under `mocksStrict`; otherwise it goes to `fallback` (the seam for MCP tools from `.mcp.json`)
and, when there is none or it declines, gets an error result.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omk.domain.mock_defs import is_subset, mock_keys, return_file_path
from omk.domain.tool_input import command_of, normalized, path_of
from omk.domain.toolnames import same_tool
from omk.records import CallOutcome, MockStats, ToolCall
from omk.samples.model import Sample

PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object"}


@dataclass(slots=True)
class ToolAnswer:
    """What a tool call got back: `output` as kept in the trace, `text` as shown to the model."""

    output: Any
    text: str
    is_error: bool = False
    mocked: bool = False
    mock_key: str | None = None
    outcome: CallOutcome = "ran"  # who answered (omk.records.ToolCall): a routed call ran


# An answer for a call no mock matched (e.g. an MCP server offering the tool); None = "not mine".
Fallback = Callable[[str, Any], Awaitable[ToolAnswer | None]]


def compact_json(value: Any) -> str:
    """Objects go to the model as compact JSON text, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else compact_json(value)


# --- matching ---------------------------------------------------------------------------------


def glob_match(pattern: str, text: str) -> bool:
    """Only `*` is a wildcard (any run of characters, newlines included); anchored at both ends."""
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, text, flags=re.DOTALL) is not None


def _string_leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _string_leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _string_leaves(v)]
    return []


def _field(call_input: Any, *names: str) -> str | None:
    if not isinstance(call_input, dict):
        return None
    for name in names:
        value = call_input.get(name)
        if isinstance(value, str):
            return value
    return None


def _path_field(call_input: Any) -> str | None:
    return path_of(call_input)


def _ends_with_path(path: str, suffix: str) -> bool:
    """Equal, or `suffix` follows a `/` or `\\` in `path`."""
    return path == suffix or path.endswith("/" + suffix) or path.endswith("\\" + suffix)


def _match_field(name: str, expected: Any, call_input: Any) -> bool:
    if name == "file_path":
        path = _path_field(call_input)
        return path is not None and os.path.expanduser(path) == os.path.expanduser(str(expected))
    if name == "file_path_endswith":
        path = _path_field(call_input)
        return path is not None and _ends_with_path(path, str(expected))
    if name == "url":
        return _field(call_input, "url") == expected
    if name == "url_glob":
        url = _field(call_input, "url")
        return url is not None and glob_match(str(expected), url)
    if name == "command_glob":
        command = command_of(call_input)
        return command is not None and glob_match(str(expected), command)
    if name == "input":
        return is_subset(expected, call_input)
    if name == "input_contains":
        needle = str(expected).lower()
        return any(needle in leaf.lower() for leaf in _string_leaves(call_input))
    return False  # an unknown match field never matches (the loader reports it)


def mock_matches(mock: dict[str, Any], tool: str, call_input: Any) -> bool:
    """Tool equal, `*`, or the same tool identity; then every `match` field (AND)."""
    mock_tool = str(mock.get("tool", ""))
    if not (mock_tool == tool or mock_tool == "*" or same_tool(mock_tool, tool)):
        return False
    match = mock.get("match") or {}
    call_input = normalized(call_input)  # as a recording reads it (omk/domain/tool_input.py)
    return all(_match_field(name, expected, call_input) for name, expected in match.items())


# --- tools offered ----------------------------------------------------------------------------


def offered_tools(sample: Sample) -> list[dict[str, Any]]:
    """`{name, description, parameters}` for the sample's declared tools, then for every tool a
    mock names that is not declared (with the first such mock's `description` and `input_schema`,
    else a plain description and a permissive schema). `*` is not a tool."""
    tools: list[dict[str, Any]] = []
    for tool in sample.tools:
        tools.append(
            {
                "name": str(tool["name"]),
                "description": str(tool.get("description") or ""),
                "parameters": tool.get("parameters") or dict(PERMISSIVE_SCHEMA),
            }
        )
    for mock in sample.mocks:
        name = str(mock.get("tool", ""))
        if not name or name == "*" or any(same_tool(name, t["name"]) for t in tools):
            continue
        description = mock.get("description")
        schema = mock.get("input_schema")
        tools.append(
            {
                "name": name,
                "description": description if isinstance(description, str) else f"The {name} tool.",
                "parameters": schema if isinstance(schema, dict) else dict(PERMISSIVE_SCHEMA),
            }
        )
    return tools


# --- the sandbox ------------------------------------------------------------------------------


class MockCounter:
    """The live count of mock answers while a target runs (`per_mock`: hits by mock key);
    `record` gives the `MockStats` the trace keeps."""

    __slots__ = ("hits", "misses", "per_mock")

    def __init__(self, hits: int = 0, misses: int = 0, per_mock: dict[str, int] | None = None) -> None:
        self.hits, self.misses, self.per_mock = hits, misses, dict(per_mock or {})

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> MockCounter:
        """A count as `MockStats.to_json` wrote it (an agent CLI's hook keeps it in a file)."""
        return cls(data.get("hits", 0), data.get("misses", 0), dict(data.get("per_mock", {})))

    def hit(self, key: str) -> None:
        self.hits += 1
        self.per_mock[key] = self.per_mock.get(key, 0) + 1

    def copy(self) -> MockCounter:
        return MockCounter(self.hits, self.misses, self.per_mock)

    def record(self) -> MockStats:
        return MockStats(self.hits, self.misses, dict(self.per_mock))

    def to_json(self) -> dict[str, Any]:
        return self.record().to_json()


class MockSandbox:
    """Answers one sample's tool calls and records them (`calls`) and the mock statistics.

    In a conversation one sandbox serves every turn: `start_turn` gives each turn its own
    `calls` and `stats`, while `totals` (what `return_seq` counts on) runs across the turns;
    `retry_turn` forgets a failed attempt, so a retried turn sees the mocks as the turn began.
    """

    def __init__(
        self,
        mocks: Sequence[dict[str, Any]],
        *,
        strict: bool = False,
        base_dir: Path | None = None,
        fallback: Fallback | None = None,
    ):
        self.mocks = mocks
        self.keys = mock_keys(mocks)
        self.strict = strict
        self.base_dir = base_dir or Path.cwd()
        self.fallback = fallback
        self.calls: list[ToolCall] = []
        self.stats = MockCounter()
        self.totals = MockCounter()  # across the turns of a conversation
        self._turn_start = MockCounter()
        self._closers: list[Callable[[], Awaitable[None]]] = []

    @classmethod
    def for_sample(cls, sample: Sample, fallback: Fallback | None = None) -> MockSandbox:
        return cls(sample.mocks, strict=sample.mocks_strict, base_dir=sample.base_dir, fallback=fallback)

    def start_turn(self) -> None:
        self.calls, self.stats = [], MockCounter()
        self._turn_start = self.totals.copy()

    def retry_turn(self) -> None:
        self.calls, self.stats = [], MockCounter()
        self.totals = self._turn_start.copy()

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Run `closer` when the sample (or conversation) this sandbox serves is over: what a
        target started for it (an MCP server) ends with it, however it ended."""
        self._closers.append(closer)

    async def close(self) -> None:
        while self._closers:
            await self._closers.pop()()

    def find(self, tool: str, call_input: Any) -> int | None:
        """Index of the first mock that matches, or None."""
        return next((i for i, m in enumerate(self.mocks) if mock_matches(m, tool, call_input)), None)

    def match(self, tool: str, call_input: Any) -> ToolAnswer | None:
        """The answer of the first matching mock, counted as a hit; None when no mock matches
        (nothing counted: the caller decides what an unmatched call gets)."""
        index = self.find(tool, call_input)
        if index is None:
            return None
        key = self.keys[index]
        hit = self.totals.per_mock.get(key, 0)  # this is hit number hit+1 of this mock
        self.stats.hit(key)
        self.totals.hit(key)
        return self._mock_output(self.mocks[index], key, hit)

    def count_miss(self) -> None:
        self.stats.misses += 1
        self.totals.misses += 1

    def record(self, call: ToolCall) -> None:
        """Add a call answered elsewhere (an agent CLI's hook process) as if answered here:
        a hit on its `mock_key`, else a miss."""
        if call.mock_key is not None:
            self.stats.hit(call.mock_key)
            self.totals.hit(call.mock_key)
        else:
            self.count_miss()
        self.calls.append(call)

    def denial(self, tool: str) -> ToolAnswer:
        """What a call no mock matches gets under mocksStrict."""
        text = f"[omk] tool call denied: no mock matches this {tool} call and mocksStrict is on"
        return ToolAnswer(output=text, text=text, is_error=True, outcome="denied")

    async def answer(self, tool: str, call_input: Any) -> ToolAnswer:
        """Answer a call and record it in `calls` and `stats`."""
        result = self.match(tool, call_input)
        if result is None:
            self.count_miss()
            result = await self._unmatched(tool, call_input)
        self.calls.append(
            ToolCall(
                tool=tool,
                input=call_input,
                output=result.output,
                mocked=result.mocked,
                mock_key=result.mock_key,
                is_error=result.is_error,
                outcome="mock" if result.mocked else result.outcome,
            )
        )
        return result

    def _mock_output(self, mock: dict[str, Any], key: str, hit: int) -> ToolAnswer:
        seq = mock.get("return_seq")
        if isinstance(seq, list) and hit < len(seq):
            value = seq[hit]
        elif "return" in mock:
            value = mock["return"]
        elif mock.get("return_file"):
            value = self._read_return_file(str(mock["return_file"]))
        else:
            value = ""
        return ToolAnswer(output=value, text=as_text(value), mocked=True, mock_key=key)

    def _read_return_file(self, name: str) -> Any:
        """The file's text; a `.json` file that parses is returned as its value, like `return`."""
        from omk.io.safe_files import MAX_MOCK_FILE_BYTES, UnsafeFile, read_regular_bytes

        path = return_file_path(name, self.base_dir)
        try:  # a regular file only, size-capped (the loader also checked it is inside the project)
            text = read_regular_bytes(path, MAX_MOCK_FILE_BYTES).decode("utf-8-sig")
        except UnsafeFile as exc:
            return f"[omk-mock-error] return_file refused: {exc.strerror}"
        except (OSError, UnicodeDecodeError):
            return f"[omk-mock-error] return_file not found: {name}"
        if path.suffix.lower() == ".json":
            try:
                return json.loads(text)
            except ValueError:
                pass
        return text

    async def _unmatched(self, tool: str, call_input: Any) -> ToolAnswer:
        if self.strict:
            return self.denial(tool)
        if self.fallback is not None:
            routed = await self.fallback(tool, call_input)
            if routed is not None:
                return routed
        text = f"[omk] no mock or tool is available for {tool}; this call was not executed"
        return ToolAnswer(output=text, text=text, is_error=True, outcome="unsupported")

