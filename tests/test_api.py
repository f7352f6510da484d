"""omk's public Python API, called as a user would: files and in-memory samples, real subprocess
targets, target objects, the async twin, the typed report, Python assertion types."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import omk

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_resolves_and_import_omk_stays_light():
    for name in omk.__all__:
        assert getattr(omk, name) is not None, name
    code = "import sys, omk; print(sorted(m for m in sys.modules if m.startswith('omk.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['omk.version']"  # the API loads on first use


def test_load_reads_files_and_raises_one_error_with_every_problem(tmp_path: Path):
    samples = omk.load(ROOT / "samples" / "eval-samples.yaml")
    assert samples
    assert all(isinstance(s, omk.Sample) for s in samples)
    assert len(omk.load([ROOT / "samples" / "m365" / "evals.json"])) > 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("samples:\n  - sample_id: a\n    promt: x\n  - sample_id: b\n    prompt: y\n    assertions: [{type: nope}]\n")
    with pytest.raises(omk.InputError) as caught:
        omk.load(bad)
    problems = caught.value.problems
    assert len(problems) >= 2
    assert {p.line for p in problems} >= {3, 6}
    assert all(p.file == str(bad) for p in problems)
    assert "unknown assertion type" in str(caught.value) or "nope" in str(caught.value)


def test_evaluate_a_file_reports_pass_fail_and_error_without_stopping(project):
    folder, target = project
    report = omk.evaluate(folder / "eval-samples.yaml", target=target, judge=False, cwd=folder)
    by_id = {r.sample_id: r for r in report}
    assert by_id["passes-one"].passed
    assert by_id["passes-one"].status == "ok"
    failed = by_id["fails-one"]
    assert failed.passed is False
    assert failed.status == "ok"
    messages = [a.message for a in failed.assertions if a.passed is False]
    assert len(messages) == 2
    assert all(messages)
    assert failed.output == "echo: say goodbye"
    assert failed.scores.fact == 1.0
    assert failed.composite < 3.5
    errored = by_id["errors-one"]
    assert errored.status == "error"
    assert "crashed on purpose" in (errored.error or "")
    judged = by_id["judged-one"]
    assert judged.passed
    assert judged.judge_skipped  # rubric skipped with no judge, assertions decide
    assert report.passed is False
    assert report.summary.total == 4
    assert report.summary.errored == 1
    assert report.summary.passed == 2
    assert {r.sample_id for r in report.failures()} == {"fails-one", "errors-one"}
    assert report.out_dir is None
    assert not (folder / ".omk" / "runs").exists()  # kept in memory


def test_evaluate_in_memory_samples_and_located_errors(project):
    folder, target = project
    report = omk.evaluate(
        [{"sample_id": "m1", "prompt": "你好", "assertions": [{"type": "contains", "value": "你好"}]}],
        target=target,
        judge=False,
        cwd=folder,
    )
    assert report.result("m1").passed
    assert report.result("m1").output == "echo: 你好"
    with pytest.raises(omk.InputError) as caught:
        omk.evaluate([{"sample_id": "m1", "prompt": "x", "assertions": [{"type": "contains"}]}], target=target)
    assert str(caught.value).startswith("<samples>: samples[0] (m1) assertions[0]")
    with pytest.raises(omk.InputError, match="duplicate sample_id"):
        loaded = omk.load(folder / "eval-samples.yaml")
        omk.evaluate([*loaded, {"sample_id": "passes-one", "prompt": "again"}], target=target)


def test_out_writes_the_run_folder_and_to_dict_is_report_json(project):
    folder, target = project
    out = folder / "run"
    report = omk.evaluate(folder / "eval-samples.yaml", target=target, judge=False, out=out, formats=["junit"], cwd=folder)
    on_disk = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert on_disk == json.loads(json.dumps(report.to_dict()))
    assert (out / "junit.xml").is_file()
    assert (out / "run.json").is_file()
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["sample_id"] for line in lines) == sorted(r.sample_id for r in report)
    written = report.write(["md", "html"], out_dir=folder / "again")
    assert [p.name for p in written] == ["report.json", "summary.md", "report.html"]
    assert "fails-one" in (folder / "again" / "summary.md").read_text(encoding="utf-8")


class Recorder:
    """A target object: no subprocess, no HTTP; answers from a table and records its calls."""

    spec = "python:recorder"

    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.calls: list[str] = []
        self.closed = False

    def describe(self):
        return {"kind": "python", "spec": self.spec}

    async def run(self, sample, prompt, session=None):
        self.calls.append(sample.sample_id)
        if sample.sample_id not in self.answers:
            raise omk.TargetError(f"no answer for {sample.sample_id}")
        return omk.TargetResult(output=self.answers[sample.sample_id])

    def cache_identity(self):
        return None

    async def close(self):
        self.closed = True


def test_a_target_object_and_on_result(project):
    folder, _ = project
    target = Recorder({"passes-one": "hello there", "fails-one": "bonjour"})
    seen = []
    report = omk.evaluate(folder / "eval-samples.yaml", target=target, judge=False, retries=0, cwd=folder, on_result=seen.append)
    assert sorted(target.calls) == sorted(["passes-one", "fails-one", "errors-one", "judged-one"])
    assert target.closed
    assert report.result("errors-one").status == "error"
    assert "no answer" in report.result("errors-one").error
    assert report.result("fails-one").assertions[0].passed is True  # "bonjour" found; max_length fails
    assert sorted(r.sample_id for r in seen) == sorted(target.calls)
    assert report.target.to_json() == {"kind": "python", "spec": "python:recorder"}


def test_evaluate_async_runs_inside_a_running_loop(project):
    folder, target = project

    async def main():
        assert asyncio.get_running_loop() is not None
        return await omk.evaluate_async(folder / "eval-samples.yaml", target=target, judge=False, cwd=folder, filter="pass*")

    report = asyncio.run(main())
    assert [r.sample_id for r in report] == ["passes-one"]
    assert report.passed


def test_a_python_assertion_type_from_a_sample_file(project):
    folder, target = project

    @omk.assertion_type("api_test_mentions", layer="behavior", schema={"required": ["word"], "properties": {"word": {"type": "string"}}})
    def mentions(output: str, check: omk.CheckInput):
        return check.assertion["word"] in output, f"{check.assertion['word']!r} not in {check.sample.sample_id}"

    @omk.assertion_type("api_test_explodes")
    async def explodes(output: str, check: omk.CheckInput):
        raise RuntimeError("kaboom")

    try:
        (folder / "custom.yaml").write_text(
            "samples:\n"
            "  - sample_id: c1\n    prompt: alpha\n    assertions:\n"
            "      - { type: api_test_mentions, word: alpha }\n"
            "      - { type: api_test_mentions, word: beta, not: true }\n"
            "      - { type: api_test_explodes }\n",
            encoding="utf-8",
        )
        report = omk.evaluate(folder / "custom.yaml", target=target, judge=False, cwd=folder)
        first, negated, broken = report.result("c1").assertions
        assert first.passed
        assert first.layer == omk.Layer.BEHAVIOR
        assert negated.passed  # "beta" is not there, and `not` inverts
        assert broken.passed is False
        assert broken.error
        assert "kaboom" in broken.message
        (folder / "bad.yaml").write_text("samples:\n  - sample_id: c2\n    prompt: x\n    assertions: [{type: api_test_mentions}]\n")
        with pytest.raises(omk.InputError, match="word"):
            omk.load(folder / "bad.yaml")  # the type's schema is checked at load, with the line
        with pytest.raises(ValueError, match="built into omk"):
            omk.assertion_type("contains")(lambda output, check: True)
    finally:
        from omk.assertions.python import unregister

        unregister("api_test_mentions")
        unregister("api_test_explodes")
    with pytest.raises(omk.InputError, match="api_test_mentions"):
        omk.load(folder / "custom.yaml")  # gone again


def process_state() -> tuple:
    umask = os.umask(0o022)
    os.umask(umask)
    return (
        os.getcwd(),
        gc.isenabled(),
        gc.get_threshold(),
        gc.get_freeze_count(),
        signal.getsignal(signal.SIGINT),
        signal.getsignal(signal.SIGTERM),
        "httpx._main" in sys.modules,
        umask,
    )


def test_a_library_call_leaves_process_state_alone(project):
    folder, target = project
    before = process_state()
    omk.evaluate(folder / "eval-samples.yaml", target=target, judge=False, cwd=folder, out=folder / "r", formats=["html"])
    assert process_state() == before
    run_json = json.loads((folder / "r" / "run.json").read_text(encoding="utf-8"))
    assert run_json["cwd"] == str(folder)


def test_resume_through_the_engine_runs_only_what_is_missing(project):
    folder, target = project
    calls = folder / "calls.log"
    os.environ["OMK_TEST_CALLS"] = str(calls)
    try:
        out = folder / "run"
        omk.evaluate(folder / "eval-samples.yaml", target=target, judge=False, out=out, cwd=folder, cache=False)
        lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if json.loads(line)["sample_id"] != "fails-one"]
        (out / "results.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
        calls.write_text("", encoding="utf-8")
        from omk.engine import EvalOptions, run_evaluation

        report = run_evaluation(EvalOptions(resume=str(out), target=target), cwd=folder / "r")  # a command target: given again
        assert calls.read_text(encoding="utf-8").split() == ["fails-one"]
        assert report.summary.total == 4
        assert report.run_id == json.loads((out / "run.json").read_text())["run_id"]
    finally:
        del os.environ["OMK_TEST_CALLS"]


def test_all_and_the_lazy_table_agree():
    from omk import _EXPORTS

    assert sorted(omk.__all__) == sorted(["__version__", *_EXPORTS])


def test_run_experiment_in_memory_returns_typed_results(project):
    folder, target = project
    outcome = omk.run_experiment(
        [{"sample_id": f"s{i}", "prompt": f"say hello {i}", "assertions": [{"type": "contains", "value": "hello"}]} for i in range(3)],
        control="baseline",
        treatments=["system:Be brief."],
        target=target,
        judge=False,
        cwd=folder,
        seed=4,
    )
    assert outcome.out_dir is None
    assert not (folder / ".omk" / "runs").exists()
    assert set(outcome.reports) == {"baseline", "system"}
    assert outcome.reports["system"].target.get("system")["source"] == "system"
    verdict = outcome.analysis.verdict
    assert verdict.level.value == "UNDERPOWERED"  # three samples, all ties: no call can be made
    assert outcome.block.verdict.level == "UNDERPOWERED"
    assert outcome.block.seed == 4
    with pytest.raises(TypeError, match="spec string"):
        omk.run_experiment([{"sample_id": "a", "prompt": "p"}], control="baseline", treatments=["system:x"], target=Recorder({}))


def test_loading_leaves_the_collector_running():
    """A library call does not pause the garbage collector: collections still happen while it loads."""
    seen = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    before = gc.get_threshold()
    gc.set_threshold(100, 10, 10)
    gc.callbacks.append(record)
    try:
        omk.load(ROOT / "samples" / "eval-samples.yaml")
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*before)
    assert seen, "the collector did not run while loading"
    assert gc.isenabled()
    assert gc.get_threshold() == before


@pytest.mark.parametrize(
    "option, value",
    [("threshold", 9), ("timeout", -1), ("timeout", float("nan")), ("timeout", float("inf")), ("repeat", 0),
     ("retries", -1), ("concurrency", 0), ("lang", "fr"), ("repeat", 1.5)],
)  # fmt: skip
def test_the_api_checks_options_as_the_command_line_does(option, value):
    with pytest.raises(omk.ConfigError, match=option):
        omk.evaluate([{"sample_id": "a", "prompt": "hi"}], target="cmd:echo hi", judge=False, **{option: value})


def test_every_run_setting_of_omk_eval_is_a_typed_keyword(project):
    """The keywords past the first fourteen: the judge's repeats and length debias, the budgets,
    URL inlining's servers, allowed hosts and off switch; each lands in the run's Settings."""
    folder, target = project
    (folder / "mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    settings = omk.prepare(
        folder / "eval-samples.yaml", target=target, judge=False, cwd=folder, judge_repeat=3, debias_length=False,
        budget_usd=2.5, budget_per_sample_usd=0.5, mcp_config="mcp.json", url_allow=["10.0.0.0/8"], urls=False,
    ).settings  # fmt: skip
    assert settings.judge_repeat == 3
    assert settings.debias_length is False
    assert (settings.budget_usd, settings.budget_per_sample_usd) == (2.5, 0.5)
    assert settings.mcp_config == str(folder / "mcp.json")
    assert settings.url_allow == ["10.0.0.0/8"]
    assert settings.no_urls is True
    defaults = omk.prepare(folder / "eval-samples.yaml", target=target, judge=False, cwd=folder).settings
    assert (defaults.judge_repeat, defaults.debias_length, defaults.no_urls, defaults.url_allow) == (1, True, False, [])


@pytest.mark.parametrize("option, value", [("url_allow", ["example.com/path"]), ("judge_repeat", 0), ("budget_usd", 0)])
def test_the_added_keywords_are_checked_as_their_flags_are(option, value):
    with pytest.raises(omk.ConfigError, match=option):
        omk.evaluate([{"sample_id": "a", "prompt": "hi"}], target="cmd:echo hi", judge=False, **{option: value})


def test_a_target_that_is_neither_a_spec_nor_a_target_is_a_type_error():
    with pytest.raises(TypeError, match="target: expected a spec string"):
        omk.evaluate([{"sample_id": "a", "prompt": "hi"}], target=123, judge=False)


def test_mixed_in_memory_samples_keep_the_order_given(project):
    folder, target = project
    loaded = omk.load(folder / "eval-samples.yaml")
    report = omk.evaluate([loaded[1], {"sample_id": "x", "prompt": "p"}, loaded[0]], target=target, judge=False, cwd=folder)
    assert [r.sample_id for r in report] == [loaded[1].sample_id, "x", loaded[0].sample_id]


def test_a_python_assertion_changes_only_its_own_copies(project):
    folder, target = project
    seen: list[tuple[str, str, list, dict]] = []

    @omk.assertion_type("api_test_vandal", schema={"properties": {"word": {"type": "string"}, "tags": {"type": "array"}}})
    def vandal(output: str, check: omk.CheckInput):
        seen.append((check.sample.sample_id, check.assertion["word"], list(check.assertion["tags"]), dict(check.sample.raw["meta"])))
        check.assertion["word"] = "changed"
        check.assertion["tags"].append("added")
        check.sample.raw["meta"]["owner"] = "changed"
        check.sample.capability.append("added")
        check.trace.tokens["input"] = -1
        return True

    (folder / "shared.yaml").write_text(
        "samples:\n"
        + "".join(
            f"  - sample_id: s{i}\n    prompt: alpha\n    capability: [search]\n    meta: {{owner: team}}\n"
            "    assertions: [{ type: api_test_vandal, word: alpha, tags: [a] }]\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    try:
        samples = omk.load(folder / "shared.yaml")
        assert samples[0].assertions[0].raw is samples[1].assertions[0].raw  # the loader shares equal content
        report = omk.evaluate(samples, target=target, judge=False, cwd=folder)
    finally:
        from omk.assertions.python import unregister

        unregister("api_test_vandal")
    assert [s[1:] for s in seen] == [("alpha", ["a"], {"owner": "team"})] * 3  # no check saw another's change
    assert samples[0].assertions[0].raw == {"type": "api_test_vandal", "word": "alpha", "tags": ["a"]}
    assert [s.capability for s in samples] == [("search",)] * 3
    assert all(r.trace.cost_usd != -1.0 for r in report)  # the report's trace is not the check's copy


def test_a_python_assertion_is_given_what_cannot_be_copied_as_it_is(project):
    folder, target = project
    lock = threading.Lock()

    @omk.assertion_type("api_test_lock")
    def has_lock(output: str, check: omk.CheckInput):
        return check.sample.raw["lock"] is lock

    try:
        report = omk.evaluate(
            [{"sample_id": "l1", "prompt": "alpha", "lock": lock, "assertions": [{"type": "api_test_lock"}]}],
            target=target, judge=False, cwd=folder,
        )  # fmt: skip
    finally:
        from omk.assertions.python import unregister

        unregister("api_test_lock")
    assert report.result("l1").assertions[0].passed


def test_every_error_the_api_exports_is_an_omk_error():
    """One exception tree: a caller catches whatever omk raises on purpose with `except omk.OmkError`."""
    errors = [getattr(omk, name) for name in omk.__all__ if name.endswith("Error")]
    assert {e.__name__ for e in errors} >= {"OmkError", "InputError", "ConfigError", "CallError"}
    assert all(issubclass(e, omk.OmkError) for e in errors), [e for e in errors if not issubclass(e, omk.OmkError)]


class Waiting(Recorder):
    """A target that waits on something (as a model or a program does) before it answers, and
    notes how many result lines were on disk once it had waited."""

    def __init__(self, answers: dict[str, str], results: Path):
        super().__init__(answers)
        self.results = results
        self.on_disk: list[int] = []

    async def run(self, sample, prompt, session=None):
        await asyncio.sleep(0.01)
        self.on_disk.append(_lines(self.results))
        return await super().run(sample, prompt, session)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.parametrize("waits", [True, False])
def test_each_result_is_on_disk_before_on_result_sees_it(tmp_path, waits):
    """A result is written once the run stops computing: while the next sample waits, when the
    target waits on anything; a replay's results a stretch at a time. Either way its line is
    on disk before `on_result` is told of it."""
    samples = [{"sample_id": f"s{i}", "prompt": f"p{i}", "assertions": [{"type": "contains", "value": "p"}]} for i in range(30)]
    results = tmp_path / "run" / "results.jsonl"
    answers = {s["sample_id"]: s["prompt"] for s in samples}
    target = Waiting(answers, results) if waits else Recorder(answers)
    told: list[tuple[str, int]] = []

    def seen(result):
        line = json.loads(results.read_text(encoding="utf-8").splitlines()[len(told)])
        told.append((result.sample_id, line["sample_id"] == result.sample_id))

    report = omk.evaluate(samples, target=target, judge=False, out=tmp_path / "run", cwd=tmp_path, concurrency=1, on_result=seen)
    assert report.summary.total == 30
    assert [sid for sid, _ in told] == [f"s{i}" for i in range(30)]
    assert all(on_disk for _, on_disk in told)  # each told of in the order written, its line there
    if waits:
        assert target.on_disk == list(range(30))  # every earlier sample's line was written while this one waited
