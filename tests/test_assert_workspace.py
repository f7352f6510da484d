"""Workspace checks: file_exists, file_contains, file_json_schema, files_changed and
command_passes (unit tests on a real folder), the change list a workspace gives, and a `cmd:`
agent run end to end with `workspace:` leaving the user's folder untouched."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import run_omk
from helpers import make_ctx, make_spec, run
from loader_helpers import load, one_problem

import omk
from omk.domain.workspace import diff, snapshot
from omk.records import FileChange, SampleResult, Trace, WorkspaceChanges
from omk.samples.model import Status


def ws_check(folder: Path | None, raw: dict, trace: Trace | None = None, **ctx):
    return run(make_spec(raw), make_ctx("", trace, workspace=folder, **ctx))[0]


@pytest.fixture
def work(tmp_path) -> Path:
    folder = tmp_path / "work"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (folder / "out.json").write_text('{"total": 3, "items": ["a"]}', encoding="utf-8")
    return folder


# --- file_exists / file_contains / file_json_schema -------------------------------------------


def test_file_exists_pass_fail_and_not(work):
    assert ws_check(work, {"type": "file_exists", "path": "src/app.py"}).passed
    missing = ws_check(work, {"type": "file_exists", "path": "src/gone.py"})
    assert not missing.passed
    assert missing.message == "src/gone.py does not exist"
    assert ws_check(work, {"type": "file_exists", "path": "src/gone.py", "not": True}).passed
    assert not ws_check(work, {"type": "file_exists", "path": "src"}).passed  # a folder is no file


def test_a_symlink_leading_out_of_the_workspace_is_never_read(work, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN", encoding="utf-8")
    os.symlink(secret, work / "link.txt")
    result = ws_check(work, {"type": "file_contains", "path": "link.txt", "value": "TOKEN"})
    assert not result.passed
    assert "outside the workspace" in result.message


def test_file_contains_value_and_pattern(work):
    assert ws_check(work, {"type": "file_contains", "path": "src/app.py", "value": "RETURN A + B"}).passed  # ignoring case
    assert not ws_check(work, {"type": "file_contains", "path": "src/app.py", "value": "a - b"}).passed
    assert ws_check(work, {"type": "file_contains", "path": "src/app.py", "value": "a - b", "not": True}).passed
    assert ws_check(work, {"type": "file_contains", "path": "src/app.py", "pattern": r"def \w+\(a, b\)"}).passed
    assert not ws_check(work, {"type": "file_contains", "path": "src/app.py", "pattern": "^DEF", "flags": "m"}).passed
    assert ws_check(work, {"type": "file_contains", "path": "src/app.py", "pattern": "^DEF", "flags": "mi"}).passed


def test_file_json_schema(work):
    schema = {"type": "object", "required": ["total"], "properties": {"total": {"type": "integer"}}}
    assert ws_check(work, {"type": "file_json_schema", "path": "out.json", "schema": schema}).passed
    wrong = ws_check(work, {"type": "file_json_schema", "path": "out.json", "schema": {"required": ["missing"]}})
    assert not wrong.passed
    assert "schema violation" in wrong.message
    assert ws_check(work, {"type": "file_json_schema", "path": "out.json", "schema": {"required": ["missing"]}, "not": True}).passed
    bad = ws_check(work, {"type": "file_json_schema", "path": "src/app.py", "schema": {}})
    assert not bad.passed
    assert "src/app.py: file is not valid JSON" in bad.message


def test_without_a_workspace_every_check_is_an_error_even_under_not():
    for raw in (
        {"type": "file_exists", "path": "a"},
        {"type": "file_contains", "path": "a", "value": "x"},
        {"type": "file_json_schema", "path": "a", "schema": {}},
        {"type": "files_changed", "allowed": ["*"]},
        {"type": "command_passes", "value": "true"},
    ):
        for negate in (False, True):
            result = ws_check(None, {**raw, "not": negate})
            assert result.status is Status.FAILED and result.error and "no workspace" in result.message, raw


# --- files_changed ---------------------------------------------------------------------------

CHANGES = Trace(
    workspace=WorkspaceChanges(
        created=(FileChange("tests/test_new.py", 10, "x"),),
        changed=(FileChange("src/app.py", 30, "y"),),
        deleted=(FileChange("old.txt", 4),),
    )
)


def test_files_changed_allowed_and_required():
    assert ws_check(None, {"type": "files_changed", "allowed": ["src/*", "tests/*", "old.txt"]}, CHANGES).passed
    assert ws_check(None, {"type": "files_changed", "required": ["src/app.py"], "allowed": ["*"]}, CHANGES).passed
    outside = ws_check(None, {"type": "files_changed", "allowed": ["src/*"], "required": ["tests/*.py"]}, CHANGES)
    assert not outside.passed
    assert outside.message == "changed outside what may change: old.txt"
    unchanged = ws_check(None, {"type": "files_changed", "required": ["docs/*"], "allowed": ["*"]}, CHANGES)
    assert not unchanged.passed
    assert unchanged.message == "nothing changed matches docs/*"
    assert ws_check(None, {"type": "files_changed", "allowed": ["src/*"], "not": True}, CHANGES).passed
    assert ws_check(None, {"type": "files_changed", "allowed": ["x"]}, Trace(workspace=WorkspaceChanges())).passed


# --- command_passes --------------------------------------------------------------------------


def test_command_passes_runs_in_the_workspace_and_its_exit_code_decides(work):
    script = "import sys, pathlib; sys.exit(0 if pathlib.Path('src/app.py').is_file() else 3)"
    ok = ws_check(work, {"type": "command_passes", "value": f"{sys.executable} -c \"{script}\""})
    assert ok.passed
    assert ok.metric == 0
    failing = f"{sys.executable} -c \"import sys; print('boom'); sys.exit(4)\""
    bad = ws_check(work, {"type": "command_passes", "value": failing})
    assert not bad.passed
    assert bad.metric == 4
    assert bad.message.endswith("exited with code 4: boom")
    assert ws_check(work, {"type": "command_passes", "value": failing, "not": True}).passed


def test_command_passes_timeout_kills_the_group_and_output_is_capped(work):
    sleeper = f"{sys.executable} -c \"import time; time.sleep(30)\""
    slow = ws_check(work, {"type": "command_passes", "value": sleeper, "not": True}, command_timeout_s=0.5)
    assert slow.status is Status.FAILED
    assert slow.error
    assert "timed out after 0.5s" in slow.message
    loud = f"{sys.executable} -c \"print('x' * 5000)\""
    big = ws_check(work, {"type": "command_passes", "value": loud}, max_output_bytes=1000)
    assert big.error
    assert "printed more than 1000 bytes" in big.message


def test_command_output_is_masked(work, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-9f8e7d6c5b4a")
    command = f"{sys.executable} -c \"import os, sys; print(os.environ['MY_SERVICE_TOKEN']); sys.exit(1)\""
    result = ws_check(work, {"type": "command_passes", "value": command})
    assert "tok-9f8e7d6c5b4a" not in result.message
    assert "[redacted]" in result.message


# --- bad input ---------------------------------------------------------------------------------

HEAD = "samples:\n  - sample_id: a\n    prompt: p\n    assertions:\n"


@pytest.mark.parametrize(
    "assertion, field",
    [
        ("      - type: file_exists\n        path: ../outside.txt\n", "path"),
        ("      - type: file_exists\n        path: /etc/passwd\n", "path"),
        ("      - type: file_exists\n", "path"),
        ("      - type: file_contains\n        path: a.txt\n", "value"),
        ("      - type: file_contains\n        path: a.txt\n        value: x\n        pattern: y\n", "value"),
        ("      - type: file_contains\n        path: a.txt\n        pattern: '('\n", "pattern"),
        ("      - type: file_json_schema\n        path: a.json\n        schema: {type: 12}\n", "schema"),
        ("      - type: files_changed\n", "allowed"),
        ("      - type: files_changed\n        allowed: src/*\n", "allowed"),
        ("      - type: command_passes\n        value: \"'unclosed\"\n", "value"),
        ("      - type: command_passes\n", "value"),
    ],
)
def test_bad_input_is_one_line_with_file_line_and_field(tmp_path, assertion, field):
    line = one_problem(tmp_path, HEAD + assertion)
    assert line.startswith("s.yaml:") and line.split(":")[1].isdigit(), line
    assert any(form in line for form in (f".{field}:", f"`{field}`", f'"{field}" is required')), line


def test_a_workspace_outside_the_project_or_missing_is_a_load_error(tmp_path):
    (tmp_path / "project").mkdir()
    line = one_problem(tmp_path / "project", "samples:\n  - sample_id: a\n    prompt: p\n    workspace: ../\n")
    assert line.startswith("s.yaml:4: samples[0] (a) workspace: refused:") and "outside the project" in line, line
    line = one_problem(tmp_path / "project", "samples:\n  - sample_id: a\n    prompt: p\n    workspace: nowhere\n")
    assert line.startswith("s.yaml:4: samples[0] (a) workspace: workspace folder not found"), line
    (tmp_path / "project" / "ws").mkdir()
    loaded = load(tmp_path / "project", "ok.yaml", "samples:\n  - sample_id: a\n    prompt: p\n    workspace: ws\n")
    assert loaded.samples[0].workspace == "ws"


# --- the change list ---------------------------------------------------------------------------


def test_diff_lists_created_changed_and_deleted_files_with_capped_masked_text(work):
    before = snapshot(work)
    (work / "src" / "app.py").write_text("changed SECRET-VALUE-123\n" + "z" * 5000, encoding="utf-8")
    (work / "out.json").unlink()
    (work / "new.bin").write_bytes(b"\x00\x01binary")
    changes = diff(before, snapshot(work), work, lambda text: text.replace("SECRET-VALUE-123", "[redacted]"))
    assert [c.path for c in changes.created] == ["new.bin"]
    assert changes.created[0].content is None
    (changed,) = changes.changed
    assert changed.path == "src/app.py"
    assert changed.size == len("changed SECRET-VALUE-123\n") + 5000
    assert changed.content.startswith("changed [redacted]")
    assert changed.truncated
    assert len(changed.content) == 2000
    assert [(c.path, c.size, c.content) for c in changes.deleted] == [("out.json", 28, None)]
    again = SampleResult.read(json.loads(json.dumps(SampleResult("s", "ok", "p", trace=Trace(workspace=changes)).to_json())))
    assert again.trace.workspace == changes


# --- cmd: with workspace: end to end -----------------------------------------------------------

AGENT = textwrap.dedent(
    """
    import json, pathlib, sys
    request = json.loads(sys.stdin.readline())
    pathlib.Path("notes.md").write_text("# Notes\\nfixed the bug\\n")
    app = pathlib.Path("src/app.py")
    app.write_text(app.read_text().replace("a + b", "a + b  # checked"))
    pathlib.Path("stale.txt").unlink()
    print(json.dumps({"type": "response", "output": "done in " + str(pathlib.Path.cwd())}))
    """
)


def test_cmd_with_workspace_works_on_a_copy_and_leaves_the_users_folder_untouched(tmp_path):
    project = tmp_path / "project"
    (project / "repo" / "src").mkdir(parents=True)
    (project / "repo" / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (project / "repo" / "stale.txt").write_text("old", encoding="utf-8")
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    before = {p: p.read_bytes() for p in (project / "repo").rglob("*") if p.is_file()}
    sample = {
        "sample_id": "fix",
        "prompt": "fix it",
        "workspace": "repo",
        "assertions": [
            {"type": "file_contains", "path": "notes.md", "value": "fixed the bug"},
            {"type": "file_contains", "path": "src/app.py", "pattern": "# checked$", "flags": "m"},
            {"type": "files_changed", "allowed": ["notes.md", "stale.txt"], "required": ["src/*.py"]},
            {"type": "command_passes", "value": "python -c \"import pathlib, sys; sys.exit(pathlib.Path('stale.txt').exists())\""},
            {"type": "file_exists", "path": "stale.txt", "not": True},
        ],
    }
    (project / "s.yaml").write_text(json.dumps({"samples": [sample]}), encoding="utf-8")
    report = omk.evaluate(project / "s.yaml", target=f"cmd:{sys.executable} {project / 'agent.py'}", judge=False, cache=False, cwd=project)
    (result,) = report.results
    assert result.status == "ok", result.error
    assert [(a.type, a.status) for a in result.assertions] == [(a["type"], Status.PASSED) for a in sample["assertions"]], [
        a.message for a in result.assertions
    ]
    changes = result.trace.workspace
    assert [c.path for c in changes.created] == ["notes.md"]
    assert changes.created[0].content == "# Notes\nfixed the bug\n"
    assert [c.path for c in changes.changed] == ["src/app.py"]
    assert [c.path for c in changes.deleted] == ["stale.txt"]
    ran_in = Path(result.output.removeprefix("done in "))
    assert ran_in != project / "repo"
    assert not ran_in.exists()  # a fresh folder, removed after the checks
    assert {p: p.read_bytes() for p in (project / "repo").rglob("*") if p.is_file()} == before
    assert not (project / "notes.md").exists()


def test_every_format_shows_the_files_and_the_aligned_sequence(tmp_path):
    import io

    from rich.console import Console

    from omk.report.terminal import print_summary

    project = tmp_path / "project"
    (project / "repo" / "src").mkdir(parents=True)
    (project / "repo" / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (project / "repo" / "stale.txt").write_text("old", encoding="utf-8")
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    sample = {
        "sample_id": "fix",
        "prompt": "fix it",
        "workspace": "repo",
        "assertions": [
            {"type": "files_changed", "allowed": ["src/*"]},
            {"type": "tool_sequence", "steps": ["Read", "Edit"]},
        ],
    }
    (project / "s.yaml").write_text(json.dumps({"samples": [sample]}), encoding="utf-8")
    out = tmp_path / "run"
    report = omk.evaluate(
        project / "s.yaml", target=f"cmd:{sys.executable} {project / 'agent.py'}", judge=False, cache=False, cwd=project, out=out, formats=["md", "html"]
    )
    assert not report.results[0].passed
    console = Console(file=io.StringIO(), width=160, color_system=None, highlight=False)
    print_summary(report.to_dict(), console)
    terminal = console.file.getvalue()
    assert "workspace: created notes.md (22 B); changed src/app.py (43 B); deleted stale.txt (3 B)" in terminal
    assert "changed outside what may change: notes.md, stale.txt" in terminal
    assert "tool calls differ from the steps (exact) at step 1\n         expected  actual\n      >  Read      —\n         Edit      —\n" in terminal
    markdown = (out / "summary.md").read_text(encoding="utf-8")
    # a column of its own beside the reasons (the column's head says "workspace")
    assert "| workspace |" in markdown
    assert "| created notes.md (22 B); changed src/app.py (43 B); deleted stale.txt (3 B) |" in markdown
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'class="ws-file ws-created"' in page
    assert "<code>notes.md</code>" in page
    assert "fixed the bug" in page
    assert '<pre class="assert-detail">' in page


SPARSE_AGENT = """\
import json, os, sys
sys.stdin.readline()
with open("huge.bin", "wb") as f:  # a sparse file of 3 GB: no disk, but 3 GB to whoever reads it whole
    f.truncate(3 * 1024**3)
with open("src/app.py", "a", encoding="utf-8") as f:
    f.write("# touched\\n")
print(json.dumps({"type": "response", "output": "done"}))
"""


def test_a_huge_file_the_agent_leaves_is_never_read_whole(tmp_path, work):
    """The listing after an agent call hashes files in pieces within a cap: a 3 GB sparse file is
    compared by size and time (the notes say so), and omk's peak memory stays small."""
    import subprocess

    project = tmp_path
    (project / "agent.py").write_text(SPARSE_AGENT, encoding="utf-8")
    samples = {"samples": [{"sample_id": "big", "prompt": "p", "workspace": "work",
                            "assertions": [{"type": "files_changed", "required": ["src/app.py", "huge.bin"]}]}]}  # fmt: skip
    (project / "s.json").write_text(json.dumps(samples), encoding="utf-8")
    # omk runs under a small parent that reports its child's peak alone (this process's own
    # children, earlier tests' included, would count toward RUSAGE_CHILDREN here)
    measure = (
        "import resource, subprocess, sys; "
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    # not run_omk: omk runs under a small parent that reads its peak memory
    proc = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "omk", "eval", "s.json", "--target",
         f"cmd:{sys.executable} {project / 'agent.py'}", "--no-judge", "--no-cache", "--out", "run", "--format", "json"],
        cwd=project, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    code, peak_kib = map(int, proc.stdout.split())
    assert code == 0, proc.stderr
    assert peak_kib < 1024 * 1024, f"omk's peak memory was {peak_kib / 1024:.0f} MiB"  # a whole read is 3 GiB
    result = json.loads((project / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    created = [c["path"] for c in result["trace"]["workspace"]["created"]]
    assert created == ["huge.bin"]
    assert any("huge.bin" in n and "not read" in n for n in result["trace"]["notes"])


def test_the_files_an_agent_left_are_a_fact_beside_its_failures_not_a_failed_check(tmp_path, work):
    """The terminal's failure block lists failed checks as bullets; what the agent left in its
    workspace is a line of its own under them, not one more bullet."""

    agent = SPARSE_AGENT.replace('f.truncate(3 * 1024**3)', 'f.write(b"x")')
    (tmp_path / "agent.py").write_text(agent, encoding="utf-8")
    samples = {"samples": [{"sample_id": "w", "prompt": "p", "workspace": "work",
                            "assertions": [{"type": "contains", "value": "never said"}]}]}  # fmt: skip
    (tmp_path / "s.json").write_text(json.dumps(samples), encoding="utf-8")
    proc = run_omk(
        "eval", "s.json", "--target", f"cmd:{sys.executable} {tmp_path / 'agent.py'}", "--no-judge", "--no-cache", "--out", "run",
        cwd=tmp_path, base={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.strip().startswith("- contains 'never said'") for line in lines), proc.stdout
    where = [line for line in lines if "workspace:" in line]
    assert where and all(line.startswith("    workspace: created huge.bin") for line in where), where
