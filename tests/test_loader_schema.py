"""The shipped JSON Schema: up to date, valid, and in agreement with the loader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from omk.assertions.registry import registry
from omk.schema.build import SCHEMA_FILE, build_schema, main, render

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_schema_is_up_to_date():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render(), "run: python -m omk.schema.build"


def test_check_mode_exit_codes(tmp_path, capsys):
    stale = tmp_path / "schema.json"
    stale.write_text("{}", encoding="utf-8")
    assert main(["--check", "--out", str(stale)]) == 1
    assert main(["--out", str(stale)]) == 0
    assert main(["--check", "--out", str(stale)]) == 0
    assert json.loads(stale.read_text(encoding="utf-8")) == build_schema()


def test_module_entry_point_checks_the_shipped_file():
    proc = subprocess.run([sys.executable, "-m", "omk.schema.build", "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_schema_is_valid_2020_12_and_lists_every_type():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assertion = schema["$defs"]["assertion"]
    assert assertion["properties"]["type"]["enum"] == list(registry())
    assert len(assertion["allOf"]) == len(registry())
    assert assertion["unevaluatedProperties"] is False


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def test_bundled_samples_validate_against_the_shipped_schema(validator):
    data = yaml.safe_load((ROOT / "samples" / "eval-samples.yaml").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(data)) == []


@pytest.mark.parametrize(
    "bad",
    [
        {"sample_id": "a", "prompt": "p", "asertions": []},
        {"sample_id": "a", "prompt": "p", "assertions": [{"type": "containz", "value": "x"}]},
        {"sample_id": "a", "prompt": "p", "assertions": [{"type": "contains"}]},
        {"sample_id": "a", "prompt": "p", "assertions": [{"type": "contains", "value": "x", "weight": 0}]},
        {"sample_id": "a", "prompt": "p", "assertions": [{"type": "regex", "pattern": "x", "flag": "i"}]},
        {"sample_id": "a", "prompt": "p", "assertions": [{"type": "assert-set", "children": [{"type": "contains"}]}]},
        {"sample_id": "a", "prompt": "p", "mocks": [{"tool": "Read"}]},
    ],
)
def test_shipped_schema_rejects_what_the_loader_rejects(validator, bad):
    assert list(validator.iter_errors([bad]))


def test_shipped_schema_accepts_custom_fields_for_custom_hooks(validator):
    sample = {"sample_id": "a", "prompt": "p", "assertions": [{"type": "custom", "fn": "c.py", "tone": "calm"}]}
    assert list(validator.iter_errors([sample])) == []


def test_docs_list_every_assertion_type():
    text = (ROOT / "docs" / "samples.md").read_text(encoding="utf-8")
    missing = [name for name in registry() if f"| `{name}` |" not in text]
    assert missing == [], "add these types to the table in docs/samples.md"


def test_the_fast_check_keeps_const_a_keyword_and_a_property_called_const_a_name():
    from omk.loader.validate import Checker

    checker = Checker(
        {
            "type": "object",
            "properties": {"const": {"const": "yes"}, "kind": {"const": 2}},
            "additionalProperties": False,
        }
    )
    assert checker.errors({"const": "yes", "kind": 2}) == []
    assert checker.errors({"const": "no"})  # the fast check said no, so jsonschema worded why
    assert checker.errors({"kind": 3})
    assert checker.errors({"other": 1})
    both = Checker({"const": 3, "enum": [1, 2, 3]})
    assert both.errors(3) == []
    assert both.errors(1)
    data = Checker({"enum": [{"const": 1}]})  # an enum value is data, not a schema to rewrite
    assert data.errors({"const": 1}) == []
    assert data.errors({"enum": [1]})
