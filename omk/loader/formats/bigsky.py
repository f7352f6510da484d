"""Big Sky Agents `eval-agents` datasets, read as they are.

    {"name", "description",
     "data": [{"id", "description",
               "inputs": {"context": {…}, "messages": [{"role", "content"}, …]},
               "outputs": {"message": {"role": "assistant", "content": "…",
                                        "tool_calls": [{"type": "function",
                                                        "function": {"name", "arguments": {…}}}]}}}],
     "evaluators": [{"key", "description", "function": "chat:matchToolCall", "arguments"?}],
     "comparativeEvaluators": [{"key", "function": "chat:evaluatePairwise"}],
     "summaryEvaluators": [{"key", "function": "chat:customSummaryEvaluator"}]}

Each example becomes one `Sample` (`source_format="bigsky"`):

* the last message (it must be the user's) is the prompt; the messages before it are the
  history, sent as they are (`Sample.history`, neutral messages as omk.domain.messages has them);
* `inputs.context` is `Sample.variables`, rendered into the system prompt (omk.targets.prelude);
* the agent gets one model call (`Sample.single_step`), as Big Sky's agents do: the tool calls it
  asks for are recorded, not run, and its content is the output;
* the tools offered are the dataset's `tools` (an omk extension: OpenAI `{"type": "function",
  "function": {…}}` or omk `{name, description, parameters}`), else one per tool name the expected
  outputs call, with the argument names they use;
* `evaluators` become assertions on every example: `chat:matchToolCall` → `match_tool_call`,
  `chat:compareContent` → `compare_content`, `chat:includeContext` → `include_context`,
  `chat:includeString` → a case-sensitive `regex` on the escaped string, `chat:matchRegex` →
  `regex` without flags;
* `comparativeEvaluators` (`chat:evaluatePairwise`) name the pairwise verdicts of a two-target
  run (`Sample.comparisons`); `summaryEvaluators` (Big Sky's only one is a placeholder that always
  says 1) are accepted, and omk's run summary stands in for them.

There is no schema in Big Sky; here every problem is reported at load, with its line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import regex

from omk.core.errors import Problem
from omk.domain.messages import assistant_message, tool_message, user_message
from omk.loader.document import Document, Path_
from omk.loader.formats.common import Reader
from omk.loader.messages import did_you_mean, kind_of, one_of
from omk.samples.model import AssertionSpec, Sample

STANDARD = {
    "chat:matchToolCall": "match_tool_call",
    "chat:compareContent": "compare_content",
    "chat:includeContext": "include_context",
    "chat:includeString": "regex",
    "chat:matchRegex": "regex",
}
NEEDED_ARGUMENT = {"chat:includeContext": "contextName", "chat:includeString": "string", "chat:matchRegex": "pattern"}
COMPARATIVE = ("chat:evaluatePairwise",)
SUMMARY = ("chat:customSummaryEvaluator",)
ROLES = ("system", "developer", "user", "assistant", "tool")


def read_bigsky(
    doc: Document, file: str, base_dir: Path, first_ids: dict[str, tuple[str, int | None]]
) -> tuple[list[Sample], list[Problem]]:
    reader = _BigSkyReader(doc, file, base_dir, first_ids)
    samples = reader.run()
    reader.problems.sort(key=lambda p: p.line or 0)
    return (samples if not reader.problems else []), reader.problems


def content_text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of an OpenAI content-part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(str(p.get("text") or "") for p in content if p.get("type") in ("text", "input_text", None))
    return None


def tool_arguments(value: Any) -> Any:
    """Expected arguments are an object in Big Sky; a JSON string (OpenAI's wire form) is parsed."""
    if value is None:
        return {}
    if isinstance(value, str):
        return json.loads(value) if value.strip() else {}
    return value


def _json_type(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}
    if value is None or value == "IGNORE":
        return {}
    return {"type": "string"}


class _BigSkyReader(Reader):
    def run(self) -> list[Sample]:
        self.parse_issues()
        data = self.doc.data
        self.stem = Path(self.file).stem or "example"
        for key, kind, what in (("name", str, "a string"), ("description", str, "a string")):
            if key in data:
                self.need(data[key], kind, (key,), what)
        examples = data.get("data")
        if not isinstance(examples, list) or not examples:
            self.problem(("data",), f"must be a non-empty list of examples (got {kind_of(examples) if examples != [] else 'an empty list'})")
            return []
        standard = self._evaluator_list(data, "evaluators", STANDARD)
        comparative = self._evaluator_list(data, "comparativeEvaluators", dict.fromkeys(COMPARATIVE, ""))
        self._evaluator_list(data, "summaryEvaluators", dict.fromkeys(SUMMARY, ""))
        tools = self._tools(data, examples)
        comparisons = [str(e.get("key") or e["function"]) for e, _ in comparative]
        samples = []
        for index, example in enumerate(examples):
            sample = self._example(example, ("data", index), index, standard, tools, comparisons)
            if sample is not None:
                samples.append(sample)
        return samples

    # --- evaluators ---------------------------------------------------------------------------

    def _evaluator_list(self, data: dict[str, Any], key: str, known: dict[str, str]) -> list[tuple[dict[str, Any], Path_]]:
        if key not in data or data[key] is None:
            return []
        entries = data[key]
        if not isinstance(entries, list):
            self.problem((key,), f"must be a list of evaluators (got {kind_of(entries)})")
            return []
        out: list[tuple[dict[str, Any], Path_]] = []
        for i, entry in enumerate(entries):
            path: Path_ = (key, i)
            if not isinstance(entry, dict):
                self.problem(path, f'must be an object like {{"key", "function"}} (got {kind_of(entry)})')
                continue
            function = entry.get("function")
            if function is None:
                self.problem(path, f'missing "function": one of {one_of(known)}')
                continue
            if not isinstance(function, str) or function not in known:
                shown = f'"{function}"' if isinstance(function, str) else kind_of(function)
                hint = did_you_mean(function, known) if isinstance(function, str) else ""
                self.problem(path + ("function",), f"unknown {key} function {shown}{hint}; known: {one_of(known)}")
                continue
            if "key" in entry and not isinstance(entry["key"], str):
                self.problem(path + ("key",), f"must be a string (got {kind_of(entry['key'])})")
                continue
            arguments = entry.get("arguments", {})
            if not isinstance(arguments, dict):
                self.problem(path + ("arguments",), f"must be an object (got {kind_of(arguments)})")
                continue
            needed = NEEDED_ARGUMENT.get(function)
            if needed and not (isinstance(arguments.get(needed), str) and arguments[needed]):
                self.problem(path + ("arguments",), f'{function} needs "arguments": {{"{needed}": "…"}} (a non-empty string)')
                continue
            if function == "chat:matchRegex" and not self._pattern_compiles(arguments["pattern"], path + ("arguments", "pattern")):
                continue  # reported once here, not once per example
            out.append((entry, path))
        return out

    def _pattern_compiles(self, pattern: str, path: Path_) -> bool:
        count = len(self.problems)
        self.spec({"type": "regex", "pattern": pattern, "flags": "u"}, path, "", "", path)
        return len(self.problems) == count

    def _spec(self, entry: dict[str, Any], path: Path_, expected: dict[str, Any] | None, label: str, where: str) -> AssertionSpec | None:
        function = entry["function"]
        arguments = entry.get("arguments") or {}
        kind = STANDARD[function]
        raw: dict[str, Any] = {"type": kind}
        if function in ("chat:matchToolCall", "chat:compareContent") and expected is None:
            self.problem(path, f"{function} needs the example's expected message (outputs.message)", where, ("outputs", "message"))
            return None
        if function == "chat:matchToolCall":
            calls = (expected or {}).get("tool_calls") or []
            first = calls[0].get("function") or {} if calls and isinstance(calls[0], dict) else {}
            if first.get("name"):
                raw["tool"] = first["name"]
            raw["arguments"] = tool_arguments(first.get("arguments"))
        elif function == "chat:compareContent":
            raw["reference"] = content_text((expected or {}).get("content")) or ""
        elif function == "chat:includeContext":
            raw["path"] = arguments["contextName"]
        elif function == "chat:includeString":
            raw.update(pattern=regex.escape(arguments["string"]), flags="u")  # "u" only: case-sensitive
        else:
            raw.update(pattern=arguments["pattern"], flags="u")  # Big Sky compiles with no flags
        key = entry.get("key") or function
        return self.spec(raw, path, f"{label}.{key}", where, (str(path[0]), path[1]))

    # --- tools ----------------------------------------------------------------------------------

    def _tools(self, data: dict[str, Any], examples: list[Any]) -> list[dict[str, Any]]:
        if "tools" in data:
            return self._declared_tools(data["tools"])
        seen: dict[str, dict[str, Any]] = {}
        for example in examples:
            message = ((example or {}).get("outputs") or {}).get("message") if isinstance(example, dict) else None
            calls = message.get("tool_calls") if isinstance(message, dict) else None
            for call in calls if isinstance(calls, list) else []:
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                    continue
                props = seen.setdefault(fn["name"], {})
                try:
                    args = tool_arguments(fn.get("arguments"))
                except ValueError:
                    continue
                for key, value in (args.items() if isinstance(args, dict) else []):
                    props.setdefault(key, _json_type(value))
        return [
            {"name": name, "description": f"The {name} tool.", "parameters": {"type": "object", "properties": props}}
            for name, props in seen.items()
        ]

    def _declared_tools(self, tools: Any) -> list[dict[str, Any]]:
        if not isinstance(tools, list):
            self.problem(("tools",), f"must be a list of tool definitions (got {kind_of(tools)})")
            return []
        out = []
        for i, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) and isinstance(tool.get("function"), dict) else tool
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                self.problem(("tools", i), 'must be {"type": "function", "function": {"name", "description", "parameters"}}')
                continue
            params = fn.get("parameters") or {"type": "object"}
            if not isinstance(params, dict):
                self.problem(("tools", i, "parameters"), f"must be a JSON Schema object (got {kind_of(params)})")
                continue
            out.append({"name": fn["name"], "description": str(fn.get("description") or ""), "parameters": params})
        return out

    # --- examples ---------------------------------------------------------------------------

    def _example(
        self,
        example: Any,
        path: Path_,
        index: int,
        standard: list[tuple[dict[str, Any], Path_]],
        tools: list[dict[str, Any]],
        comparisons: list[str],
    ) -> Sample | None:
        label = f"data[{index}]"
        if not isinstance(example, dict):
            self.problem(path, f"each example must be an object with inputs and outputs (got {kind_of(example)})", label, ())
            return None
        given = example.get("id")
        if isinstance(given, int) and not isinstance(given, bool):
            given = str(given)
        where = f"{label} ({given})" if isinstance(given, str) and given else label
        count = len(self.problems)
        if "id" in example and not (isinstance(given, str) and given):
            self.problem(path + ("id",), f"must be a non-empty string (got {kind_of(example['id'])})", where, ("id",))
        inputs = example.get("inputs")
        if not isinstance(inputs, dict):
            self.problem(path + ("inputs",) if "inputs" in example else path, f'"inputs" must be an object with "messages" (got {kind_of(inputs)})', where, ("inputs",))
            return None
        variables = inputs.get("context", {})
        if variables is None:
            variables = {}
        if not isinstance(variables, dict):
            self.problem(path + ("inputs", "context"), f"must be an object (got {kind_of(variables)})", where, ("inputs", "context"))
        history, prompt = self._messages(inputs.get("messages"), path + ("inputs", "messages"), where)
        expected = self._expected(example, path, where)
        if len(self.problems) > count or prompt is None:
            return None
        specs = []
        for entry, epath in standard:
            spec = self._spec(entry, epath, expected, label, where)
            if spec is not None:
                specs.append(spec)
        if len(self.problems) > count:
            return None
        sample_id = self.claim_id(given if isinstance(given, str) else None, [f"example-{index + 1}", f"{self.stem}-{index + 1}"], path, where, ("id",))
        return Sample(
            sample_id=sample_id,
            prompt=prompt,
            assertions=specs,
            tools=tuple(tools),
            raw=example,
            source=self.ref(path, label),
            base_dir=self.base_dir,
            source_format="bigsky",
            history=tuple(history),
            variables=variables if isinstance(variables, dict) else {},
            single_step=True,
            comparisons=list(comparisons),
        )

    def _messages(self, messages: Any, path: Path_, where: str) -> tuple[list[dict[str, Any]], str | None]:
        rel = ("inputs", "messages")
        if not isinstance(messages, list) or not messages:
            shown = "an empty list" if messages == [] else kind_of(messages)
            self.problem(path, f"must be a non-empty list of chat messages ending with the user's (got {shown})", where, rel)
            return [], None
        neutral: list[dict[str, Any]] = []
        prompt: str | None = None
        for i, message in enumerate(messages):
            at, at_rel = path + (i,), rel + (i,)
            role = message.get("role") if isinstance(message, dict) else None
            if role not in ROLES:
                self.problem(at, f"must be a message with a role of {one_of(ROLES)} (got {kind_of(role if isinstance(message, dict) else message)})", where, at_rel)
                continue
            text = content_text(message.get("content"))
            if text is None:
                self.problem(at + ("content",), f"must be text or a list of text parts (got {kind_of(message.get('content'))})", where, at_rel + ("content",))
                continue
            if i == len(messages) - 1:
                if role != "user":
                    self.problem(at, f'the last message is what the agent answers: it must be the user\'s (got role "{role}")', where, at_rel)
                    continue
                prompt = text
            elif role in ("system", "developer"):
                neutral.append({"role": "system", "content": text})
            elif role == "user":
                neutral.append(user_message(text))
            elif role == "assistant":
                calls = []
                for j, call in enumerate(message.get("tool_calls") or []):
                    fn = call.get("function") if isinstance(call, dict) else None
                    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                        self.problem(at + ("tool_calls", j), "must be {\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}", where, at_rel + ("tool_calls", j))
                        continue
                    try:
                        args = tool_arguments(fn.get("arguments"))
                    except ValueError:
                        args = fn.get("arguments")
                    calls.append((str(call.get("id") or f"call_{i}_{j}"), fn["name"], args))
                neutral.append(assistant_message(text, calls))
            else:
                neutral.append(tool_message(str(message.get("tool_call_id") or ""), str(message.get("name") or ""), text, False))
        return neutral, prompt

    def _expected(self, example: dict[str, Any], path: Path_, where: str) -> dict[str, Any] | None:
        outputs = example.get("outputs")
        if outputs is None:
            return None
        if not isinstance(outputs, dict):
            self.problem(path + ("outputs",), f'must be an object with "message" (got {kind_of(outputs)})', where, ("outputs",))
            return None
        message = outputs.get("message")
        if message is None:
            return None
        at, rel = path + ("outputs", "message"), ("outputs", "message")
        if not isinstance(message, dict):
            self.problem(at, f"must be an assistant message object (got {kind_of(message)})", where, rel)
            return None
        if content_text(message.get("content")) is None:
            self.problem(at + ("content",), f"must be text (got {kind_of(message.get('content'))})", where, rel + ("content",))
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            self.problem(at + ("tool_calls",), f"must be a list of tool calls (got {kind_of(calls)})", where, rel + ("tool_calls",))
            return None
        for j, call in enumerate(calls or []):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict):
                self.problem(at + ("tool_calls", j), 'must be {"type": "function", "function": {"name", "arguments"}}', where, rel + ("tool_calls", j))
                continue
            try:
                args = tool_arguments(fn.get("arguments"))
            except ValueError:
                self.problem(at + ("tool_calls", j, "function", "arguments"), "is a string but not JSON", where, rel + ("tool_calls", j, "function", "arguments"))
                continue
            if not isinstance(args, dict):
                self.problem(at + ("tool_calls", j, "function", "arguments"), f"must be an object (got {kind_of(args)})", where, rel + ("tool_calls", j, "function", "arguments"))
        return message
