"""Check one sample against the generated JSON Schema; every problem is returned, none raised.

The shipped schema says the same as these checks, but evaluating it whole means 35 `if/then`
branches per assertion in jsonschema, which is slow on a large set (docs/benchmarks.md). So the loader validates the sample *shell* (its assertions left open) and
dispatches each assertion to the schema of its own type. Each of those schemas is checked
twice over only when it fails: `fastjsonschema` (schemas compiled to Python code, much faster)
answers "valid?" and `jsonschema`'s `Draft202012Validator` then lists the errors to report.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import fastjsonschema

from omk.assertions.registry import AssertionType, registry, revision
from omk.domain.toolnames import name_problem
from omk.loader import rules
from omk.loader.document import Path_
from omk.loader.messages import did_you_mean, kind_of, translate, unknown_type
from omk.schema.build import ASSERTION_REF, build_schema

MAX_NESTING = 16  # assert-set levels (omk 0.54 contract)
Found = list[tuple[Path_, str]]
# id(assertion dict) → (the dict, its type schema's errors, whether the dict as a top-level
# assertion, children included, has no problem in any sample: `_alone`)
Seen = dict[int, tuple[Any, Found, bool]]
# (a sample's field name, id(its value)) → (the value, whether it passes that field's schema):
# the verdicts on sample fields that samples share, kept for one load (`Shell.valid`)
FieldsSeen = dict[tuple[str, int], tuple[Any, bool]]
SEEN_LIMIT = 1 << 14


class Checker:
    """One schema: a fast yes/no, and readable errors when the answer is no."""

    def __init__(self, schema: dict[str, Any], owner: str | None = None):
        self.owner = owner
        # Only "valid?" is asked of the fast check: without messages its code is smaller and
        # compiles faster (docs/benchmarks.md). `use_default` off: it would write schema defaults
        # into the sample it checks.
        self._fast: Callable[[Any], Any] = _compile(schema)
        self._schema = schema
        self._detail: Any = None  # jsonschema (slow to import) is needed only to word errors

    def errors(self, value: Any) -> Found:
        try:
            self._fast(value)
            return []
        except fastjsonschema.JsonSchemaException:
            pass
        except Exception:  # noqa: BLE001 - whatever the fast path trips on, the slow one decides
            pass
        if self._detail is None:
            from jsonschema import Draft202012Validator

            self._detail = Draft202012Validator(self._schema)
        found: Found = []
        for error in self._detail.iter_errors(value):
            for item in translate(error, self.owner):
                if item not in found:
                    found.append(item)
        return found


def _compile(schema: Any) -> Callable[[Any], Any]:
    """fastjsonschema's check of `schema` (draft 7), which raises when the value does not pass."""
    return fastjsonschema.compile(
        {**_const_as_enum(schema), "$schema": "http://json-schema.org/draft-07/schema#"} if isinstance(schema, dict) else schema,
        use_default=False,
        detailed_exceptions=False,
    )


class Shell:
    """The sample shell's "valid?", field by field: the fast yes of `Checker` for the shell,
    without running the whole shell's code for every sample.

    The shell (an object's `required`, `properties`, `patternProperties` and
    `additionalProperties`, nothing else) holds a sample exactly when its required fields are
    there and each field's value passes what applies to that field's name: its property's
    schema, every pattern's that matches the name, or else `additionalProperties`. Which apply
    is found once per name (by fastjsonschema itself, so patterns match as there), and that
    field's check compiled once. A field's value that samples share (a list or mapping read
    once for the load: omk.loader.share) is checked once per load (`seen`, which the load
    keeps: nothing of a load stays here once it returns). `valid` answers True only
    when the whole shell's check would pass; on False the caller asks `Checker.errors`, which
    words every problem as before."""

    _PLAIN = frozenset({"type", "required", "properties", "patternProperties", "additionalProperties", "description", "title"})

    def __init__(self, schema: dict[str, Any]):
        self._schema = schema
        self.usable = schema.get("type") == "object" and schema.keys() <= self._PLAIN
        self.required = frozenset(schema.get("required", ()))
        self._fields: dict[str, Callable[[Any], Any] | None] = {}

    def valid(self, sample: dict[str, Any], seen: FieldsSeen | None = None) -> bool:
        if not self.usable or not self.required <= sample.keys():
            return False
        fields = self._fields
        for key, value in sample.items():
            check = fields.get(key, _UNKNOWN)
            if check is _UNKNOWN:
                if key.__class__ is not str:
                    return False  # the whole check decides
                check = fields[key] = self._check_of(key)
            if check is None:
                return False
            cls = value.__class__
            if seen is not None and (cls is dict or cls is list) and not (cls is list and value and value[0].__class__ in _CONTAINER):
                # Shared between samples (a list of containers never is: omk.loader.share).
                known = seen.get((key, id(value)))
                if known is not None and known[0] is value:
                    if not known[1]:
                        return False
                    continue
                verdict = _passes(check, value)
                if len(seen) >= SEEN_LIMIT:
                    seen.clear()
                seen[key, id(value)] = (value, verdict)  # holding `value` keeps its id from being reused
            else:
                verdict = _passes(check, value)
            if not verdict:
                return False
        return True

    def _check_of(self, key: str) -> Callable[[Any], Any] | None:
        """The compiled check of a field named `key`; None when no value may be written there."""
        schema = self._schema
        applies = [schema["properties"][key]] if key in schema.get("properties", {}) else []
        for pattern, sub in schema.get("patternProperties", {}).items():
            if not _passes(_compile({"type": "object", "patternProperties": {pattern: {"not": {}}}}), {key: None}):
                applies.append(sub)  # the pattern matches the name
        if not applies:
            applies.append(schema.get("additionalProperties", True))
        if any(sub is False for sub in applies):
            return None
        checks = [sub for sub in applies if sub is not True]
        return _compile({"allOf": checks} if checks else {})


_CONTAINER = (dict, list)
_UNKNOWN: Any = object()


def _passes(check: Callable[[Any], Any], value: Any) -> bool:
    try:
        check(value)
    except Exception:  # noqa: BLE001 - whatever the fast check trips on, the whole check decides
        return False
    return True


_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_DATA = ("enum", "default", "examples")  # values, not schemas: a "const" key in them is data


def _const_as_enum(schema: Any, names: bool = False) -> Any:
    """`{"const": x}` as the equivalent `{"enum": [x]}`: fastjsonschema 2.21-2.22 fails to generate
    `const` when `detailed_exceptions` is off (its message template needs the detail). `names`:
    `schema` maps names to schemas (`properties`), so a key called "const" is a name there."""
    if isinstance(schema, list):
        return [_const_as_enum(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    if names:
        return {k: _const_as_enum(v) for k, v in schema.items()}
    out = {
        k: v if k in _DATA else _const_as_enum(v, names=k in _NAMED) for k, v in schema.items() if k != "const"
    }
    if "const" in schema:
        if "enum" in schema:  # both must hold
            out["allOf"] = [*out.get("allOf", []), {"enum": [schema["const"]]}]
        else:
            out["enum"] = [schema["const"]]
    return out


def inline_refs(schema: Any, defs: dict[str, Any], replace: dict[str, Any]) -> Any:
    """A copy of `schema` with every `$ref` to `#/$defs/NAME` replaced by that definition."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/") :]
            target = replace[name] if name in replace else inline_refs(defs[name], defs, replace)
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return {**copy.deepcopy(target), **rest} if rest else copy.deepcopy(target)
        return {k: inline_refs(v, defs, replace) for k, v in schema.items()}
    if isinstance(schema, list):
        return [inline_refs(v, defs, replace) for v in schema]
    return schema


def type_schema(kind: AssertionType, common: dict[str, Any]) -> dict[str, Any]:
    """Common assertion fields + the type's own, closed unless the type takes any field."""
    own = inline_refs(kind.schema, {}, {"assertion": {}})
    schema = {k: v for k, v in own.items() if k not in ("properties", "required", "additionalProperties")}
    properties = {**common, "type": {"const": kind.name}, **own.get("properties", {})}
    schema.update(type="object", properties=properties, required=["type", *own.get("required", [])])
    extra = own.get("additionalProperties", False)
    schema["additionalProperties"] = extra
    return schema


class Schemas:
    """Every checker the loader needs, built once per registry."""

    def __init__(self, types: dict[str, AssertionType]):
        full = build_schema(types)
        defs = full["$defs"]
        self.types = types
        shell = {k: v for k, v in defs["sample"].items() if k != "allOf"}  # prompt/turns: `_conversation`
        shell = inline_refs(shell, defs, {"assertion": {}})
        self.sample = Checker(shell)
        self.shell = Shell(shell)
        self.requires = Checker(defs["requires"])
        common = defs["assertion"]["properties"]
        self.by_type = _Checkers(types, common)
        self.with_children = {
            name for name, kind in types.items() if _refers_to_assertion(kind.schema.get("properties", {}))
        }


class _Checkers(dict[str, Checker]):
    """The checker of each assertion type, compiled on first use: a set uses a few of the types."""

    def __init__(self, types: dict[str, AssertionType], common: dict[str, Any]):
        super().__init__()
        self._types, self._common = types, common

    def __missing__(self, name: str) -> Checker:
        checker = self[name] = Checker(type_schema(self._types[name], self._common), owner=name)
        return checker


def _refers_to_assertion(schema: Any) -> bool:
    if isinstance(schema, dict):
        return schema.get("$ref") == ASSERTION_REF or any(_refers_to_assertion(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_refers_to_assertion(v) for v in schema)
    return False


_built: tuple[int, Schemas] | None = None


def schemas() -> Schemas:
    """The checkers for the registry as it is now (built again after a type is registered)."""
    global _built
    types = registry()
    if _built is None or _built[0] != revision():
        _built = (revision(), Schemas(types))
    return _built[1]


@functools.cache
def _known_keys() -> tuple[frozenset[str], frozenset[str]]:
    from omk.schema.parts import sample_properties, turn_def

    return frozenset(sample_properties()), frozenset(turn_def()["properties"])


def _unknown_in(value: dict[str, Any], known: frozenset[str]) -> list[str]:
    if value.keys() <= known:
        return []
    return [k for k in value if k not in known and not (isinstance(k, str) and k.startswith("x-"))]


def unknown_fields(sample: Any) -> list[tuple[Path_, str]]:
    """Fields omk does not know on a sample or on one of its turns, as (path, the field's name).

    They are warnings, not errors, as in omk 0.54: a file written for a newer omk, or with a
    team's own labels, still runs (`--strict` makes them errors). `x-` fields are never reported."""
    if not isinstance(sample, dict):
        return []
    sample_keys, turn_keys = _known_keys()
    found: list[tuple[Path_, str]] = [((k,), k) for k in _unknown_in(sample, sample_keys)]
    turns = sample.get("turns")
    for j, turn in enumerate(turns if isinstance(turns, list) and "turns" in sample_keys else []):
        if isinstance(turn, dict):
            found += [(("turns", j, k), k) for k in _unknown_in(turn, turn_keys)]
    return found


def unknown_field_message(name: str, path: Path_, *, strict: bool) -> str:
    sample_keys, turn_keys = _known_keys()
    hint = did_you_mean(name, turn_keys if len(path) > 1 else sample_keys)
    if strict:
        return f'unknown field "{name}"{hint}'
    own = "" if hint else f' (name your own fields with an "x-" prefix, e.g. "x-{name}")'
    return f'unknown field "{name}"{hint}{own}; ignored'


def _without_unknown(sample: dict[str, Any], unknown: list[tuple[Path_, str]]) -> dict[str, Any]:
    """The sample without its unknown fields, so the schema checks only what omk reads."""
    top = {path[0] for path, _ in unknown if len(path) == 1}
    out = {k: v for k, v in sample.items() if k not in top}
    in_turns = {path[1] for path, _ in unknown if len(path) == 3}
    if in_turns:
        out["turns"] = [
            {k: v for k, v in turn.items() if (("turns", j, k), k) not in unknown} if j in in_turns else turn
            for j, turn in enumerate(sample["turns"])
        ]
    return out


def check_sample(
    sample: Any, seen: Seen | None = None, unknown: list[tuple[Path_, str]] | None = None, fields: FieldsSeen | None = None
) -> Found:
    """Problems in one sample, as (path inside the sample, message). Unknown fields are not
    among them (`unknown_fields` lists those; `unknown`, when given, is what it answered for
    this sample). `seen`, kept by the caller across the samples of a load, remembers the
    verdicts on assertion dicts that samples share (omk.loader.share), `fields` those on the
    sample's own fields."""
    if not isinstance(sample, dict):
        return [((), f"a sample must be a mapping with sample_id and prompt (got {kind_of(sample)})")]
    if unknown is None:
        unknown = unknown_fields(sample)
    if unknown:
        sample = _without_unknown(sample, unknown)
    s = schemas()
    found = [] if s.shell.valid(sample, fields) else s.sample.errors(sample)
    found += _conversation(sample)
    found += _tool_names(sample)
    turns = sample.get("turns")
    turns = [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else None
    assertions = sample.get("assertions")
    if isinstance(assertions, list):
        # In a conversation the sample's assertions run on every turn: their context is each turn's.
        shared = sample if turns is None else {**sample, "context": all(t.get("context") for t in turns) or None}
        mine: Found = []
        _check_assertions(s, assertions, ("assertions",), shared, mine, 0, False, seen)
        if turns is not None:
            mine = [(p, m.replace(_SAMPLE_CONTEXT, 'a "context" on every turn')) for p, m in mine]
        found += mine
    for j, turn in enumerate(sample.get("turns") if turns is not None else []):
        items = turn.get("assertions") if isinstance(turn, dict) else None
        if isinstance(items, list):
            view = {"mocks": sample.get("mocks"), "context": turn.get("context")}
            mine = []
            _check_assertions(s, items, ("turns", j, "assertions"), view, mine, 0, False, seen)
            found += [(p, m.replace(_SAMPLE_CONTEXT, 'the turn\'s "context"')) for p, m in mine]
    return found


def _tool_names(sample: dict[str, Any]) -> Found:
    """Each mock's `tool` and each declared tool's `name` is a name an agent CLI accepts
    (omk.domain.toolnames.name_problem): it may become a stand-in MCP server's name in its configuration."""
    found: Found = []
    for field, key in (("mocks", "tool"), ("tools", "name")):
        items = sample.get(field)
        for i, item in enumerate(items if isinstance(items, list) else []):
            name = item.get(key) if isinstance(item, dict) else None
            if isinstance(name, str) and name.strip() and (why := name_problem(name)) is not None:
                found.append(((field, i, key), why))
    return found


_SAMPLE_CONTEXT = 'the sample\'s "context"'  # rules' wording, said of a turn or of every turn instead


def _conversation(sample: dict[str, Any]) -> Found:
    """A sample has `prompt` or `turns`, not both; a conversation's context belongs to its turns."""
    if "turns" not in sample:
        return [] if "prompt" in sample else [((), '"prompt" is required')]
    found: Found = []
    if "prompt" in sample:
        found.append((("prompt",), 'a sample has either "prompt" or "turns", not both: move this prompt into the first turn'))
    if "context" in sample:
        found.append((("context",), 'a conversation takes its context per turn: move "context" into the turn it belongs to'))
    return found


def _check_assertions(
    s: Schemas, items: list[Any], base: Path_, sample: dict[str, Any], found: Found, depth: int, nested: bool, seen: Seen | None
) -> None:
    memo = seen if depth == 0 and seen is not None else None  # top-level verdicts that hold in any sample
    for index, item in enumerate(items):
        if memo is not None and (known := memo.get(id(item))) is not None and known[0] is item and known[2]:
            continue  # found without a problem before in this load, and nothing in it looks at the sample
        before = len(found)
        _check_assertion(s, item, base + (index,), sample, found, depth, nested, seen)
        if memo is not None and len(found) == before and _alone(s, item, 0):
            memo[id(item)] = (item, [], True)


def _alone(s: Schemas, item: dict[str, Any], depth: int) -> bool:
    """Whether the verdict on `item` (and its children) depends on nothing but `item`: none of
    its types looks at the sample's mocks or context (omk.loader.rules)."""
    kind = s.types.get(item.get("type"))  # type: ignore[arg-type]  # checked: a known type's name
    if kind is None or rules.uses_sample(kind):
        return False
    children = item.get("children") if kind.name in s.with_children else None
    if not isinstance(children, list):
        return True
    return depth < MAX_NESTING and all(isinstance(c, dict) and _alone(s, c, depth + 1) for c in children)


def _check_assertion(
    s: Schemas, item: Any, path: Path_, sample: dict[str, Any], found: Found, depth: int, nested: bool, seen: Seen | None
) -> None:
    if not isinstance(item, dict):
        found.append((path, f"an assertion must be a mapping with a type (got {kind_of(item)})"))
        return
    name = item.get("type")
    if name is None:
        found.append((path, '"type" is required'))
        return
    kind = s.types.get(name) if isinstance(name, str) else None
    if kind is None:
        found.append((path + ("type",), unknown_type(name, s.types)))
        return
    if nested and not kind.nestable:
        found.append((path + ("type",), f'"{name}" is judge-scored and cannot be nested in an assert-set'))
        return
    errors = _schema_errors(s, name, item, seen) or rules.check_assertion(item, kind, sample)
    if errors:
        found.extend((path + p, m) for p, m in errors)
    children = item.get("children") if name in s.with_children else None
    if isinstance(children, list):
        if depth + 1 >= MAX_NESTING:
            found.append((path + ("children",), f"assert-set nesting is too deep (at most {MAX_NESTING} levels)"))
        else:
            _check_assertions(s, children, path + ("children",), sample, found, depth + 1, True, seen)


def _schema_errors(s: Schemas, name: str, item: dict[str, Any], seen: Seen | None) -> Found:
    """The type schema's verdict on `item`, once per load for a dict that samples share."""
    if seen is None:
        return s.by_type[name].errors(item)
    found = seen.get(id(item))
    if found is not None and found[0] is item:
        return found[1]
    errors = s.by_type[name].errors(item)
    if len(seen) >= SEEN_LIMIT:
        seen.clear()
    seen[id(item)] = (item, errors, False)  # holding `item` keeps its id from being reused
    return errors


def check_requires(requires: Any) -> Found:
    return schemas().requires.errors(requires)
