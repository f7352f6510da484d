"""custom hooks: Python and JS hooks in worker processes, timeouts, crashes, `not`."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from helpers import make_ctx, make_spec, run

from omk.assertions.evaluate import evaluate
from omk.assertions.hooks import HookRunner
from omk.assertions.registry import PrepareError
from omk.records import ToolCall, Trace
from omk.samples.model import Sample, Status

GOOD = """
def check(output, ctx):
    print("printing must not break the protocol")
    tools = [c["tool"] for c in ctx["trace"]["tool_calls"]]
    return {
        "pass": "SQL" in output,
        "message": f"{ctx['sample']['sample_id']}/{ctx['assertion']['tone']}/{','.join(tools)}",
        "score": 4,
    }
"""
HANG = "import time\n\ndef check(output, ctx):\n    time.sleep(3600)\n"
RAISE = "def check(output, ctx):\n    raise ValueError('bad tone')\n"
EXIT = "import os\n\ndef check(output, ctx):\n    os._exit(7)\n"
MAIN_BOOL = "def main(output, ctx):\n    return len(output) > 3\n"
ASYNC = "import asyncio\n\nasync def check(output, ctx):\n    await asyncio.sleep(0)\n    return output == 'yes'\n"
WRONG_TYPE = "def check(output, ctx):\n    return 'yes'\n"
NO_FUNCTION = "x = 1\n"


@pytest.fixture
def hooks(tmp_path: Path) -> Path:
    checks = tmp_path / "checks"
    checks.mkdir()
    for name, source in [
        ("good.py", GOOD),
        ("hang.py", HANG),
        ("raise.py", RAISE),
        ("exit.py", EXIT),
        ("main_bool.py", MAIN_BOOL),
        ("async_hook.py", ASYNC),
        ("wrong_type.py", WRONG_TYPE),
        ("no_function.py", NO_FUNCTION),
    ]:
        (checks / name).write_text(source)
    return tmp_path


def evaluate_with(runner: HookRunner, base: Path, specs, output: str, trace: Trace | None = None):
    sample = Sample(sample_id="s7", prompt="p", raw={"sample_id": "s7", "prompt": "p"}, base_dir=base)
    ctx = make_ctx(output, trace=trace, sample=sample, hooks=runner)
    return asyncio.run(_evaluate_and_close(runner, specs, ctx))


async def _evaluate_and_close(runner, specs, ctx):
    try:
        return await evaluate(specs, ctx)
    finally:
        await runner.close()


def spec(fn: str, **fields):
    return make_spec("custom", fn=fn, **fields)


def test_python_hook_gets_sample_assertion_and_trace(hooks):
    trace = Trace(tool_calls=[ToolCall("Bash", "ls", "x")])
    [result] = evaluate_with(HookRunner(), hooks, [spec("checks/good.py", tone="calm")], "uses SQL", trace)
    assert result.status is Status.PASSED
    assert result.message == "s7/calm/Bash"
    assert result.score == 4
    assert result.layer.value == "behavior"


def test_hanging_hook_is_stopped_and_fails_alone(hooks):
    specs = [spec("checks/good.py", tone="a"), spec("checks/hang.py"), spec("checks/good.py", tone="b")]
    results = evaluate_with(HookRunner(timeout_s=0.5), hooks, specs, "SQL")  # the hang ends at the timeout (its message)
    assert [r.status for r in results] == [Status.PASSED, Status.FAILED, Status.PASSED]
    assert results[1].message == "custom assertion timed out (0.5s)"
    assert results[2].message == "s7/b/"


def test_timeout_and_errors_fail_even_under_not(hooks):
    specs = [spec("checks/hang.py", **{"not": True}), spec("checks/raise.py", **{"not": True})]
    results = evaluate_with(HookRunner(timeout_s=0.3), hooks, specs, "x")
    assert [r.status for r in results] == [Status.FAILED, Status.FAILED]


def test_raising_hook_fails_with_its_error(hooks):
    specs = [spec("checks/raise.py"), spec("checks/main_bool.py")]
    results = evaluate_with(HookRunner(), hooks, specs, "long enough")
    assert results[0].status is Status.FAILED
    assert results[0].message == "custom assertion error: ValueError: bad tone"
    assert results[1].status is Status.PASSED


def test_crashing_worker_is_replaced(hooks):
    specs = [spec("checks/exit.py"), spec("checks/good.py", tone="t")]
    results = evaluate_with(HookRunner(), hooks, specs, "SQL")
    assert results[0].status is Status.FAILED
    assert results[0].message.startswith("custom assertion error: hook worker exited with code 7")
    assert results[1].status is Status.PASSED


def test_async_hook_bool_results_and_not(hooks):
    specs = [
        spec("checks/async_hook.py"),
        spec("checks/async_hook.py", **{"not": True}),
        spec("checks/main_bool.py", **{"not": True}),
    ]
    results = evaluate_with(HookRunner(), hooks, specs, "yes")
    assert [r.status for r in results] == [Status.PASSED, Status.FAILED, Status.PASSED]


def test_not_mirrors_a_hook_score(hooks):
    [result] = evaluate_with(HookRunner(), hooks, [spec("checks/good.py", tone="x", **{"not": True})], "no")
    assert result.status is Status.PASSED
    assert result.score == 2


def test_bad_results_and_missing_files_are_clear_errors(hooks):
    specs = [spec("checks/wrong_type.py"), spec("checks/no_function.py"), spec("checks/absent.py")]
    results = evaluate_with(HookRunner(), hooks, specs, "x")
    assert all(r.status is Status.FAILED for r in results)
    assert "hook returned str; expected a bool" in results[0].message
    assert "must define check(output, ctx)" in results[1].message
    assert results[2].message.startswith("custom assertion error: hook file not found:")


def test_hooks_without_a_runner_use_a_one_off_worker(hooks):
    sample = Sample(sample_id="s7", prompt="p", raw={"sample_id": "s7"}, base_dir=hooks)
    [result] = run(spec("checks/main_bool.py"), make_ctx("long output", sample=sample))
    assert result.status is Status.PASSED


def test_runner_survives_successive_event_loops(hooks):
    runner = HookRunner()
    sample = Sample(sample_id="s7", prompt="p", raw={"sample_id": "s7"}, base_dir=hooks)
    ctx = make_ctx("long output", sample=sample, hooks=runner)
    assert run(spec("checks/main_bool.py"), ctx)[0].status is Status.PASSED
    assert run(spec("checks/main_bool.py"), ctx)[0].status is Status.PASSED
    asyncio.run(runner.close())


def test_unsupported_extension_is_a_prepare_error():
    with pytest.raises(PrepareError) as info:
        make_spec("custom", fn="checks/tone.rb")
    assert info.value.field == "fn"


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


@needs_node
def test_js_hooks_default_and_named_exports(tmp_path):
    (tmp_path / "tone.mjs").write_text(
        "export default async function (output, { sample, assertion, trace }) {\n"
        "  console.log('noise');\n"
        "  return { pass: output.includes('SQL'), message: `${sample.sample_id}:${assertion.fn}` };\n"
        "}\n"
    )
    (tmp_path / "named.mjs").write_text("export function check(output) { return output.length > 100; }\n")
    (tmp_path / "throws.mjs").write_text("export default () => { throw new Error('js broke'); };\n")
    specs = [spec("tone.mjs"), spec("named.mjs"), spec("throws.mjs"), spec("tone.mjs", **{"not": True})]
    results = evaluate_with(HookRunner(), tmp_path, specs, "SQL here")
    assert [r.status for r in results] == [Status.PASSED, Status.FAILED, Status.FAILED, Status.FAILED]
    assert results[0].message == "s7:tone.mjs"
    assert results[2].message == "custom assertion error: js broke"


@needs_node
def test_hanging_js_hook_times_out(tmp_path):
    (tmp_path / "hang.mjs").write_text(
        "export default () => new Promise(() => { setInterval(() => {}, 1000); });\n"
    )
    (tmp_path / "ok.mjs").write_text("export default () => true;\n")
    results = evaluate_with(HookRunner(timeout_s=0.5), tmp_path, [spec("hang.mjs"), spec("ok.mjs")], "x")
    assert results[0].message == "custom assertion timed out (0.5s)"
    assert results[1].status is Status.PASSED


def test_js_hook_without_node_fails_clearly(tmp_path, monkeypatch):
    (tmp_path / "tone.mjs").write_text("export default () => true;\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    [result] = evaluate_with(HookRunner(), tmp_path, [spec("tone.mjs")], "x")
    assert result.status is Status.FAILED
    assert "node is not on PATH" in result.message


def test_concurrent_calls_share_a_bounded_pool(tmp_path):
    (tmp_path / "slow.py").write_text(
        "import os, time\n\ndef check(output, ctx):\n    time.sleep(0.3)\n    return {'pass': True, 'message': str(os.getpid())}\n"
    )
    runner = HookRunner(max_workers=2)
    payload = {"sample": {}, "assertion": {}, "trace": {}}

    async def main():
        try:
            return await asyncio.gather(*(runner.run(tmp_path / "slow.py", "x", payload) for _ in range(4)))
        finally:
            await runner.close()

    outcomes = asyncio.run(main())
    assert all(o.passed for o in outcomes)
    assert len({o.message for o in outcomes}) == 2  # four calls answered by two workers: the pool's bound, each reused
