"""Every type's declared schema: valid JSON Schema that accepts good fields and rejects bad ones."""

from __future__ import annotations

import subprocess
import sys

import jsonschema
import pytest

from omk.assertions import registry

TYPES = sorted(registry.registry())


@pytest.mark.parametrize("name", TYPES)
def test_schema_is_valid_json_schema_and_type_is_documented(name):
    kind = registry.get(name)
    jsonschema.Draft202012Validator.check_schema(kind.schema)
    assert kind.description, f"{name} has no one-line docstring"
    for field in kind.schema.get("required", []):
        assert field in kind.schema.get("properties", {}), (name, field)


def valid(name: str, fields: dict) -> bool:
    schema = {**registry.get(name).schema, "$defs": {"assertion": {"type": "object"}}}
    return jsonschema.Draft202012Validator(schema).is_valid(fields)


@pytest.mark.parametrize(
    ("name", "fields", "ok"),
    [
        ("contains", {"value": "SQL 注入"}, True),  # CJK and spaces in a value are fine
        ("contains", {"value": 3}, True),  # a number value is compared as its text
        ("contains", {"value": ""}, False),
        ("contains", {}, False),
        ("contains_all", {"values": []}, False),
        ("contains_all", {"values": ["a", ""]}, False),
        ("regex", {"pattern": "a", "flags": "gi"}, True),
        ("regex", {}, False),
        ("min_length", {"value": -1}, False),
        ("max_length", {"value": "5"}, False),
        ("json_schema", {"schema": {"type": "object"}}, True),
        ("json_schema", {"schema": "object"}, False),
        ("rouge_n_min", {"reference": "r", "n": 2, "threshold": 0.3}, True),
        ("rouge_n_min", {"value": "r"}, False),  # the reference is `reference`, never `value`
        ("rouge_n_min", {"threshold": 0.3}, False),
        ("rouge_n_min", {"reference": "r", "n": 10}, False),
        ("rouge_n_min", {"reference": "r", "n": 0}, False),
        ("rouge_n_min", {"reference": "r", "threshold": 1.5}, False),
        ("bleu_min", {"reference": "r", "smooth": True}, True),
        ("bleu_min", {"reference": "r", "smooth": "yes"}, False),
        ("levenshtein_max", {"reference": "r", "value": 3}, True),
        ("levenshtein_max", {"reference": "r"}, False),
        ("tool_output_contains", {"value": "Read:x"}, True),
        ("tool_output_contains", {"value": ":x"}, False),
        ("tool_input_contains", {"value": "Bash"}, False),
        ("mock_hit", {"value": "Read:1", "threshold": 2}, True),
        ("mock_hit", {"value": "Read:0"}, False),
        ("mock_hit", {"value": "Read"}, False),
        ("tools_called", {"values": ["Bash"]}, True),
        ("tools_called", {"values": "Bash"}, False),
        ("custom", {"fn": "checks/tone.py", "extra": 1}, True),
        ("custom", {}, False),
        ("semantic_similarity", {"reference": "r", "threshold": 4}, True),
        ("semantic_similarity", {"reference": "r", "threshold": 0.5}, False),
        ("answer_relevancy", {"uncertainty_weight": 0.3, "scale": 1}, True),
        ("answer_relevancy", {"uncertainty_weight": 2}, False),
    ],
)
def test_schemas_accept_and_reject(name, fields, ok):
    assert valid(name, fields) is ok


def test_importing_the_registry_does_not_import_heavy_metric_libraries():
    code = (
        "import sys; from omk.assertions import registry; registry.registry(); "
        "print(sorted(m for m in ('rouge_score', 'sacrebleu', 'numpy', 'nltk', 'jsonschema') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_check_gets_each_run_setting_in_the_context_field_of_its_name():
    """`grade` makes the checks' context by position (it does so for every output): each setting
    of the run, a different value per field, reaches the field of its name."""
    import asyncio
    from pathlib import Path
    from types import SimpleNamespace

    from omk.records import Trace
    from omk.runner.grading import RunConfig, grade
    from omk.samples.model import AssertionSpec, Layer, Outcome, Sample, Turn

    seen = []

    @registry.assertion("context_probe", layer=Layer.FACT)
    def probe(spec, ctx):
        seen.append(ctx)
        return Outcome(True)

    try:
        judge, hooks = SimpleNamespace(failure=lambda ctx, block: None), SimpleNamespace()
        cfg = RunConfig(timeout=7.0, regex_timeout=3.0, judge=judge, no_judge="why", hooks=hooks, skills=("s",), max_output_bytes=99)
        sample = Sample(sample_id="s1", prompt="p", assertions=[AssertionSpec("context_probe", {"type": "context_probe"})])
        trace, turn, history = Trace(turns=1), Turn(prompt="t"), [("a", "b")]
        asyncio.run(grade(sample, "out", trace, cfg, turn=turn, history=history, workspace=SimpleNamespace(folder=Path("/w"))))
    finally:
        registry.remove("context_probe")
    ctx = seen[0]
    assert (ctx.output, ctx.trace, ctx.sample, ctx.judge, ctx.no_judge, ctx.hooks) == ("out", trace, sample, judge, "why", hooks)
    assert (ctx.regex_timeout_s, ctx.skills, ctx.turn, ctx.history) == (3.0, ("s",), turn, history)
    assert (ctx.workspace, ctx.command_timeout_s, ctx.max_output_bytes) == (Path("/w"), 7.0, 99)
