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
from cli_support import run_omk
from loader_helpers import load, problems

from omk.io.safe_files import UnsafeFile, read_regular_bytes
from omk.samples.model import Sample
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
    assert "mocks[0].return_file: refused: " in line
    assert "is a system file (/proc, /sys, /dev)" in line


def test_a_fifo_is_refused_at_load_and_never_read_at_run_time(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    [line] = problems(tmp_path, "s.yaml", mock_sample("pipe.txt"))
    assert line == "s.yaml:5: samples[0] (a) mocks[0].return_file: refused: pipe.txt is not a regular file (a FIFO, socket or device)"
    # a FIFO put in place after loading: the sandbox answers with an error instead of blocking
    sandbox = MockSandbox.for_sample(Sample("a", "p", base_dir=tmp_path, mocks=[{"tool": "t", "return_file": "pipe.txt"}]))
    answer = asyncio.run(asyncio.wait_for(sandbox.answer("t", {}), 5))
    assert answer.text.startswith("[omk-mock-error] return_file refused:")
    assert "FIFO" in answer.text


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
        proc = run_omk(*command, cwd=tmp_path, drop=(), columns=None, timeout=30)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "cannot read the file:" in proc.stderr


def test_a_refused_return_file_stops_omk_eval_with_exit_2(tmp_path, outside):
    project = tmp_path / "project"
    project.mkdir()
    (project / "s.yaml").write_text(mock_sample("../elsewhere/secret.txt"), encoding="utf-8")
    (project / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x"}) + "\n", encoding="utf-8")
    proc = run_omk(
        "eval", "s.yaml", "--target", "replay:r.jsonl", "--out", str(tmp_path / "run"),
        cwd=project, drop=(), columns=None, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("s.yaml:5: samples[0] (a) mocks[0].return_file: refused:")
    assert not (tmp_path / "run" / "report.json").exists()


# --- every path a sample names, wherever it sits ------------------------------------------------

AGENT = (
    "import json, sys\n"
    "json.loads(sys.stdin.readline())\n"
    "with open('calls.log', 'a') as log:\n"
    "    log.write('call\\n')\n"
    "print(json.dumps({'type': 'response', 'output': 'done'}))\n"
)


def _limited_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, 3 * 1024**3))  # a read of /dev/zero ends in MemoryError, not a stuck machine


def omk_eval(project: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    if home is not None:
        env["HOME"] = str(home)
    return run_omk(
        "eval", "s.yaml", "--out", str(project / "run"), *args,
        cwd=project, base=env, drop=(), columns=None, timeout=120, preexec_fn=_limited_memory,
    )  # fmt: skip


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "outside"])
def test_a_return_file_key_inside_a_mocks_value_is_returned_as_data_never_read(tmp_path, outside, kind):
    """`return: {return_file: …}` is the value the mock answers with, not a file: the cache key
    used to read it anyway (/dev/zero until memory ran out, a FIFO forever, a file outside the
    project silently). Two runs: the second is a cache hit even after the named file changed."""
    project = tmp_path / "project"
    project.mkdir()
    if kind == "dev-zero":
        name = "/dev/zero"
    elif kind == "fifo":
        os.mkfifo(project / "pipe")
        name = "pipe"
    else:
        name = str(outside / "secret.txt")
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    mocks = f"    mocks:\n      - tool: t\n        return: {{return_file: '{name}'}}\n"
    (project / "s.yaml").write_text(HEAD + mocks + "    assertions: [{type: contains, value: done}]\n", encoding="utf-8")
    target = f"cmd:{sys.executable} agent.py"
    first = omk_eval(project, "--target", target)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    (outside / "secret.txt").write_text("changed since", encoding="utf-8")
    second = omk_eval(project, "--target", target)
    assert second.returncode == 0, second.stderr
    assert (project / "calls.log").read_text(encoding="utf-8") == "call\n"  # the second run came from the cache


def test_a_return_file_the_cache_hashes_is_read_by_the_file_rules(tmp_path):
    """The file a mock does read is hashed through the same reader as the sandbox's: a FIFO put
    in its place after loading is refused at once (the sandbox answers with an error too)."""
    from omk.store.cache import cache_key

    os.mkfifo(tmp_path / "order.json")
    sample = Sample("a", "p", base_dir=tmp_path, mocks=[{"tool": "t", "return_file": "order.json"}])
    done: list[str] = []
    import threading

    worker = threading.Thread(target=lambda: done.append(cache_key({"kind": "x"}, sample, "p")), daemon=True)
    worker.start()
    worker.join(10)
    assert len(done) == 1
    assert len(done[0]) == 64  # without blocking on the FIFO


def cwd_sample(cwd: str, files: list[str]) -> str:
    listed = ", ".join(files)
    return HEAD + f"    cwd: '{cwd}'\n    environment:\n      files_available: [{listed}]\n"


def test_a_cwd_in_proc_is_refused_at_load_so_omks_environment_is_never_copied(tmp_path):
    """`cwd: /proc/self` with `files_available: [environ]` copied omk's own environment, keys the
    agent's isolation withholds, into the `claude:` target's folder."""
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x"}) + "\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text(cwd_sample("/proc/self", ["environ"]), encoding="utf-8")
    proc = omk_eval(tmp_path, "--target", "replay:r.jsonl")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("s.yaml:4: samples[0] (a) cwd: refused: /proc/")
    assert line.endswith("is a system file (/proc, /sys, /dev), not a project file")
    assert not (tmp_path / "run" / "report.json").exists()


def test_a_cwd_in_the_home_folder_is_refused_at_load(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "s.yaml").write_text(cwd_sample("~", [".ssh", ".aws"]), encoding="utf-8")
    (project / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x"}) + "\n", encoding="utf-8")
    proc = omk_eval(project, "--target", "replay:r.jsonl", home=home)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip() == (
        f"s.yaml:4: samples[0] (a) cwd: refused: {home} is outside the project folder {project}; "
        "allow its folder with allow_paths in omk.yaml"
    )


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("../elsewhere/secret.txt", "is outside the sample's folder"),
        ("link-out/secret.txt", "is outside the sample's folder"),
        ("pipe", "is not a regular file (a FIFO, socket or device)"),
        ("zero", "is a system file (/proc, /sys, /dev)"),
    ],
)
def test_a_files_available_entry_that_leaves_the_folder_or_is_special_is_refused_at_load(tmp_path, outside, entry, why):
    project = tmp_path / "project"
    (project / "work").mkdir(parents=True)
    (project / "work" / "link-out").symlink_to(outside)
    (project / "work" / "zero").symlink_to("/dev/zero")
    (project / "elsewhere").symlink_to(outside)
    os.mkfifo(project / "work" / "pipe")
    [line] = problems(project, "s.yaml", cwd_sample("work", [entry]))
    assert line.startswith("s.yaml:6: samples[0] (a) environment.files_available[0]: refused: ")
    assert why in line


def test_a_cwd_and_files_inside_the_project_load_as_before(tmp_path, outside):
    (tmp_path / "work" / "src").mkdir(parents=True)
    (tmp_path / "work" / "src" / "app.py").write_text("x", encoding="utf-8")
    loaded = load(tmp_path, "s.yaml", cwd_sample("work", ["src", "src/app.py", "not-there-yet.md"]))
    assert [s.cwd for s in loaded.samples] == ["work"]
    (tmp_path / "omk.yaml").write_text(f"allow_paths: ['{outside}']\n", encoding="utf-8")
    loaded = load(tmp_path, "t.yaml", cwd_sample(str(outside), ["secret.txt"]))
    assert [s.cwd for s in loaded.samples] == [str(outside)]


def test_a_declared_folder_is_copied_into_the_claude_workspace_without_what_links_out_of_it(tmp_path, outside, monkeypatch):
    """A folder named in `files_available` that holds a symlink to a file outside (`~/.aws`,
    `/proc/self/environ`) is copied without it; the notes say what was left out."""
    from omk.settings.target_settings import TargetSettings
    from omk.targets.claude.setup import load_settings
    from omk.targets.claude.workspace import Workspace

    fake = tmp_path / "claude"
    fake.write_text(f"#!{sys.executable}\nprint('2.1.0')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("OMK_CLAUDE", str(fake))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")  # the target checks for credentials before it runs
    project = tmp_path / "project"
    data = project / "data"
    data.mkdir(parents=True)
    (data / "rows.csv").write_text("a,b\n", encoding="utf-8")
    (data / "creds").symlink_to(outside / "secret.txt")
    (data / "environ").symlink_to("/proc/self/environ")
    (data / "loop").symlink_to(data)  # back into the folder: copied once, not forever
    os.mkfifo(data / "pipe")
    sample = Sample("a", "p", base_dir=project, environment={"files_available": ["data"]})
    space = Workspace(load_settings("sonnet", "claude:sonnet", TargetSettings()), sample)
    try:
        copied = sorted(p.relative_to(space.work).as_posix() for p in space.work.rglob("*") if p.is_file())
        notes = space.notes
    finally:
        space.remove()
    assert copied == ["data/rows.csv"]
    assert [n.split("'")[1] for n in notes] == ["data/creds", "data/environ", "data/pipe"]
    assert all(n.endswith(f"leads outside {project} or is not a regular file; not copied") for n in notes)
