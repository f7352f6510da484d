"""The pieces of the samples-file JSON Schema that do not come from the assertion registry.

`omk.schema.build` assembles them with the per-type fragments of the registry into the shipped
`eval-samples.schema.json`; the loader composes the same pieces into the smaller schemas it
validates with (`omk.loader.validate`), so the file editors see and the loader's rules agree.
"""

from __future__ import annotations

from typing import Any

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://omk.invalid/schema/eval-samples.schema.json"

NON_EMPTY: dict[str, Any] = {"type": "string", "minLength": 1}
STRING_LIST: dict[str, Any] = {"type": "array", "items": NON_EMPTY}

DIFFICULTIES = ["easy", "medium", "hard"]
PROVENANCES = ["human", "llm-generated", "production-trace"]
LAYERS = ["fact", "behavior"]
MOCK_MATCH_FIELDS = ["file_path", "file_path_endswith", "url", "url_glob", "command_glob", "input_contains", "input"]
RETURN_FORMS = ["return", "return_file", "return_seq"]

# The `schemaVersion` values of an omk samples file this omk reads (the key is optional).
SAMPLE_SET_VERSIONS = ("omk.eval-sample-set/v1",)

# Keys anyone may add to a sample for their own notes: `x-owner: ana`.
EXTENSION_PATTERN = "^x-"


def _d(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": text, **schema}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def sample_properties() -> dict[str, Any]:
    """Every field a sample may have (the omk sample format, plus `tools` and 0.54 leftovers)."""
    return {
        "sample_id": _d("Unique identifier of the sample.", NON_EMPTY),
        "prompt": _d("The user prompt sent to the model.", {"type": "string", "pattern": r"\S"}),
        "context": _d(
            "Extra context (code, a document) appended to the prompt in a code block; URLs are fetched.",
            {"type": "string"},
        ),
        "cwd": _d("Working directory for this sample (default: the samples file's folder).", {"type": "string"}),
        "workspace": _d(
            "A folder (relative to the samples file) copied into a fresh folder the agent works in; "
            "the file checks (file_exists, file_contains, files_changed, command_passes) look at what it left there.",
            NON_EMPTY,
        ),
        "rubric": _d("What the judge grades against (1-5).", {"type": "string"}),
        "assertions": _d("Checks run on the output and trace.", {"type": "array", "items": ref("assertion")}),
        "dimensions": _d(
            "Judge dimensions: name -> what that dimension grades; each is judged on its own and averaged.",
            {
                "type": "object",
                "propertyNames": {"minLength": 1},
                "additionalProperties": {"type": "string", "minLength": 1},
            },
        ),
        "capability": _d("Capabilities this sample covers (coverage diagnostics).", STRING_LIST),
        "category": _d("A group the reports break results down by (as M365 datasets' `category`).", NON_EMPTY),
        "difficulty": _d("Difficulty bucket.", {"enum": DIFFICULTIES}),
        "construct": _d("What is measured: necessity, quality, capability or your own word.", {"type": "string"}),
        "provenance": _d("Where the sample came from.", {"enum": PROVENANCES}),
        "mocks": _d("Tool calls answered with fake data instead of the real tool.", {"type": "array", "items": ref("mock")}),
        "mocksStrict": _d("Deny tool calls that no mock matches (default false).", {"type": "boolean"}),
        "tripwire": _d("A trap sample the model is expected to fail (metadata only).", {"type": "boolean"}),
        "environment": _d("Declared preconditions, rendered into the prompt.", ref("environment")),
        "tools": _d("Tools offered to the model besides the mocked ones.", {"type": "array", "items": ref("tool")}),
        "turns": _d(
            "A conversation instead of one prompt: the turns are sent in order, each with the earlier ones as "
            "history, and each is checked on its own. A sample has either `prompt` or `turns`; the sample's "
            "`assertions`, `rubric` and `dimensions` apply to every turn.",
            {"type": "array", "minItems": 1, "items": ref("turn")},
        ),
        "gold": _d(
            "People's labels of this sample's output, to check the judge against (`omk gold check`): "
            "`score` for the rubric, `dimensions` (name -> score), `pass`, optional `rater`; a list for several raters.",
            {"oneOf": [ref("gold_label"), {"type": "array", "minItems": 1, "items": ref("gold_label")}]},
        ),
        # omk 0.54 fields: accepted so old files load, not used by omk.
        "allowedTools": _d("omk 0.54 field, accepted and ignored.", STRING_LIST),
        "expectedTools": _d("omk 0.54 field, accepted and ignored.", STRING_LIST),
        "covers": _d("omk 0.54 field, accepted and ignored.", {"type": "array", "items": {"type": "object"}}),
    }


SAMPLE_REQUIRED = ["sample_id"]

# `prompt` XOR `turns`, and no sample-wide `context` in a conversation. The loader checks these
# itself (`omk.loader.validate`) to word the messages; the schema says the same for editors.
CONVERSATION_RULES: list[dict[str, Any]] = [
    {"oneOf": [{"required": ["prompt"]}, {"required": ["turns"]}]},
    {"if": {"required": ["turns"]}, "then": {"not": {"required": ["context"]}}},
]


def sample_def() -> dict[str, Any]:
    return {
        "type": "object",
        "required": SAMPLE_REQUIRED,
        "properties": sample_properties(),
        "patternProperties": {EXTENSION_PATTERN: {}},
        "additionalProperties": False,
        "allOf": CONVERSATION_RULES,
    }


SCORE_1_5: dict[str, Any] = {"type": "number", "minimum": 1, "maximum": 5}


def gold_label_def() -> dict[str, Any]:
    """One rater's label of a sample's output (`gold:`)."""
    return {
        "type": "object",
        "properties": {
            "score": _d("The rubric's score, 1-5.", SCORE_1_5),
            "dimensions": _d("Each dimension's score, 1-5.", {"type": "object", "additionalProperties": SCORE_1_5}),
            "pass": _d("Whether the output is acceptable.", {"type": "boolean"}),
            "rater": _d("Who labelled it.", NON_EMPTY),
        },
        "additionalProperties": False,
    }


def turn_def() -> dict[str, Any]:
    """One user turn of a conversation; its checks add to the sample's."""
    return {
        "type": "object",
        "required": ["prompt"],
        "properties": {
            "prompt": _d("What the user says in this turn.", {"type": "string", "pattern": r"\S"}),
            "context": _d("Extra context appended to this turn's prompt in a code block.", {"type": "string"}),
            "assertions": _d(
                "Checks run on this turn's output and trace, after the sample's own.",
                {"type": "array", "items": ref("assertion")},
            ),
            "rubric": _d("What the judge grades this turn against (replaces the sample's rubric).", {"type": "string"}),
            "dimensions": _d(
                "Judge dimensions for this turn, added to the sample's (same name: this turn's wins).",
                {k: v for k, v in sample_properties()["dimensions"].items() if k != "description"},
            ),
        },
        "patternProperties": {EXTENSION_PATTERN: {}},
        "additionalProperties": False,
    }


def common_assertion_properties(type_names: list[str]) -> dict[str, Any]:
    return {
        "type": _d("Assertion type.", {"enum": type_names}),
        "weight": _d("Weight in the layer score (default 1).", {"type": "number", "exclusiveMinimum": 0}),
        "not": _d("Invert the pass/fail of this assertion (any type).", {"type": "boolean"}),
        "layer": _d("Count this assertion in the fact or behavior layer instead of its type's own.", {"enum": LAYERS}),
        "threshold": _d("Pass threshold; the default depends on the type.", {"type": "number"}),
    }


def mock_def() -> dict[str, Any]:
    strings = {name: {"type": "string"} for name in MOCK_MATCH_FIELDS if name != "input"}
    return {
        "type": "object",
        "required": ["tool"],
        "properties": {
            "tool": _d("Tool name, alias (bash, read, ...) or * for any tool.", NON_EMPTY),
            "match": _d(
                "Conditions on the call, all AND-ed.",
                {
                    "type": "object",
                    "properties": {**strings, "input": _d("Recursive subset of the call's input.", {})},
                    "additionalProperties": False,
                },
            ),
            "return": _d("The result given to the model (objects as compact JSON).", {}),
            "return_file": _d("A file (relative to the samples file) whose content is the result.", NON_EMPTY),
            "return_seq": _d("Results for the 1st, 2nd, ... hit; then `return`.", {"type": "array", "minItems": 1}),
            "run": _d(
                "claude: let the real tool run on the sample's workspace (counted as this mock's hit; Claude Code then "
                "knows the file was read, as an Edit after it needs); other targets answer with the return.",
                {"type": "boolean"},
            ),
            "description": _d("What the tool does, as offered to the agent (when `tools` does not declare it).", {"type": "string"}),
            "input_schema": _d(
                "JSON Schema of the tool's input, as offered to the agent (default: any object).",
                {"type": "object", "required": ["type"], "properties": {"type": {"const": "object"}}},
            ),
        },
        "anyOf": [{"required": [form]} for form in RETURN_FORMS],
        "additionalProperties": False,
    }


def tool_def() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": NON_EMPTY,
            "description": {"type": "string"},
            "parameters": _d("JSON Schema of the tool's input.", {"type": "object"}),
        },
        "additionalProperties": False,
    }


def environment_def() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "cli_available": _d("Command-line tools the task assumes are installed.", STRING_LIST),
            "files_available": _d("Files the task assumes exist under cwd.", STRING_LIST),
            "notes": {"type": "string"},
        },
        "additionalProperties": False,
    }


def requires_def() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: STRING_LIST for name in ("tools", "files", "env", "preflight")},
        "additionalProperties": False,
    }


def file_object_def() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["samples"],
        "properties": {
            "$schema": {"type": "string"},
            "schemaVersion": _d("The format's version; omk reads this one (optional).", {"enum": list(SAMPLE_SET_VERSIONS)}),
            "samples": {"type": "array", "minItems": 1, "items": ref("sample")},
            "requires": _d("What the whole set needs (union over files).", ref("requires")),
        },
        "additionalProperties": False,
    }
