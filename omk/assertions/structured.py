"""Structured-output assertions: strict JSON and JSON Schema."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import msgspec

from omk.assertions.context import CheckContext
from omk.assertions.registry import PrepareError, assertion
from omk.samples.model import AssertionSpec, Layer, Outcome

_NO_VALUE = object()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Made once: json.loads with an option makes a new decoder on every call.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant)


def parse_strict_json(text: str) -> tuple[Any, str | None]:
    """Parse like JS JSON.parse: no NaN/Infinity, no fences. Returns (value, why-not).

    msgspec parses first, in C (it reads JSON as strictly, into the same values); what it refuses
    (a NaN, a number past a float's range, a lone surrogate, bad JSON) is parsed again by the
    standard library, which reads it or says why as it always did."""
    if not text.strip():
        return _NO_VALUE, "output is empty"
    try:
        return msgspec.json.decode(text), None
    except (msgspec.DecodeError, RecursionError):
        pass
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


# One outcome for every output that matches (the engine then makes its result record once).
_MATCHES = Outcome(True, message="output matches the schema")


@assertion(
    "json_schema",
    layer=Layer.FACT,
    schema={"required": ["schema"], "properties": {"schema": {"type": "object"}}},
    prepare=prepare_schema,
)
def json_schema(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The output is strict JSON that validates against `schema` (Draft 2020-12 by default)."""
    validator = spec.compiled if spec.compiled is not None else prepare_schema(spec)
    value, why = parse_strict_json(ctx.output)
    if why:
        return Outcome(False, message=why.replace("json_valid", "json_schema"))
    fast = _fast_check(validator)
    if fast is not None and _passes(fast, value):
        return _MATCHES
    from jsonschema.exceptions import best_match  # only to say why an output fails

    error = best_match(_narrowed(validator, value).iter_errors(value) if fast is not None else validator.iter_errors(value))
    if error is None:
        return _MATCHES
    return Outcome(False, message=f"schema violation at {error.json_path}: {error.message}")


# A fast yes/no for plain schemas. fastjsonschema compiles a schema to Python code, many times
# faster than jsonschema's walk, but it knows draft-07 only, and some of its answers differ (an
# enum of numbers takes true for 1). So it is asked only of a schema written with the keywords
# below, whose meaning is the same in both drafts and in both libraries (tests/test_assert_structured.py
# compares them), and only its "valid" is trusted: on "invalid", jsonschema decides and words the error.
_FAST: dict[int, tuple[Any, Any]] = {}  # id(jsonschema validator) → (the validator, its fast check or None)
_TYPES = frozenset(("string", "number", "integer", "boolean", "null", "object", "array"))
_NUMBER_KEYS = frozenset((
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "minProperties", "maxProperties",
))
_NOTE_KEYS = frozenset(("title", "description"))


def _fast_check(validator: Any) -> Any:
    found = _FAST.get(id(validator))
    if found is not None and found[0] is validator:
        return found[1]
    fast = None
    if plain_schema(validator.schema):
        import fastjsonschema

        try:
            draft7 = {**validator.schema, "$schema": "http://json-schema.org/draft-07/schema#"}
            fast = fastjsonschema.compile(draft7, use_default=False, detailed_exceptions=False)
        except Exception:  # noqa: BLE001 (what it cannot compile, jsonschema checks alone)
            fast = None
    if len(_FAST) >= MAX_VALIDATORS:
        _FAST.clear()
    _FAST[id(validator)] = (validator, fast)  # holding the validator keeps its id from being reused
    return fast


def _narrowed(validator: Any, value: Any) -> Any:
    """The validator to word why `value` fails a plain schema: the schema with `true` for each
    property whose value the fast check finds valid. jsonschema yields no error for such a
    property either way (its "valid" is the fast check's, see above), so the errors, their
    order and the best of them are the same; only the walk into valid properties is skipped
    (jsonschema makes a validator for every subschema it goes into)."""
    properties = validator.schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, dict):
        return validator
    checks = _property_checks(validator)
    valid = tuple(name in value and (fast := checks[name]) is not None and _passes(fast, value[name]) for name in properties)
    key = (id(validator), valid)  # outputs that fail tend to fail the same properties: one narrowed validator each
    found = _NARROWED.get(key)
    if found is not None and found[0] is validator:
        return found[1]
    kept = {name: True if ok else sub for (name, sub), ok in zip(properties.items(), valid, strict=True)}
    narrowed = validator.evolve(schema={**validator.schema, "properties": kept})
    if len(_NARROWED) >= MAX_VALIDATORS:
        _NARROWED.clear()
    _NARROWED[key] = (validator, narrowed)  # holding the validator keeps its id from being reused
    return narrowed


_PROPERTIES: dict[int, tuple[Any, dict[str, Any]]] = {}  # id(jsonschema validator) → (the validator, its properties' fast checks)
_NARROWED: dict[tuple[int, tuple[bool, ...]], tuple[Any, Any]] = {}  # (id(validator), which properties passed) → (it, narrowed)


def _property_checks(validator: Any) -> dict[str, Any]:
    """The fast check of each property of a plain schema (None where fastjsonschema cannot
    compile one: that property is walked by jsonschema)."""
    found = _PROPERTIES.get(id(validator))
    if found is not None and found[0] is validator:
        return found[1]
    import fastjsonschema

    checks: dict[str, Any] = {}
    for name, sub in validator.schema["properties"].items():
        try:
            checks[name] = fastjsonschema.compile({**sub, "$schema": "http://json-schema.org/draft-07/schema#"}, use_default=False, detailed_exceptions=False)
        except Exception:  # noqa: BLE001 (what it cannot compile, jsonschema checks alone)
            checks[name] = None
    if len(_PROPERTIES) >= MAX_VALIDATORS:
        _PROPERTIES.clear()
    _PROPERTIES[id(validator)] = (validator, checks)  # holding the validator keeps its id from being reused
    return checks


def _passes(fast: Any, value: Any) -> bool:
    try:
        fast(value)
    except Exception:  # noqa: BLE001 (a refusal, or anything it trips on: jsonschema decides)
        return False
    return True


def plain_schema(schema: Any, depth: int = 0) -> bool:
    """The schema uses only keywords that mean the same to fastjsonschema's draft-07 and to
    jsonschema's Draft 2020-12 (no `$schema`, `$ref`, `format`, `pattern`, `const`, combinators)."""
    if not isinstance(schema, dict) or depth > 16:
        return False
    return all(_plain_keyword(key, value, depth) for key, value in schema.items())


def _plain_keyword(key: str, value: Any, depth: int) -> bool:
    if key in _NOTE_KEYS:
        return True
    if key in _NUMBER_KEYS:
        return type(value) in (int, float)
    if key == "type":
        names = value if isinstance(value, list) else [value]
        return all(isinstance(n, str) and n in _TYPES for n in names)
    if key == "enum":  # strings and null only: JSON Schema's equality keeps true apart from 1, Python's does not
        return isinstance(value, list) and all(v is None or isinstance(v, str) for v in value)
    if key == "required":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if key == "uniqueItems":
        return isinstance(value, bool)
    if key == "properties":
        return isinstance(value, dict) and all(plain_schema(v, depth + 1) for v in value.values())
    if key == "additionalProperties":
        return isinstance(value, bool) or plain_schema(value, depth + 1)
    if key == "items":
        return plain_schema(value, depth + 1)
    return False
