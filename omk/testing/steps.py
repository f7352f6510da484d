"""What a scripted server can send back, and what it records of each request.

A step is a reply body (a dict, sent as JSON with status 200, or streamed when the request asks
for a stream and the dict is a whole message of its API), a `ScriptTurn` (a reply written once for
every API), or one of the special steps below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec

# The endpoint paths, and the API each one speaks.
API_PATHS = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
}


@dataclass
class HttpError:
    """An HTTP error reply, e.g. `HttpError(429, retry_after="2")` or `HttpError(500)`."""

    code: int
    body: Any = None  # dict: JSON; str: text; None: an error object shaped as the request's API sends it
    retry_after: str | None = None


@dataclass
class Slow:
    """Wait `seconds` (cut short when the server stops), then serve `then`."""

    seconds: float
    then: Any = None


@dataclass
class Garbage:
    """A reply whose body is not JSON."""

    body: bytes = b"<html>\x00not json at all"
    status: int = 200


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Stream:
    """A 200 `text/event-stream` reply: `(event name, data)` pairs, data sent as JSON (a name of
    None sends a `data:` line alone, as Chat Completions does; data given as text is sent as is).

    `hang` keeps the connection open after the events without ending the stream (a stalled
    server), until the server stops."""

    events: list[tuple[str | None, Any]]
    hang: bool = False


class ToolRequest(msgspec.Struct, frozen=True, gc=False):
    """One tool call the model makes: `id` is what the client answers with its result. `text`
    makes it a call of a freeform (custom) tool, whose input is that text rather than JSON: the
    Responses API's `custom_tool_call`, as Codex's `apply_patch` is called (`input` is unused)."""

    id: str
    name: str
    input: dict[str, Any]
    text: str | None = None


class ScriptTurn(msgspec.Struct, frozen=True, gc=False):
    """One model reply, written once and sent in the shape of whichever API was called."""

    text: str | None = None
    calls: tuple[ToolRequest, ...] = ()
    usage: dict[str, int] = msgspec.field(default_factory=dict)  # input_tokens, output_tokens, cache_read_input_tokens…
    model: str = "scripted"


@dataclass
class Request:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    json: Any = None

    @property
    def api(self) -> str | None:
        """`anthropic`, `chat`, `responses`, or None for a path no API serves."""
        return API_PATHS.get(self.path.split("?")[0].rstrip("/"))

    @property
    def wants_stream(self) -> bool:
        return isinstance(self.json, dict) and self.json.get("stream") is True

    def to_json(self) -> dict[str, Any]:
        """What `omk serve-model --record` writes, one line per request."""
        body: Any = self.json if self.json is not None else self.body.decode("utf-8", errors="replace")
        return {"method": self.method, "path": self.path, "api": self.api, "body": body}


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events as bytes."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode("utf-8")
