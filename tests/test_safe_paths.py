"""A mock's `return_file` and a custom hook's `fn` stay inside the project folder (the samples
file's folder) unless omk.yaml's `allow_paths` names another folder; `../`, absolute paths and
symlinks out are refused at load (exit 2, file, line, field); special files are never read, as a
sample file or a mock's output."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from loader_helpers import load, problems

from omk.model import Sample
from omk.safe_files import UnsafeFile, read_regular_bytes
from omk.targets.mocks import MockSandbox

HEAD = "samples:\n  - sample_id: a\n    prompt: p\n"
HOOK = "def check(output, ctx):\n    return True\n"


def mock_sample(name: str) -> str:
    return HEAD + f"    mocks:\n      - {{tool: t, return_file: '{name}'}}\n"


def hook_sample(name: str) -> str:
    return HEAD + f"    assertions:\n      - {{type: custom, fn: '{name}'}}\n"


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    """A folder beside the project with a secret file and a hook in it."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret", encoding="utf-8")
    (folder / "hook.py").write_text(HOOK, encoding="utf-8")
    return folder


@pytest.mark.parametrize("make", [mock_sample, hook_sample])
@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "home"])
def test_a_path_that_leaves_the_project_is_refused_with_file_line_and_field(tmp_path, outside, make, kind):
    project = tmp_path / "project"
    project.mkdir()
    target = "secret.txt" if make is mock_sample else "hook.py"
    if kind == "dotdot":
        name = f"../elsewhere/{target}"
    elif kind == "absolute":
        name = str(outside / target)
    elif kind == "symlink":
        (project / "link").symlink_to(outside)
        name = f"link/{target}"
    else:  # a mock expands ~ (as 0.54 did); a hook does not, and `~/…` is then a folder named ~
        name = f"~/../../{outside.relative_to('/')}/{target}"
    [line] = problems(project, "s.yaml", make(name))
    field = "mocks[0].return_file" if make is mock_sample else "assertions[0].fn"
    escaped = outside / target if (kind != "home" or make is mock_sample) else project.parent / outside.relative_to("/") / target
    assert line.startswith(f"s.yaml:5: samples[0] (a) {field}: refused: {escaped} is outside the project folder {project}")
    assert line.endswith("allow its folder with allow_paths in omk.yaml")


def test_allow_paths_in_omk_yaml_opens_a_folder(tmp_path, outside):
    project = tmp_path / "project"
    project.mkdir()
    (project / "omk.yaml").write_text("allow_paths:\n  - ../elsewhere\n", encoding="utf-8")
    loaded = load(project, "s.yaml", mock_sample("../elsewhere/secret.txt"))
    assert [s.sample_id for s in loaded.samples] == ["a"]
    loaded = load(project, "h.yaml", hook_sample(str(outside / "hook.py")))
    assert [s.sample_id for s in loaded.samples] == ["a"]


def test_an_omk_yaml_elsewhere_does_not_widen_the_project(tmp_path, outside, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "omk.yaml").write_text("allow_paths: [elsewhere]\n", encoding="utf-8")  # the parent's, not the project's
    monkeypatch.chdir(tmp_path)
    [line] = problems(project, "s.yaml", mock_sample("../elsewhere/secret.txt"))
    assert "refused:" in line


def test_inside_paths_and_symlinks_that_stay_inside_are_fine(tmp_path):
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "order.json").write_text('{"ok": true}', encoding="utf-8")
    (tmp_path / "alias").symlink_to(tmp_path / "fixtures")
    loaded = load(tmp_path, "s.yaml", mock_sample("alias/../fixtures/order.json"))
    assert len(loaded.samples) == 1
    loaded = load(tmp_path, "t.yaml", mock_sample("alias/order.json"))
    assert len(loaded.samples) == 1


@pytest.mark.parametrize("name", ["/proc/self/environ", "/dev/zero", "/dev/stdin", "/sys/kernel/hostname"])
def test_special_files_are_refused_even_when_allowed(tmp_path, name):
    (tmp_path / "omk.yaml").write_text("allow_paths: [/]\n", encoding="utf-8")
    [line] = problems(tmp_path, "s.yaml", mock_sample(name))
    assert "mocks[0].return_file: refused: " in line and "is a system file (/proc, /sys, /dev)" in line


def test_a_fifo_is_refused_at_load_and_never_read_at_run_time(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    [line] = problems(tmp_path, "s.yaml", mock_sample("pipe.txt"))
    assert line == "s.yaml:5: samples[0] (a) mocks[0].return_file: refused: pipe.txt is not a regular file (a FIFO, socket or device)"
    # a FIFO put in place after loading: the sandbox answers with an error instead of blocking
    sandbox = MockSandbox.for_sample(Sample("a", "p", base_dir=tmp_path, mocks=[{"tool": "t", "return_file": "pipe.txt"}]))
    answer = asyncio.run(asyncio.wait_for(sandbox.answer("t", {}), 5))
    assert answer.text.startswith("[omk-mock-error] return_file refused:") and "FIFO" in answer.text


def test_read_regular_bytes_caps_and_refuses(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 1001)
    with pytest.raises(UnsafeFile, match="larger than the 1000 bytes"):
        read_regular_bytes(big, 1000)
    assert read_regular_bytes(big, 2000) == b"x" * 1001
    with pytest.raises(UnsafeFile, match="system file"):
        read_regular_bytes(Path("/dev/zero"), 1000)


@pytest.mark.parametrize("given", ["/dev/zero", "/proc/self/environ", "FIFO"])
def test_a_special_file_given_as_samples_is_a_clear_error(tmp_path, given):
    if given == "FIFO":
        os.mkfifo(tmp_path / "samples.yaml")
        given = str(tmp_path / "samples.yaml")
    for command in (["eval", given, "--target", "replay:x.jsonl", "--out", str(tmp_path / "run")], ["doctor", given]):
        proc = subprocess.run([sys.executable, "-m", "omk", *command], cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and "cannot read the file:" in proc.stderr


def test_a_refused_return_file_stops_omk_eval_with_exit_2(tmp_path, outside):
    project = tmp_path / "project"
    project.mkdir()
    (project / "s.yaml").write_text(mock_sample("../elsewhere/secret.txt"), encoding="utf-8")
    (project / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x"}) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "omk", "eval", "s.yaml", "--target", "replay:r.jsonl", "--out", str(tmp_path / "run")],
        cwd=project, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("s.yaml:5: samples[0] (a) mocks[0].return_file: refused:")
    assert not (tmp_path / "run" / "report.json").exists()
