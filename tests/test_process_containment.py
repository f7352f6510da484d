"""A program's descendants end with its call, whatever they do: a child that calls setsid (and
holds the pipes), one that double-forks away from the process tree, through a target call and
through the real `omk eval`. Real subprocesses, real setsid."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.samples.model import Sample
from omk.targets import make_target

PY = sys.executable
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="descendants are found through /proc (Linux)")

# The program answers, and leaves a child in a session of its own that holds stdout and stderr.
SETSID_CHILD = """
import json, os, subprocess, sys
sys.stdin.readline()
child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); open('child.pid', 'w').write(str(os.getpid())); time.sleep(120)"])
while not os.path.exists("child.pid") or not open("child.pid").read():
    pass
print(json.dumps({"type": "response", "output": "done"}), flush=True)
"""
# The child forks again and its parent exits: the grandchild is no descendant any more (init
# adopts it), in a session of its own.
DOUBLE_FORK = """
import json, os, sys, time
sys.stdin.readline()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("child.pid.tmp", "w").write(str(os.getpid()))
        os.rename("child.pid.tmp", "child.pid")
        time.sleep(120)
    os._exit(0)
while not os.path.exists("child.pid"):
    time.sleep(0.01)
print(json.dumps({"type": "response", "output": "done"}), flush=True)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def child_of(tmp: Path) -> int:
    return int((tmp / "child.pid").read_text())


def cleanup(tmp: Path) -> None:
    if (tmp / "child.pid").exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(child_of(tmp), signal.SIGKILL)


@pytest.mark.parametrize("program", [SETSID_CHILD, DOUBLE_FORK], ids=["setsid", "double-fork"])
def test_a_child_that_left_the_group_ends_with_the_call(tmp_path, program):
    (tmp_path / "agent.py").write_text(program, encoding="utf-8")

    async def go():
        target = make_target(f"cmd:{PY} agent.py", base_dir=tmp_path)
        target.timeout = 30
        try:
            return await target.run(Sample("s", "hi", base_dir=tmp_path), "hi")
        finally:
            await target.close()

    try:
        started = time.monotonic()
        assert asyncio.run(go()).output == "done"
        assert time.monotonic() - started < 15  # the child holding the pipes did not hold the call
        assert gone(child_of(tmp_path)), "the child outlived its call"
    finally:
        cleanup(tmp_path)


def test_a_setsid_child_does_not_outlive_omk_eval(tmp_path):
    (tmp_path / "agent.py").write_text(SETSID_CHILD, encoding="utf-8")
    (tmp_path / "s.yaml").write_text("samples:\n  - {sample_id: a, prompt: hi, assertions: [{type: contains, value: done}]}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMK_")}
    try:
        proc = run_omk(
            "eval", "s.yaml", "--target", f"cmd:{PY} agent.py", "--out", "run", "--no-cache",
            cwd=tmp_path, base=env, drop=(), columns=None, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["summary"]["passed"] == 1
        assert gone(child_of(tmp_path)), "the setsid child outlived omk"
    finally:
        cleanup(tmp_path)
