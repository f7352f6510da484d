"""The OpenAI Responses API (`POST /v1/responses`, what Codex speaks): replies, their stream, and
reading a request. A streamed reply is the typed events the API sends (`response.created`, one
`response.output_item.added` … `.done` group per output item, `response.completed`).

    text_reply("done")                                     # a message
    tool_call_reply("exec_command", {"cmd": "ls"})         # a function_call
    custom_call_reply("apply_patch", "*** Begin Patch…")   # a custom_tool_call: its input is text
    tool_outputs(request)                                  # {call_id: output} the client sent back
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from omk.testing.conversation import Exchange, strip_reminders
from omk.testing.steps import Request, ScriptTurn, ToolRequest

_IDS = itertools.count(1)
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")


def error_body(code: int, message: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message or f"injected error {code}", "type": "server_error", "code": str(code)}}


def is_response(step: Any) -> bool:
    return isinstance(step, dict) and step.get("object") == "response"


def render(turn: ScriptTurn) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 5, **turn.usage}
    output: list[dict[str, Any]] = []
    if turn.text:
        content = [{"type": "output_text", "text": turn.text, "annotations": []}]
        output.append({"type": "message", "id": f"msg_{next(_IDS)}", "status": "completed", "role": "assistant", "content": content})
    for call in turn.calls:
        if call.text is not None:
            output.append(
                {"type": "custom_tool_call", "id": f"ctc_{next(_IDS)}", "status": "completed", "call_id": call.id,
                 "name": call.name, "input": call.text}
            )
            continue
        output.append(
            {"type": "function_call", "id": f"fc_{next(_IDS)}", "status": "completed", "call_id": call.id,
             "name": call.name, "arguments": json.dumps(call.input)}
        )
    return {
        "id": f"resp_{next(_IDS)}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": turn.model,
        "output": output,
        "usage": {
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": usage.get("cache_read_input_tokens", 0)},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        },
    }


def text_reply(text: str, **usage: int) -> dict[str, Any]:
    return render(ScriptTurn(text=text, usage=usage))


def tool_call_reply(name: str, arguments: dict[str, Any], call_id: str = "call_1", **usage: int) -> dict[str, Any]:
    """The model calls a function tool (a `function_call`, its arguments sent as a JSON string)."""
    return render(ScriptTurn(calls=(ToolRequest(call_id, name, arguments),), usage=usage))


def custom_call_reply(name: str, text: str, call_id: str = "call_1", **usage: int) -> dict[str, Any]:
    """The model calls a freeform (custom) tool, whose input is text: a `custom_tool_call`, as
    Codex's `apply_patch` is called. The client answers with a `custom_tool_call_output` naming
    `call_id` (see `tool_outputs`)."""
    return render(ScriptTurn(calls=(ToolRequest(call_id, name, {}, text),), usage=usage))


def tool_outputs(request: Request) -> dict[str, str]:
    """What the client answered each call with, by call id: the `function_call_output` and
    `custom_tool_call_output` items of a request (an output given as content parts, as text)."""
    items = (request.json or {}).get("input")
    found = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") in OUTPUT_TYPES and item.get("call_id"):
            output = item.get("output")
            found[str(item["call_id"])] = output if isinstance(output, str) else _text(output)
    return found


def events(response: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """A whole response as the streaming API sends it."""
    out: list[tuple[str | None, Any]] = []

    def emit(kind: str, **data: Any) -> None:
        out.append((kind, {"type": kind, "sequence_number": len(out), **data}))

    emit("response.created", response={**response, "status": "in_progress", "output": []})
    for index, item in enumerate(response.get("output") or []):
        if item.get("type") == "message":
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
            for part_index, part in enumerate(item.get("content") or []):
                where = {"item_id": item["id"], "output_index": index, "content_index": part_index}
                emit("response.content_part.added", **where, part={**part, "text": ""})
                emit("response.output_text.delta", **where, delta=part.get("text", ""))
                emit("response.output_text.done", **where, text=part.get("text", ""))
                emit("response.content_part.done", **where, part=part)
        elif item.get("type") == "custom_tool_call":
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "input": ""})
            where = {"item_id": item.get("id"), "output_index": index}
            emit("response.custom_tool_call_input.delta", **where, delta=item.get("input", ""))
            emit("response.custom_tool_call_input.done", **where, input=item.get("input", ""))
        else:
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "arguments": ""})
            where = {"item_id": item.get("id"), "output_index": index}
            emit("response.function_call_arguments.delta", **where, delta=item.get("arguments", ""))
            emit("response.function_call_arguments.done", **where, arguments=item.get("arguments", ""))
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=response)
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def read_exchange(body: dict[str, Any]) -> Exchange:
    """The user's latest prompt, the calls answered since and the skills listed to the model (in
    the instructions, or a `developer`, `system` or user message), by role and by call ids."""
    exchange = Exchange()
    if isinstance(body.get("instructions"), str):
        exchange.listing_from(body["instructions"])
    items = body.get("input")
    if isinstance(items, str):
        exchange.prompt_from(items.strip())
        return exchange
    for item in items or []:
        if not isinstance(item, dict):
            continue
        if str(item.get("type", "")).endswith("_output") and item.get("call_id"):
            exchange.answered.add(str(item["call_id"]))
        elif item.get("role") in ("developer", "system", "user"):
            said = _text(item.get("content"))
            exchange.listing_from(said)
            if item["role"] == "user":
                exchange.prompt_from(strip_reminders(said))
    return exchange
