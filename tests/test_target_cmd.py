"""`cmd:COMMAND`: real subprocesses speaking the command protocol (docs/targets.md) and the 0.54 forms."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from omk.core.errors import ConfigError
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.targets.cmd import command_argv

PY = sys.executable


def program(tmp_path: Path, body: str, name: str = "agent.py") -> Path:
    path = tmp_path / name
    path.write_text("import json, os, sys, time\n" + textwrap.dedent(body), encoding="utf-8")
    return path


def run_cmd(spec: str, sample: Sample, base_dir: Path | None = None, settings: dict | None = None, timeout=None):
    async def go():
        target = make_target(spec, base_dir=base_dir, settings=settings)
        if timeout is not None:
            target.timeout = timeout
        try:
            return await target.run(sample, sample.prompt)
        finally:
            await target.close()

    return asyncio.run(go())


def sample_in(tmp_path: Path, **fields) -> Sample:
    return Sample(fields.pop("sample_id", "s1"), fields.pop("prompt", "Where is A1001?"), base_dir=tmp_path, **fields)


ORDER_MOCKS = [
    {"tool": "lookup_order", "match": {"input": {"order_id": "A1001"}}, "return": {"status": "shipped"}},
]


def test_request_tool_exchange_and_response(tmp_path):
    agent = program(
        tmp_path,
        """
        request = json.loads(sys.stdin.readline())
        with open("request.json", "w") as f:
            json.dump(request, f)
        print(json.dumps({"type": "tool_call", "id": "c1", "tool": "lookup_order", "input": {"order_id": "A1001"}}), flush=True)
        result = json.loads(sys.stdin.readline())
        print("a stray log line", flush=True)
        print(json.dumps({"type": "response", "output": "status: " + json.loads(result["output"])["status"] + " " + result["id"],
                          "cost_usd": 0.5, "tokens": {"input": 7, "output": 3}}), flush=True)
        """,
    )
    sample = sample_in(tmp_path, mocks=ORDER_MOCKS)
    got = run_cmd(f"cmd:{PY} {agent}", sample, settings={"system": "Be brief."})
    assert got.output == "status: shipped c1"
    request = json.loads((tmp_path / "request.json").read_text())
    assert request == {
        "type": "request",
        "sample_id": "s1",
        "model": None,
        "system": "Be brief.",
        "prompt": "Where is A1001?",
        "messages": [{"role": "user", "content": "Where is A1001?"}],
        "tools": [{"name": "lookup_order", "description": "The lookup_order tool.", "parameters": {"type": "object"}}],
    }
    trace = got.trace
    assert [c.to_json() for c in trace.tool_calls] == [
        {
            "tool": "lookup_order",
            "input": {"order_id": "A1001"},
            "output": {"status": "shipped"},
            "mocked": True,
            "mock_key": "lookup_order:1",
            "is_error": False,
            "outcome": "mock",
        }
    ]
    assert trace.mock_stats.to_json() == {"hits": 1, "misses": 0, "per_mock": {"lookup_order:1": 1}}
    assert trace.cost_usd == 0.5
    assert trace.tokens == {"input": 7, "output": 3}
    assert trace.turns == 2  # not reported: one turn plus one per tool call
    assert trace.latency_ms is not None


def test_strict_unmatched_call_is_answered_with_an_error(tmp_path):
    agent = program(
        tmp_path,
        """
        json.loads(sys.stdin.readline())
        print(json.dumps({"type": "tool_call", "id": 9, "tool": "lookup_order", "input": {"order_id": "Z"}}), flush=True)
        result = json.loads(sys.stdin.readline())
        print(json.dumps({"type": "response", "output": json.dumps(result), "turns": 5}), flush=True)
        """,
    )
    got = run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path, mocks=ORDER_MOCKS, mocks_strict=True))
    result = json.loads(got.output)
    assert result["id"] == 9
    assert result["is_error"] is True
    assert "denied" in result["output"]
    assert got.trace.tool_calls[0].is_error
    assert got.trace.mock_stats.misses == 1
    assert got.trace.turns == 5


def test_054_one_shot_json_reading_stdin_to_the_end(tmp_path):
    agent = program(
        tmp_path,
        """
        request = json.load(sys.stdin)  # reads to EOF: omk closes stdin when no tools are offered
        print(json.dumps({"ok": True, "output": "echo: " + request["prompt"], "costUSD": 0.02, "numTurns": 3,
                          "inputTokens": 11, "outputTokens": 4,
                          "toolCalls": [{"tool": "Bash", "input": {"command": "ls"}, "output": "a.txt", "success": False}]},
                         indent=2))
        """,
    )
    got = run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path, prompt="hi"))
    assert got.output == "echo: hi"
    t = got.trace
    assert (t.cost_usd, t.turns, t.tokens) == (0.02, 3, {"input": 11, "output": 4})
    assert t.tool_calls[0].tool == "Bash"
    assert t.tool_calls[0].is_error
    assert not t.tool_calls[0].mocked


def test_plain_text_output(tmp_path):
    agent = program(tmp_path, "sys.stdin.read()\nprint('  just text\\n')\n")
    got = run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path))
    assert got.output == "just text"
    assert got.trace.turns == 1
    assert got.trace.cost_usd is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("print('   ')", "completed without model output"),
        ("print(json.dumps({'ok': False, 'error': 'model overloaded'}))", "command reported failure: model overloaded"),
        ("print(json.dumps({'output': 'x', 'costUSD': 'cheap'}))", "malformed protocol JSON: trace.cost_usd"),
        ("print(json.dumps({'type': 'response', 'output': 42}))", "response.output must be a string"),
        ("sys.stderr.write('boom: bad config\\n'); sys.exit(3)", "command exited with code 3: boom: bad config"),
    ],
)
def test_failures_are_final_target_errors(tmp_path, body, message):
    agent = program(tmp_path, "sys.stdin.read()\n" + body + "\n")
    with pytest.raises(TargetError) as info:
        run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path))
    assert message in str(info.value)
    assert not info.value.retryable


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


HANGS = """
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open("pids.txt", "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
sys.stdin.read()
time.sleep(60)
"""


def _wait_for_pids(path: Path) -> list[int]:
    for _ in range(500):
        if path.exists() and len(path.read_text().split()) == 2:
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.01)
    raise AssertionError("the program never wrote its pids")


def _gone(pids: list[int]) -> bool:
    for _ in range(200):
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.01)
    return False


def test_own_timeout_kills_the_program_and_its_children(tmp_path):
    agent = program(tmp_path, HANGS)
    with pytest.raises(TargetError) as info:
        run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path), timeout=1.0)
    assert info.value.retryable
    assert "timed out" in str(info.value)
    assert _gone(_wait_for_pids(tmp_path / "pids.txt"))


ESCAPES = """
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
with open("pids.txt", "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
sys.stdin.read()
time.sleep(60)
"""


def test_a_grandchild_that_left_the_group_and_holds_stdout_does_not_hold_the_run(tmp_path):
    """It leaves the group (setsid) and keeps the pipe open: omk neither waits for the pipe nor
    leaves it running."""
    agent = program(tmp_path, ESCAPES)
    try:
        with pytest.raises(TargetError) as info:
            run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path), timeout=1.0)
        parent, grandchild = _wait_for_pids(tmp_path / "pids.txt")
        assert info.value.retryable
        assert "timed out" in str(info.value)
        assert _gone([parent])
        assert _gone([grandchild])  # found by the call's mark, though it left the group
    finally:
        for pid in _wait_for_pids(tmp_path / "pids.txt"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


def test_the_engines_timeout_cancels_and_kills_too(tmp_path):
    agent = program(tmp_path, HANGS)

    async def go():
        target = make_target(f"cmd:{PY} {agent}")
        await asyncio.wait_for(target.run(sample_in(tmp_path), "p"), timeout=1.0)

    with pytest.raises(TimeoutError):
        asyncio.run(go())
    assert _gone(_wait_for_pids(tmp_path / "pids.txt"))


def test_cwd_is_the_samples_folder_or_the_samples_cwd(tmp_path):
    agent = program(tmp_path, "sys.stdin.read()\nprint(os.getcwd())\n")
    (tmp_path / "work").mkdir()
    assert run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path)).output == str(tmp_path)
    assert run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path, cwd="work")).output == str(tmp_path / "work")
    with pytest.raises(TargetError, match="is not a folder"):
        run_cmd(f"cmd:{PY} {agent}", sample_in(tmp_path, cwd="missing"))


def test_relative_script_resolves_against_base_dir_and_runs_elsewhere(tmp_path):
    (tmp_path / "agents dir").mkdir()
    program(tmp_path / "agents dir", "sys.stdin.read()\nprint('ran')\n", name="a.py")
    elsewhere = tmp_path / "samples"
    elsewhere.mkdir()
    spec = "cmd:python 'agents dir/a.py'"
    got = run_cmd(spec, sample_in(elsewhere), base_dir=tmp_path)
    assert got.output == "ran"
    target = make_target(spec, base_dir=tmp_path)
    assert target.describe()["command"][-1] == str(tmp_path / "agents dir" / "a.py")
    assert str(tmp_path / "agents dir" / "a.py") in target.cache_identity().program["files"]


def test_argv_rules(tmp_path):
    (tmp_path / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "run.sh").chmod(0o755)
    assert command_argv("./run.sh --fast", tmp_path, "x") == [str(tmp_path / "run.sh"), "--fast"]
    assert command_argv("python -m http.server", tmp_path, "x")[1:] == ["-m", "http.server"]
    assert command_argv("python -u run.sh", tmp_path, "x")[2] == str(tmp_path / "run.sh")
    with pytest.raises(ConfigError, match="command not found: no-such-program-xyz"):
        command_argv("no-such-program-xyz --flag", tmp_path, "cmd:no-such-program-xyz --flag")
    with pytest.raises(ConfigError, match="cannot split"):
        command_argv("python 'unclosed", tmp_path, "x")


def test_never_run_through_a_shell(tmp_path):
    agent = program(tmp_path, "sys.stdin.read()\nprint(json.dumps(sys.argv[1:]))\n")
    got = run_cmd(f"cmd:{PY} {agent} '$HOME' ';' 'echo hi'", sample_in(tmp_path))
    assert json.loads(got.output) == ["$HOME", ";", "echo hi"]


def test_the_example_program_in_docs_targets_md_works(tmp_path):
    doc = (Path(__file__).parent.parent / "docs" / "targets.md").read_text(encoding="utf-8")
    section = doc.split("### A complete example program", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "order_bot.py"
    script.write_text(code, encoding="utf-8")
    mocks = [{"tool": "lookup_order", "match": {"input": {"order_id": "A1001"}}, "return": {"order_id": "A1001", "status": "shipped", "tracking": "JD01"}}]
    got = run_cmd(f"cmd:{PY} {script}", sample_in(tmp_path, mocks=mocks))
    assert got.output == "Order A1001 is shipped (tracking JD01)."
    assert got.trace.turns == 2
    assert got.trace.mock_stats.per_mock == {"lookup_order:1": 1}
    denied = run_cmd(f"cmd:{PY} {script}", sample_in(tmp_path, prompt="Where is B7777?", mocks=mocks, mocks_strict=True))
    assert denied.output.startswith("Sorry, I could not look up B7777: [omk] tool call denied")
    assert run_cmd(f"cmd:{PY} {script}", sample_in(tmp_path, prompt="hello")).output.startswith("Hi!")
