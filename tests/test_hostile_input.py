"""Hostile input never crashes a run, and programs never outlive it: each case is a clear one-line
error (exit 2) or an errored sample, never a traceback. Real subprocesses, real files, the real
command line; a Hypothesis fuzz drives random outputs through `omk eval` and its assertions."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inline_doc_server import DocServer

from omk.cli.main import main
from omk.inline.fetched import FetchFailure
from omk.inline.http_fetch import HttpFetcher
from omk.inline.policy import build_policy
from omk.samples.model import Sample
from omk.targets import TargetError, make_target

PY = sys.executable


def strict_json(path: Path) -> dict:
    def refuse(name: str) -> None:
        raise AssertionError(f"{path} holds {name}: not strict JSON")

    raw = path.read_bytes()
    raw.decode("utf-8")  # strict UTF-8: no surrogates
    return json.loads(raw, parse_constant=refuse)


def omk(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, drop=("OMK_",), columns=None, timeout=120)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def run_target(spec: str, tmp: Path, settings: dict | None = None, timeout: float = 20.0):
    async def go():
        target = make_target(spec, base_dir=tmp, settings=settings)
        target.timeout = timeout
        try:
            return await target.run(Sample("s", "hi", base_dir=tmp), "hi")
        finally:
            await target.close()

    return asyncio.run(go())


RESPONDS_AND_LEAVES_A_CHILD = """
import json, os, subprocess, sys
sys.stdin.readline()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # same group, holds stdout
open("child.pid", "w").write(str(child.pid))
print(json.dumps({"type": "response", "output": "done"}), flush=True)
os._exit(0)
"""


def test_a_complete_response_is_a_success_although_a_child_holds_the_pipe(tmp_path):
    (tmp_path / "agent.py").write_text(RESPONDS_AND_LEAVES_A_CHILD, encoding="utf-8")
    # 20 s is less than the child lives: waiting for the pipe to close would be a timeout
    result = run_target(f"cmd:{PY} agent.py", tmp_path, timeout=20.0)
    assert result.output == "done"
    child = int((tmp_path / "child.pid").read_text())
    assert _gone(child), "the child was left running"


@pytest.mark.parametrize(
    "printed, expected",
    [("print('final answer hi')", "final answer hi"),  # plain text, as omk 0.54 executors may print
     ("print(json.dumps({'output': 'legacy json'}))", "legacy json"),  # 0.54's one JSON object
     ("sys.stdout.write('no newline at the end')", "no newline at the end")],
)  # fmt: skip
def test_a_one_shot_program_that_exits_is_a_success_although_a_child_holds_the_pipe(tmp_path, printed, expected):
    agent = RESPONDS_AND_LEAVES_A_CHILD.replace('print(json.dumps({"type": "response", "output": "done"}), flush=True)', printed + "; sys.stdout.flush()")
    (tmp_path / "agent.py").write_text(agent, encoding="utf-8")
    started = time.monotonic()
    result = run_target(f"cmd:{PY} agent.py", tmp_path, timeout=20.0)
    assert result.output.strip() == expected
    assert time.monotonic() - started < 10  # not the timeout, not the child's lifetime
    assert _gone(int((tmp_path / "child.pid").read_text())), "the child was left running"


FLOODS = """
import sys
sys.stdin.readline()
chunk = ("x" * 1023 + "\\n") * 64
while True:
    sys.stdout.write(chunk)
"""
ONE_ENDLESS_LINE = """
import sys
sys.stdin.readline()
while True:
    sys.stdout.write("y" * 65536)
"""


def test_a_program_that_floods_stdout_is_stopped_at_the_cap(tmp_path):
    (tmp_path / "flood.py").write_text(FLOODS, encoding="utf-8")
    with pytest.raises(TargetError, match="printed more than 1000000 bytes on stdout; raise max_output_bytes"):
        run_target(f"cmd:{PY} flood.py", tmp_path, {"max_output_bytes": 1_000_000})
    (tmp_path / "line.py").write_text(ONE_ENDLESS_LINE, encoding="utf-8")
    with pytest.raises(TargetError, match="printed a line longer than 16 MB"):
        run_target(f"cmd:{PY} line.py", tmp_path)


def test_a_judge_command_that_floods_stdout_is_stopped_at_the_cap(tmp_path):
    from omk.judge.clients import make_client

    (tmp_path / "flood.py").write_text(FLOODS, encoding="utf-8")
    client = make_client(f"cmd:{PY} {tmp_path / 'flood.py'}", {"max_output_bytes": 100_000})
    with pytest.raises(TargetError, match="judge command printed more than 100000 bytes"):
        asyncio.run(client.complete("sys", "prompt", 20.0))


def test_a_deeply_nested_page_is_a_failed_url_not_a_crash():
    with DocServer() as srv:
        async def go():
            fetcher = HttpFetcher(policy=build_policy(["127.0.0.1"]), timeout=60)
            try:
                return await fetcher.fetch(srv.url("/deep.html"))
            finally:
                await fetcher.aclose()

        got = asyncio.run(go())
    assert isinstance(got, FetchFailure)
    assert got.reason == "the page is nested too deeply to be turned into text"


@pytest.fixture()
def replay_project(tmp_path: Path) -> Path:
    (tmp_path / "s.yaml").write_text(
        "samples:\n  - {sample_id: a, prompt: hi, assertions: [{type: contains, value: x}]}\n", encoding="utf-8"
    )
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x"}) + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "omk_yaml", "words"),
    [
        (["--timeout", "nan"], "", "--timeout: must be greater than 0 and at most 86,400 seconds, got nan"),
        (["--timeout", "inf"], "", "--timeout: must be greater than 0 and at most 86,400 seconds, got inf"),
        (["--timeout", "-1"], "", "--timeout: must be greater than 0 and at most 86,400 seconds, got -1"),
        ([], "url_timeout: 0\n", "omk.yaml:1: url_timeout: must be greater than 0 and at most 86,400 seconds (got 0)"),
        ([], "url_timeout: -3\n", "omk.yaml:1: url_timeout: must be greater than 0 and at most 86,400 seconds (got -3)"),
        ([], "timeout: .nan\n", "omk.yaml:1: timeout: must be greater than 0 and at most 86,400 seconds (got nan)"),
        ([], "url_max_bytes: 0\n", "omk.yaml:1: url_max_bytes: must be from 1 to 1,073,741,824 (bytes) (got 0)"),
        (["--out", "afile"], "", "--out afile: exists and is not a folder"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(replay_project, args, omk_yaml, words):
    (replay_project / "afile").write_text("not a folder", encoding="utf-8")
    if omk_yaml:
        (replay_project / "omk.yaml").write_text(omk_yaml, encoding="utf-8")
    proc = omk(["eval", "s.yaml", "--target", "replay:r.jsonl", *args], replay_project)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr
    assert "Traceback" not in proc.stderr


def test_lone_surrogates_in_samples_outputs_and_resume_never_stop_a_run(tmp_path):
    samples = '{"samples": [{"sample_id": "a", "prompt": "bad \\ud800 text", "assertions": [{"type": "contains", "value": "\\udc00"}]},' \
              ' {"sample_id": "b", "prompt": "p", "assertions": [{"type": "contains", "value": "ok"}]}]}'
    (tmp_path / "s.json").write_text(samples, encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(
        '{"sample_id": "a", "output": "out \\ud83d and \\u001b[2J"}\n{"sample_id": "b", "output": "ok \\udfff"}\n', encoding="utf-8"
    )
    proc = omk(["eval", "s.json", "--target", "replay:r.jsonl", "--out", "run", "--format", "json,junit,md,html"], tmp_path)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    report = strict_json(tmp_path / "run" / "report.json")
    outputs = {r["sample_id"]: r["output"] for r in report["results"]}
    assert outputs == {"a": "out \ufffd and \x1b[2J", "b": "ok \ufffd"}
    for line in (tmp_path / "run" / "results.jsonl").read_bytes().splitlines():
        json.loads(line.decode("utf-8"))
    assert "\x1b" not in proc.stdout + proc.stderr  # shown as \\x1b, never sent raw to the terminal
    # a hand-edited results.jsonl with a lone surrogate, then a resume: still no traceback
    lines = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["output"] = "edited"
    edited = json.dumps(first).replace("edited", "edited \\ud800")
    (tmp_path / "run" / "results.jsonl").write_text(edited + "\n", encoding="utf-8")
    resumed = omk(["eval", "--resume", "run"], tmp_path)
    assert resumed.returncode in (0, 1) and "Traceback" not in resumed.stderr, resumed.stderr
    strict_json(tmp_path / "run" / "report.json")


def test_non_finite_numbers_never_reach_a_report(tmp_path, replay_project):
    (replay_project / "r.jsonl").write_text('{"sample_id": "a", "output": "x", "trace": {"cost_usd": NaN}}\n', encoding="utf-8")
    proc = omk(["eval", "s.yaml", "--target", "replay:r.jsonl", "--out", "run"], replay_project)
    assert proc.returncode == 2
    assert "trace.cost_usd must be a non-negative number (got nan)" in proc.stderr
    (replay_project / "s.json").write_text('[{"sample_id": "a", "prompt": "p", "assertions": [{"type": "max_length", "value": Infinity}]}]', encoding="utf-8")
    proc = omk(["doctor", "s.json"], replay_project)
    assert proc.returncode == 2
    assert "s.json:1: JSON parse error: Infinity is not valid JSON" in proc.stderr


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".jsonl"])
def test_ten_thousand_digit_integers(tmp_path, suffix):
    digits = "9" * 10_000
    text = {
        ".json": f'[{{"sample_id": "a", "prompt": "p", "assertions": [{{"type": "max_length", "value": {digits}}}]}}]',
        ".yaml": f"samples:\n  - {{sample_id: a, prompt: p, assertions: [{{type: max_length, value: {digits}}}]}}\n",
        ".jsonl": f'{{"sample_id": "a", "prompt": "p", "assertions": [{{"type": "max_length", "value": {digits}}}]}}\n',
    }[suffix]
    (tmp_path / f"s{suffix}").write_text(text, encoding="utf-8")
    proc = omk(["doctor", f"s{suffix}"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") <= 3


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r.update(results="not a list"),
        lambda r: r.update(summary=None),
        lambda r: r["results"][0].update(scores="x"),
        lambda r: r["results"][0].pop("sample_id"),
        lambda r: r.clear(),
        lambda r: r["results"].append(7),
    ],
)
def test_report_and_doctor_on_a_hand_edited_report(replay_project, edit):
    assert omk(["eval", "s.yaml", "--target", "replay:r.jsonl", "--out", "run"], replay_project).returncode == 0
    report = json.loads((replay_project / "run" / "report.json").read_text(encoding="utf-8"))
    edit(report)
    (replay_project / "run" / "report.json").write_text(json.dumps(report), encoding="utf-8")
    for args in (["report", "run", "--format", "html,md,junit", "--out", "re"], ["doctor", "s.yaml", "--report", "run"]):
        proc = omk(args, replay_project)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        assert proc.returncode in (0, 1, 2)


ASSERTIONS = [
    {"type": "contains", "value": "a"},
    {"type": "regex", "value": "(a+)+$"},
    {"type": "json_valid"},
    {"type": "max_length", "value": 50},
    {"type": "word_count_min", "value": 2},
    {"type": "starts_with", "value": "{"},
    {"type": "levenshtein_max", "value": 3, "reference": "hello"},
    {"type": "not_contains", "value": "\u0000"},
    {"type": "contains_any", "values": ["中文", "x"]},
]

outputs = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=200)  # surrogates and controls too


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(outputs, min_size=1, max_size=4))
def test_fuzz_outputs_through_the_real_command_line(tmp_path_factory, texts):
    tmp = tmp_path_factory.mktemp("fuzz")
    samples = [{"sample_id": f"s{i}", "prompt": "p", "assertions": ASSERTIONS} for i in range(len(texts))]
    (tmp / "s.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    with (tmp / "r.jsonl").open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"sample_id": f"s{i}", "output": text}) + "\n")  # ensure_ascii: surrogates survive as \\ud800
    code = main(["eval", str(tmp / "s.yaml"), "--target", f"replay:{tmp / 'r.jsonl'}", "--out", str(tmp / "run"), "--quiet"])
    assert code in (0, 1, 2)  # no exception escaped; 2 is replay refusing a record (an empty output)
    if code != 2:
        report = strict_json(tmp / "run" / "report.json")
        assert len(report["results"]) == len(texts)
