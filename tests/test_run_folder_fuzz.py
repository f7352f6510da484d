"""A hand-edited run folder resumes or is refused in located lines, never with a traceback.

Hypothesis edits a real run folder (one `omk eval` with a `cmd:` agent whose results carry tool
calls): any field of a results.jsonl line, or of run.json, replaced by a value of another type or
removed, then `omk eval --resume` runs in this process, so an exception that escapes fails here."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from cli_support import run_omk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omk.cli.main import main

AGENT = """\
import json, sys
sys.stdin.read()
print(json.dumps({"type": "tool_call", "tool": "Read", "input": {"file_path": "a.txt"}, "output": "text"}))
print(json.dumps({"response": "hi there", "cost_usd": 0.001, "tokens": {"input": 3, "output": 2}}))
"""
SAMPLES = """\
samples:
  - { sample_id: a, prompt: hi, assertions: [{ type: contains, value: hi }, { type: tool_sequence, steps: [Read] }] }
  - { sample_id: b, prompt: hi, assertions: [{ type: contains, value: nope }] }
"""
TARGET = f"cmd:{sys.executable} agent.py"
DROP = "<drop>"
values = st.one_of(
    st.sampled_from([DROP, None, True, 0, -1, 2.5, 10**30, float("nan"), "", "x", [], [1], {}, {"x": 1}]),
    st.text(max_size=6),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=2),
)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("project")
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    (project / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    proc = run_omk(
        "eval", "s.yaml", "--target", TARGET, "--out", "run", "--no-cache", "--quiet",
        cwd=project, base=env, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # b fails its check
    return project


def leaves(value, path=()):
    yield path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from leaves(child, (*path, key))


def edit(data, path, new):
    data = json.loads(json.dumps(data))
    node = data
    for key in path[:-1]:
        node = node[key]
    if new == DROP:
        node.pop(path[-1])
    else:
        node[path[-1]] = new
    return data


def resume(project: Path) -> tuple[int, str]:
    err = io.StringIO()
    here = Path.cwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["eval", "--resume", "run", "--target", TARGET, "s.yaml", "--no-cache", "--quiet"])
    finally:
        os.chdir(here)
    return code, err.getvalue()


def copy(base: Path) -> Path:
    project = Path(tempfile.mkdtemp(prefix="omk-fuzz-"))
    shutil.copytree(base, project, dirs_exist_ok=True)
    manifest_file = project / "run" / "run.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    manifest["cwd"] = str(project)  # the copy's own folder, as if it had run there
    manifest["samples_files"] = [str(project / "s.yaml")]
    manifest_file.write_text(json.dumps(manifest), encoding="utf-8")
    return project


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_results_line_edited_anywhere_is_dropped_with_its_line_or_read(base, data):
    project = copy(base)
    try:
        results = project / "run" / "results.jsonl"
        lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
        number = data.draw(st.integers(0, len(lines) - 1))
        path = data.draw(st.sampled_from([p for p, _ in leaves(lines[number]) if p]))
        lines[number] = edit(lines[number], path, data.draw(values))
        results.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        code, stderr = resume(project)
        assert code in (0, 1), stderr
        for line in stderr.splitlines():
            if "results.jsonl:" in line:
                assert line.split("results.jsonl:", 1)[1][:1].isdigit(), line  # FILE:LINE: field: what
        report = json.loads((project / "run" / "report.json").read_text(encoding="utf-8"))
        assert sorted(r["sample_id"] for r in report["results"]) == ["a", "b"]
    finally:
        shutil.rmtree(project, ignore_errors=True)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_run_json_edited_anywhere_resumes_or_is_refused_in_located_lines(base, data):
    project = copy(base)
    try:
        manifest_file = project / "run" / "run.json"
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        path = data.draw(st.sampled_from([p for p, _ in leaves(manifest) if p]))
        manifest_file.write_text(json.dumps(edit(manifest, path, data.draw(values))), encoding="utf-8")
        (project / "run" / "results.jsonl").write_text("", encoding="utf-8")  # so the run goes on
        code, stderr = resume(project)
        assert code in (0, 1, 2), stderr
        if code == 2:
            assert stderr.strip() and all(line.strip() for line in stderr.strip().splitlines()), stderr
    finally:
        shutil.rmtree(project, ignore_errors=True)
