"""json_valid and json_schema."""

from __future__ import annotations

import pytest
from helpers import check, make_spec

from omk.assertions.registry import PrepareError
from omk.assertions.structured import prepare_schema


@pytest.mark.parametrize("output", ['{"a": 1}', "  [1, 2]\n", "42", "null", '"x"', '{"中": "文"}'])
def test_json_valid_accepts_strict_json(output):
    assert check("json_valid", output).passed


@pytest.mark.parametrize(
    "output", ["", "   ", "{a: 1}", "NaN", '{"a": Infinity}', "[1,]", "{'a': 1}", "\ufeff{}"]
)
def test_json_valid_rejects_non_json(output):
    assert not check("json_valid", output).passed


def test_json_valid_fenced_output_fails_with_a_hint():
    result = check("json_valid", '```json\n{"a": 1}\n```')
    assert not result.passed
    assert result.message == "output is fenced in ```; json_valid wants raw JSON"


def test_json_valid_empty_output_message():
    assert check("json_valid", "").message == "output is empty"


SCHEMA = {
    "type": "object",
    "required": ["name", "tags"],
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "email": {"type": "string", "format": "email"},
    },
}


def test_json_schema_passes_valid_document():
    assert check("json_schema", '{"name": "x", "tags": ["a"]}', schema=SCHEMA).passed


def test_json_schema_message_names_path_and_reason():
    result = check("json_schema", '{"name": "x", "tags": ["a", 3]}', schema=SCHEMA)
    assert not result.passed
    assert result.message == "schema violation at $.tags[1]: 3 is not of type 'string'"


def test_json_schema_missing_required_property():
    result = check("json_schema", '{"name": "x"}', schema=SCHEMA)
    assert not result.passed
    assert "'tags' is a required property" in result.message


def test_json_schema_checks_formats():
    assert not check("json_schema", '{"name": "x", "tags": [], "email": "nope"}', schema=SCHEMA).passed
    assert check("json_schema", '{"name": "x", "tags": [], "email": "a@b.co"}', schema=SCHEMA).passed


def test_json_schema_on_fenced_or_invalid_output():
    result = check("json_schema", '```\n{"name": "x", "tags": []}\n```', schema=SCHEMA)
    assert not result.passed
    assert "fenced" in result.message
    assert "json_schema" in result.message
    assert not check("json_schema", "not json", schema=SCHEMA).passed


def test_invalid_schema_is_a_prepare_error():
    with pytest.raises(PrepareError) as info:
        make_spec("json_schema", schema={"type": "nonsense"})
    assert info.value.field == "schema"
    assert "invalid JSON Schema" in str(info.value)


def test_draft_2020_12_by_default_and_dollar_schema_respected():
    # prefixItems exists in 2020-12 only; draft-07 ignores it.
    tuple_schema = {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert not check("json_schema", '["x"]', schema=tuple_schema).passed
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_schema}
    assert check("json_schema", '["x"]', schema=draft7).passed


def test_validators_are_cached_per_schema():
    first = prepare_schema(make_spec("json_valid", schema={"type": "object", "minProperties": 1}))
    second = prepare_schema(make_spec("json_valid", schema={"minProperties": 1, "type": "object"}))
    assert first is second


# The fast yes/no of plain schemas (fastjsonschema, draft-07) is trusted only when it says "valid":
# on every schema it is asked of, that answer must be jsonschema's (Draft 2020-12) too.
PLAIN_SCHEMAS = [
    {"type": "number"}, {"type": "integer"}, {"type": "boolean"}, {"type": "string"}, {"type": "null"},
    {"type": "object"}, {"type": "array"}, {"type": ["number", "string"]}, {"minimum": 1}, {"maximum": 0},
    {"exclusiveMinimum": 1}, {"exclusiveMaximum": 1}, {"minLength": 2}, {"maxLength": 1}, {"enum": ["a", "é"]},
    {"enum": ["a", None]}, {"required": ["a"]}, {"properties": {"a": {"type": "integer"}}},
    {"additionalProperties": False, "properties": {"a": {}}}, {"minItems": 1}, {"maxItems": 0},
    {"items": {"type": "string"}}, {"minProperties": 1}, {"maxProperties": 0}, {"uniqueItems": True},
    {"type": "object", "required": ["v"], "properties": {"v": {"enum": ["x", "y"]}, "n": {"type": "integer", "minimum": 1}}},
]
VALUES = [
    True, False, 1, 1.0, 1.5, 0, -1, "a", "", None, [], {}, [1], {"a": 1}, "é", "e\u0301", 10**20, float("inf"),
    [True, 1], [1, 1.0], [0, False], [{"a": 1}, {"a": 1}], [{"a": 1}, {"a": True}], {"a": True}, {"a": 1.0},
    {"b": 2}, {"v": "x", "n": True}, {"v": "x", "n": 1.0}, {"v": "z"}, {"v": "x", "n": 0},
]


@pytest.mark.parametrize("schema", PLAIN_SCHEMAS, ids=str)
def test_fast_check_says_valid_only_when_jsonschema_does(schema):
    import jsonschema

    from omk.assertions.structured import _fast_check, _passes, plain_schema

    assert plain_schema(schema)
    validator = prepare_schema(make_spec("json_schema", schema=schema))
    fast = _fast_check(validator)
    assert fast is not None
    strict = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for value in VALUES:
        if _passes(fast, value):
            assert strict.is_valid(value), value


@pytest.mark.parametrize(
    "schema",
    [{"enum": [1]}, {"const": "a"}, {"format": "email"}, {"pattern": "a"}, {"$ref": "#/$defs/x"},
     {"anyOf": [{}]}, {"prefixItems": [{}]}, {"items": [{}]}, {"$schema": "http://json-schema.org/draft-04/schema#"},
     {"properties": {"a": {"format": "date"}}}, {"minimum": True}],
    ids=str,
)
def test_schemas_outside_the_plain_keywords_are_left_to_jsonschema(schema):
    from omk.assertions.structured import plain_schema

    assert not plain_schema(schema)


def test_json_schema_verdicts_and_messages_are_jsonschemas_on_plain_schemas():
    import json

    schema = PLAIN_SCHEMAS[-1]
    for value in VALUES[-5:]:
        result = check("json_schema", json.dumps(value), schema=schema)
        strict = prepare_schema(make_spec("json_schema", schema=schema))
        assert result.passed == strict.is_valid(value)
    failed = check("json_schema", '{"v": "z"}', schema=schema)
    assert failed.message == "schema violation at $.v: 'z' is not one of ['x', 'y']"
    assert check("json_schema", '{"v": "x", "n": 2}', schema=schema).message == "output matches the schema"


NARROWED_SCHEMAS = [
    PLAIN_SCHEMAS[-1],
    {"type": "object", "additionalProperties": False, "required": ["a", "b"],
     "properties": {"a": {"type": "string", "maxLength": 2}, "b": {"type": "object", "required": ["c"], "properties": {"c": {"type": "integer"}}},
                    "d": {"type": "array", "items": {"enum": ["x"]}, "minItems": 1}}},
    {"properties": {"a": {"minimum": 3}, "b": {"minimum": 3}, "c": {"type": "null"}}, "minProperties": 2},
]  # fmt: skip
NARROWED_VALUES = [
    {}, {"a": "xyz"}, {"a": "x", "b": {}}, {"a": "x", "b": {"c": 1.5}}, {"a": 1, "b": {"c": 1}, "d": []}, {"a": "x", "b": {"c": 1}, "e": 1},
    {"a": "x", "b": {"c": 1}, "d": ["y", "x"]}, {"a": 1, "b": 2}, {"a": 4, "b": 1, "c": 0}, {"c": None}, {"v": "z", "n": 0}, {"v": "x", "n": "1"},
    {"v": 1, "n": 1, "x": {}}, [], "a", {"a": "x", "b": {"c": 1}},
]  # fmt: skip


@pytest.mark.parametrize("schema", NARROWED_SCHEMAS, ids=str)
def test_why_an_output_fails_a_plain_schema_is_jsonschemas_best_match(schema):
    """A failing output of a plain schema is worded by jsonschema walking only the properties the
    fast check finds invalid: the message is the one the whole walk gives, on every value."""
    import json

    import jsonschema
    from jsonschema.exceptions import best_match

    strict = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for value in NARROWED_VALUES:
        result = check("json_schema", json.dumps(value), schema=schema)
        error = best_match(strict.iter_errors(value))
        expected = "output matches the schema" if error is None else f"schema violation at {error.json_path}: {error.message}"
        assert (result.passed, result.message) == (error is None, expected), value
