"""A hook's verdict depends on its own folder's code only, and what a hook starts ends with it.

Hook workers are kept between samples. Two hooks in different folders that each `import helpers`
must each get their own `helpers.py`, and a hook that rewrites its worker cannot change the verdict
of a hook in another folder. Real hook files, run by `omk eval` with one worker at a time (so
without isolation the second hook would land in the first one's worker)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cli_support import run_omk

from omk.assertions.hooks import HookRunner

AGENT = "import json, sys\nsys.stdin.read()\nprint(json.dumps({'response': 'hi there'}))\n"
IMPORTS_HELPERS = "import helpers\n\ndef check(output, ctx):\n    return {'pass': helpers.VERDICT, 'message': helpers.NAME}\n"
REWRITES_ITS_WORKER = """\
import sys

worker = sys.modules["__main__"]
worker.normalize = lambda result: {"pass": True, "message": "rewritten", "score": None}
for name, module in list(sys.modules.items()):
    if name.endswith("hook_worker"):
        module.normalize = worker.normalize


def check(output, ctx):
    return True
"""
FAILS = "def check(output, ctx):\n    return {'pass': False, 'message': 'honest failure'}\n"


def omk(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    return run_omk(
        "eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--concurrency", "1", "--no-cache", "--out", "run", *args,
        cwd=tmp, base={**env, "NO_COLOR": "1"}, drop=(), columns=None, timeout=120,
    )  # fmt: skip


def hook_sample(sample_id: str, fn: str) -> str:
    return f"  - {{ sample_id: {sample_id}, prompt: hi, assertions: [{{ type: custom, fn: {fn} }}] }}\n"


def verdicts(tmp: Path) -> dict[str, tuple[bool, str]]:
    lines = (tmp / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    found = {}
    for line in lines:
        result = json.loads(line)
        [check] = result["assertions"]
        found[result["sample_id"]] = (check["passed"], check["message"])
    return found


def write(tmp: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")


def test_hooks_in_two_folders_each_import_their_own_helpers(tmp_path):
    write(tmp_path, {
        "agent.py": AGENT,
        "passing/check.py": IMPORTS_HELPERS,
        "passing/helpers.py": "VERDICT = True\nNAME = 'passing helpers'\n",
        "failing/check.py": IMPORTS_HELPERS,
        "failing/helpers.py": "VERDICT = False\nNAME = 'failing helpers'\n",
        "s.yaml": "samples:\n" + hook_sample("first", "passing/check.py") + hook_sample("second", "failing/check.py"),
    })  # fmt: skip
    proc = omk(tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert verdicts(tmp_path) == {"first": (True, "passing helpers"), "second": (False, "failing helpers")}


def test_a_hook_that_rewrites_its_worker_cannot_pass_another_folders_failing_hook(tmp_path):
    write(tmp_path, {
        "agent.py": AGENT,
        "tamper/hook.py": REWRITES_ITS_WORKER,
        "honest/hook.py": FAILS,
        "s.yaml": "samples:\n" + hook_sample("tamper", "tamper/hook.py") + hook_sample("honest", "honest/hook.py"),
    })  # fmt: skip
    proc = omk(tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert verdicts(tmp_path)["honest"] == (False, "honest failure")


def test_hooks_of_one_folder_keep_sharing_a_worker(tmp_path):
    pid = "import os\n\ndef check(output, ctx):\n    return {'pass': True, 'message': str(os.getpid())}\n"
    write(tmp_path, {"same/one.py": pid, "same/two.py": pid, "other/three.py": pid})
    runner = HookRunner(max_workers=1)
    payload: dict = {"sample": {}, "assertion": {}, "trace": {}}

    async def main() -> list[str | None]:
        try:
            return [(await runner.run(tmp_path / f, "x", payload)).message for f in ("same/one.py", "same/two.py", "other/three.py")]
        finally:
            await runner.close()

    one, two, three = asyncio.run(main())
    assert one == two != three


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_child_a_hook_moved_to_its_own_session_ends_with_the_hook(tmp_path):
    """The worker runs under omk.io.process's containment: a setsid child carries the call's mark."""
    (tmp_path / "daemon.py").write_text(
        "import subprocess, sys, time\n\n"
        "def check(output, ctx):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)\n"
        f"    open({str(tmp_path / 'pid')!r}, 'w').write(str(child.pid))\n"
        "    time.sleep(120)\n",
        encoding="utf-8",
    )
    runner = HookRunner(timeout_s=2)

    async def main():
        try:
            return await runner.run(tmp_path / "daemon.py", "x", {"sample": {}, "assertion": {}, "trace": {}})
        finally:
            await runner.close()

    outcome = asyncio.run(main())
    assert outcome.message == "custom assertion timed out (2s)"
    child = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not alive(child)
    finally:
        if alive(child):
            os.kill(child, 9)
