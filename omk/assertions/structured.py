"""Structured-output assertions: strict JSON and JSON Schema."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.registry import PrepareError, assertion
from omk.model import AssertionSpec, Layer, Outcome

_NO_VALUE = object()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Made once: json.loads with an option makes a new decoder on every call.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant)


def parse_strict_json(text: str) -> tuple[Any, str | None]:
    """Parse like JS JSON.parse: no NaN/Infinity, no fences. Returns (value, why-not)."""
    if not text.strip():
        return _NO_VALUE, "output is empty"
    try:
        return _STRICT.decode(text), None
    except ValueError as exc:
        if text.strip().startswith("```"):
            return _NO_VALUE, "output is fenced in ```; json_valid wants raw JSON"
        return _NO_VALUE, f"output is not valid JSON: {exc}"


@assertion("json_valid", layer=Layer.FACT, schema={"properties": {}})
def json_valid(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output is one strict JSON value (surrounding whitespace allowed, no code fences)."""
    _, why = parse_strict_json(ctx.output)
    if why:
        return Outcome(False, message=why)
    return Outcome(True, message="output is valid JSON")


# Validators by schema text: checking a schema is slow and samples repeat schemas. Bounded (the
# least recently used goes first), so a long-lived process does not grow with every schema it sees.
_VALIDATORS: OrderedDict[str, Any] = OrderedDict()
MAX_VALIDATORS = 256


def prepare_schema(spec: AssertionSpec) -> Any:
    """Build (or reuse) a validator; a schema that is itself invalid is a load error. Every
    assertion with the same schema (keys in any order) shares one validator, which is read-only."""
    schema = spec.get("schema")
    key = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    found = _VALIDATORS.get(key)
    if found is not None:
        _VALIDATORS.move_to_end(key)
        return found
    validator = _validator(schema)
    _VALIDATORS[key] = validator
    if len(_VALIDATORS) > MAX_VALIDATORS:
        _VALIDATORS.popitem(last=False)
    return validator


def _validator(schema: Any) -> Any:
    import jsonschema
    from jsonschema.exceptions import SchemaError

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = exc.json_path if exc.path else "the schema"
        raise PrepareError("schema", f"invalid JSON Schema at {where}: {exc.message}") from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@assertion(
    "json_schema",
    layer=Layer.FACT,
    schema={"required": ["schema"], "properties": {"schema": {"type": "object"}}},
    prepare=prepare_schema,
)
def json_schema(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output is strict JSON that validates against `schema` (Draft 2020-12 by default)."""
    from jsonschema.exceptions import best_match

    validator = spec.compiled if spec.compiled is not None else prepare_schema(spec)
    value, why = parse_strict_json(ctx.output)
    if why:
        return Outcome(False, message=why.replace("json_valid", "json_schema"))
    error = best_match(validator.iter_errors(value))
    if error is None:
        return Outcome(True, message="output matches the schema")
    return Outcome(False, message=f"schema violation at {error.json_path}: {error.message}")
