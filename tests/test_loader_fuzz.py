"""No input gives a traceback: random documents load or raise InputError, nothing else."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omk.core.errors import InputError
from omk.loader import load_samples
from omk.store.cache import cache_key

KEYS = ["sample_id", "prompt", "assertions", "type", "value", "values", "weight", "not", "layer", "children",
        "mocks", "tool", "return", "mode", "pattern", "schema", "reference", "context", "dimensions", "x",
        "steps", "input", "path", "skill", "command", "timeout", "required", "forbidden", "workspace", "gold"]
TYPES = ["contains", "regex", "assert-set", "mock_hit", "json_schema", "faithfulness", "custom", "max_length", "nope",
         "tool_sequence", "skill_used", "file_contains", "file_exists", "files_changed", "command_passes", "tools_only",
         "match_tool_call"]  # fmt: skip

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TYPES), st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
    max_leaves=30,
)


# Paths a hostile sample names: system files, a FIFO beside the samples file, the home folder,
# ways out of the project, names the OS refuses.
PATHS = ["/proc/self", "/proc/self/environ", "/dev/zero", "/dev", "pipe", "~", "~/.ssh", "..", "../x", "/", ".",
         "", " ", "a\x00b", "x" * 300, "s.yaml", "environ"]
paths = st.one_of(st.sampled_from(PATHS), scalars)
NEVER_READ = ["/dev/zero", "pipe", "/proc/self/environ", "~/.ssh/id_rsa"]  # each would hang, fill memory or leak if read


def _load(name: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.mkfifo(Path(tmp) / "pipe")  # named by PATHS: nothing may open it
        path = Path(tmp) / name
        path.write_text(text, encoding="utf-8")
        try:
            loaded = load_samples([path])
        except InputError as exc:
            assert exc.lines()
            assert all(isinstance(line, str) for line in exc.lines())
            return
        for sample in loaded.samples:  # the cache key reads the files a sample's mocks name
            assert len(cache_key({"kind": "fuzz"}, sample, "p")) == 64


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_random_json_documents(doc):
    _load("s.json", json.dumps(doc, allow_nan=True))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_random_yaml_documents(doc):
    _load("s.yaml", yaml.safe_dump(doc, allow_unicode=True))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("[]{}:,-&*!|>'\"# \n\tab1.~?<")), max_size=60))
def test_random_yaml_text(text):
    _load("s.yaml", text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(values, min_size=1, max_size=3))
def test_random_json_lines(records):
    _load("s.samples.jsonl", "\n".join(json.dumps(r, allow_nan=True) for r in records))


# tool_sequence steps: a tool name, or {tool, input} with glob, pattern or nested values
steps = st.lists(
    st.one_of(scalars, st.fixed_dictionaries({}, optional={"tool": scalars, "input": st.one_of(
        scalars, st.dictionaries(st.sampled_from(["file_path", "command", "pattern"]), st.one_of(
            scalars, st.fixed_dictionaries({}, optional={"pattern": scalars, "glob": scalars})), max_size=2))})),
    max_size=3,
)  # fmt: skip
new_fields = {"steps": st.one_of(steps, scalars), "path": paths, "skill": scalars, "command": scalars,
              "required": st.one_of(st.lists(paths, max_size=2), scalars), "timeout": scalars}  # fmt: skip
assertions = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(TYPES)}, optional={**{k: scalars for k in KEYS[4:16]}, **new_fields}),
    lambda inner: st.fixed_dictionaries({"type": st.just("assert-set"), "children": st.lists(inner, max_size=3)}),
    max_leaves=10,
)
path_mocks = st.one_of(
    st.fixed_dictionaries({"tool": st.just("t"), "return_file": st.sampled_from(PATHS)}),
    st.fixed_dictionaries({"tool": st.just("t"), "return": st.fixed_dictionaries({"return_file": st.sampled_from(NEVER_READ)})}),
)
mocks = st.one_of(st.dictionaries(st.sampled_from(["tool", "return", "match"]), scalars), path_mocks)
samples = st.lists(
    st.fixed_dictionaries(
        {"sample_id": st.sampled_from(["a", "b", ""]), "prompt": st.sampled_from(["p", " "])},
        optional={
            "assertions": st.lists(assertions, max_size=4),
            "mocks": st.lists(mocks, max_size=2),
            "context": scalars,
            "cwd": paths,
            "workspace": paths,
            "gold": scalars,
            "environment": st.one_of(scalars, st.fixed_dictionaries({}, optional={"files_available": st.one_of(paths, st.lists(paths, max_size=3))})),
        },
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples)
def test_random_near_valid_samples(doc):
    _load("s.yaml", yaml.safe_dump(doc, allow_unicode=True))
    _load("s.json", json.dumps({"samples": doc}, allow_nan=True))


# Valid samples apart from the paths they name: whatever loads, the cache key of it is computed
# without opening a FIFO or reading a device (a `return_file` inside a mock's value is data).
hostile_paths = st.fixed_dictionaries(
    {"sample_id": st.just("s"), "prompt": st.just("p"), "mocks": st.lists(path_mocks, min_size=1, max_size=2)},
    optional={
        "cwd": st.sampled_from(PATHS),
        "workspace": st.sampled_from(PATHS),
        "assertions": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["file_contains", "file_exists"]), "path": st.sampled_from(PATHS)},
                                                     optional={"value": st.just("x")}), max_size=2),
        "environment": st.fixed_dictionaries({"files_available": st.lists(st.sampled_from(PATHS), max_size=3)}),
    },
).map(lambda sample: [sample])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_paths)
def test_random_paths_in_valid_samples(doc):
    _load("s.yaml", yaml.safe_dump(doc, allow_unicode=True))
