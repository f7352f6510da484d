"""`omk sample --from-run`: a real `omk eval` of a `cmd:` agent that calls tools is recorded into
samples, which load, pass against the same agent, and name the drift of a changed agent."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

import omk
from omk.authoring import from_run
from omk.authoring.from_run import match_of, mocks_of
from omk.domain.mock_defs import drift_notes
from omk.records import ToolCall
from omk.records.document import read_document
from omk.targets.mocks import mock_matches

AGENT = """
import json, sys

request = json.loads(sys.stdin.readline())
n = 0

def call(tool, tool_input):
    global n
    n += 1
    print(json.dumps({"type": "tool_call", "id": f"c{n}", "tool": tool, "input": tool_input}), flush=True)
    return json.loads(sys.stdin.readline())["output"]

order = json.loads(call("lookup_order", {"order_id": "A1001"}))
first = call("Read", {"file_path": "notes.md"})
again = call("Read", {"file_path": "notes.md"})
EXTRA
print(json.dumps({"type": "response", "output": f"Order A1001 is {order['status']}, sent by {order['carrier']}. Notes: {first} then {again}."}), flush=True)
"""

SAMPLES = {
    "samples": [
        {
            "sample_id": "order-status",
            "prompt": "Where is my order A1001?",
            "mocks": [
                {"tool": "lookup_order", "match": {"input": {"order_id": "A1001"}}, "return": {"status": "shipped", "carrier": "DHL"}},
                {"tool": "Read", "match": {"file_path": "notes.md"}, "return_seq": ["draft", "final"], "return": "final"},
            ],
            "assertions": [{"type": "contains", "value": "shipped"}],
        }
    ]
}


def omk_cli(*args: str, cwd: Path, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=extra_env, columns=200, timeout=120)


def agent(tmp_path: Path, name: str, extra: str = "") -> str:
    (tmp_path / name).write_text(textwrap.dedent(AGENT).replace("EXTRA", extra), encoding="utf-8")
    return f"cmd:{sys.executable} {name}"


def recorded(tmp_path: Path) -> Path:
    """A run of the agent (its tools answered by the original sample's mocks), recorded into samples."""
    (tmp_path / "original.yaml").write_text(yaml.safe_dump(SAMPLES), encoding="utf-8")
    run = omk_cli("eval", "original.yaml", "--target", agent(tmp_path, "agent.py"), "--no-judge", "--no-cache", "--out", "run1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    made = omk_cli("sample", "--from-run", "run1", "--output", "recorded.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "recorded.yaml: 1 sample recorded from run1" in made.stdout
    return tmp_path / "recorded.yaml"


def test_a_recorded_run_becomes_samples_that_load_and_replay(tmp_path):
    path = recorded(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "# recorded from run " in text
    assert "sample order-status of original.yaml:" in text
    (sample,) = omk.load(path)
    assert sample.provenance == "production-trace"
    assert sample.mocks_strict
    assert sample.prompt == "Where is my order A1001?"
    assert [dict(m) for m in sample.mocks] == [
        {"tool": "lookup_order", "match": {"input": {"order_id": "A1001"}}, "return": {"status": "shipped", "carrier": "DHL"}},
        {"tool": "Read", "match": {"input": {"file_path": "notes.md"}}, "return_seq": ["draft", "final"], "return": "final"},
    ]
    kinds = {a.type: a.raw for a in sample.assertions}
    assert kinds["tool_sequence"]["mode"] == "in_order"
    assert kinds["tool_sequence"]["steps"] == ["lookup_order", "Read", "Read"]
    assert kinds["rouge_n_min"]["reference"] == "Order A1001 is shipped, sent by DHL. Notes: draft then final."
    doctor = omk_cli("doctor", "recorded.yaml", "--json", cwd=tmp_path)
    report = json.loads(doctor.stdout)  # a one-sample set is "unhealthy" (too small), never wrong
    assert report["valid"] and report["problems"] == [] and report["totals"]["errors"] == 0, doctor.stdout

    again = omk_cli("eval", "recorded.yaml", "--target", agent(tmp_path, "agent.py"), "--no-judge", "--no-cache", "--out", "run2", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    (result,) = read_document(tmp_path / "run2").results
    assert result.passed
    assert result.trace.mock_stats
    assert result.trace.mock_stats.misses == 0
    assert result.trace.notes == ()


def test_a_changed_agent_is_named_as_drift_and_fails_under_mocks_strict(tmp_path):
    recorded(tmp_path)
    changed = agent(tmp_path, "changed.py", 'call("Grep", {"pattern": "refund"})\ncall("Read", {"file_path": "other.md"})')
    run = omk_cli("eval", "recorded.yaml", "--target", changed, "--no-judge", "--no-cache", "--out", "run3", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the agent now calls Grep, which the recording never did" in run.stdout
    (result,) = read_document(tmp_path / "run3").results
    assert not result.passed
    assert list(result.trace.notes) == [
        "mock drift: the agent now calls Grep, which the recording never did",
        'mock drift: the agent now calls Read with {"file_path": "other.md"}, an input the recording never had',
    ]
    drift = [a for a in result.assertions if a.type == "mock_drift"]
    assert drift
    assert drift[0].message
    assert "Grep" in drift[0].message
    grep = [c for c in result.trace.tool_calls if c.tool == "Grep"]
    assert grep[0].is_error
    assert "denied" in str(grep[0].output)  # mocksStrict denies it, as before


def test_drift_without_mocks_strict_is_noted_but_does_not_fail(tmp_path):
    path = recorded(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("mocksStrict: true", "mocksStrict: false"), encoding="utf-8")
    changed = agent(tmp_path, "changed.py", 'call("Grep", {"pattern": "refund"})')
    run = omk_cli("eval", "recorded.yaml", "--target", changed, "--no-judge", "--no-cache", "--out", "run4", "--format", "html,md", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = read_document(tmp_path / "run4").results
    assert result.passed
    # no mock and no tool served Grep: the call is unsupported, and drift (the recording never made it)
    assert [(c.tool, c.outcome) for c in result.trace.tool_calls if c.tool == "Grep"] == [("Grep", "unsupported")]
    assert result.trace.notes == (
        "the agent called Grep, which cmd: does not offer",
        "mock drift: the agent now calls Grep, which the recording never did",
    )
    assert '<p class="warn">mock drift: the agent now calls Grep, which the recording never did</p>' in (tmp_path / "run4" / "report.html").read_text(encoding="utf-8")
    lines = run.stdout.splitlines()
    at = lines.index("Mock drift: 1 recorded sample made calls the recording never had")
    assert lines[at + 1] == "  order-status: mock drift: the agent now calls Grep, which the recording never did"
    summary = (tmp_path / "run4" / "summary.md").read_text(encoding="utf-8")
    assert "### Mock drift: 1 recorded sample made calls the recording never had\n\n- order-status: mock drift: the agent now calls Grep, which the recording never did\n" in summary
    zh = omk_cli("report", "run4", "--format", "md", "--lang", "zh", "--out", "zh", cwd=tmp_path)
    assert zh.returncode == 0, zh.stderr
    said = (tmp_path / "zh" / "summary.md").read_text(encoding="utf-8")
    assert "### 模拟漂移：1 条录制的用例发出了录制中从未有过的调用\n\n- order-status: 模拟漂移：智能体现在调用 Grep，录制中从未有过这个调用\n" in said


def test_the_drift_list_names_the_first_samples_and_counts_the_rest_in_chinese_too():
    from rich.console import Console

    from omk.records import SampleResult, Trace
    from omk.records.document import ReportDocument
    from omk.report import drift

    note = "mock drift: the agent now calls Grep, which the recording never did"
    results = [SampleResult(sample_id=f"s{i}", status="ok", prompt="p", trace=Trace(notes=(note,) if i % 2 == 0 else ("stopped at max_turns (10)",))) for i in range(16)]
    report = ReportDocument.of({"format": "omk-report/1", "summary": {}, "results": [r.to_json() for r in results]})
    said = drift.lines(report)
    assert said[0] == "Mock drift: 8 recorded samples made calls the recording never had"
    assert said[1:6] == [f"s{i}: {note}" for i in (0, 2, 4, 6, 8)]
    assert said[6] == "… and 3 more: see report.html or report.json"
    zh = drift.lines(report, "zh")
    assert zh[0] == "模拟漂移：8 条录制的用例发出了录制中从未有过的调用"
    assert zh[6] == "……另有 3 条：见 report.html 或 report.json"
    assert zh[1] == "s0: 模拟漂移：智能体现在调用 Grep，录制中从未有过这个调用"
    console = Console(width=200, record=True, color_system=None)
    drift.print_terminal(report, console, "zh")
    assert console.export_text().splitlines()[:2] == [zh[0], f"  {zh[1]}"]
    assert drift.lines(ReportDocument.of({"format": "omk-report/1", "summary": {}, "results": [results[1].to_json()]})) == []


def test_a_call_whose_input_holds_another_s_gets_its_own_mock_first():
    calls = [
        ToolCall("Read", {"file_path": "a.md"}, "short"),
        ToolCall("Read", {"file_path": "a.md", "offset": 10}, "tail"),
        ToolCall("Read", {"file_path": "a.md"}, "short"),
    ]
    mocks = mocks_of(calls)
    assert [m["return"] for m in mocks] == ["tail", "short"]


def test_a_missing_run_and_a_file_that_exists_are_one_line_each(tmp_path):
    bad = omk_cli("sample", "--from-run", "nowhere", cwd=tmp_path)
    assert bad.returncode == 2
    assert "no such report" in bad.stderr
    assert "Traceback" not in bad.stderr
    path = recorded(tmp_path)
    again = omk_cli("sample", "--from-run", "run1", "--output", "recorded.yaml", cwd=tmp_path)
    assert again.returncode == 2
    assert "recorded.yaml: already exists" in again.stderr
    assert path.read_text(encoding="utf-8").count("sample_id:") == 1


def test_only_a_recorded_sample_has_its_misses_named_as_drift():
    mocks = [{"tool": "Read", "match": {"input": {"file_path": "a.md"}}, "return": "x"}]
    calls = [ToolCall("Read", {"file_path": "a.md"}, "x", mocked=True, mock_key="Read:1"), ToolCall("Bash", {"command": "ls"}, "no")]
    assert drift_notes("human", mocks, calls) == []
    assert drift_notes(None, mocks, calls) == []
    assert drift_notes("production-trace", [], calls) == []
    assert drift_notes("production-trace", mocks, calls + calls) == ["mock drift: the agent now calls Bash, which the recording never did"]


def test_a_secret_known_where_the_samples_are_written_is_masked_in_them(tmp_path):
    key = "sk-shop-0123456789abcdef"
    samples = json.loads(json.dumps(SAMPLES))
    samples["samples"][0]["mocks"][1]["return_seq"] = [f"draft with {key}", "final"]
    (tmp_path / "original.yaml").write_text(yaml.safe_dump(samples), encoding="utf-8")
    run = omk_cli("eval", "original.yaml", "--target", agent(tmp_path, "agent.py"), "--no-judge", "--no-cache", "--out", "run1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    made = omk_cli("sample", "--from-run", "run1", cwd=tmp_path, extra_env={"SHOP_API_KEY": key})
    assert made.returncode == 0, made.stderr
    assert key not in made.stdout
    assert "draft with [redacted]" in made.stdout


def test_a_path_in_the_agent_s_fresh_folder_is_matched_by_its_end_on_the_next_run():
    recorded_read = {"file_path": "/tmp/omk-claude-k3j_9x/work/src/app.py", "limit": 40}
    recorded_bash = {"command": "cd /tmp/omk-claude-k3j_9x/work && pytest -q", "timeout": 60}
    read = {"tool": "Read", "match": match_of(recorded_read), "return": "x"}
    bash = {"tool": "Bash", "match": match_of(recorded_bash), "return": "ok"}
    assert read["match"] == {"file_path_endswith": "src/app.py", "input": {"limit": 40}}
    assert bash["match"] == {"command_glob": "cd * && pytest -q", "input": {"timeout": 60}}
    assert mock_matches(read, "Read", {"file_path": "/tmp/omk-claude-Zq81ab/work/src/app.py", "limit": 40})
    assert not mock_matches(read, "Read", {"file_path": "/tmp/omk-claude-Zq81ab/work/src/other.py", "limit": 40})
    assert mock_matches(bash, "Bash", {"command": "cd /tmp/omk-claude-Zq81ab/work && pytest -q", "timeout": 60})
    assert match_of({"file_path": "/home/me/project/app.py"}) == {"input": {"file_path": "/home/me/project/app.py"}}


CRASHER = """
import json, sys

request = json.loads(sys.stdin.readline())
if "crash" in request["prompt"]:
    sys.exit(3)
print(json.dumps({"type": "response", "output": "Order A1001 is shipped."}), flush=True)
"""


def test_lang_zh_says_what_was_recorded_and_left_out_in_chinese(tmp_path):
    (tmp_path / "agent.py").write_text(CRASHER, encoding="utf-8")
    samples = {"samples": [{"sample_id": "ok", "prompt": "Where is A1001?"}, {"sample_id": "bad", "prompt": "please crash"}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(samples), encoding="utf-8")
    run = omk_cli("eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--no-judge", "--no-cache", "--retries", "0", "--out", "run1", cwd=tmp_path)
    assert run.returncode != 2, run.stdout + run.stderr
    made = omk_cli("sample", "--from-run", "run1", "--output", "r.yaml", "--lang", "zh", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "r.yaml：从 run1 录制了 1 条用例"
    (line,) = made.stderr.strip().splitlines()
    assert line.startswith("未录制：bad: 运行中出错（")
    assert line.endswith("）")
    english = omk_cli("sample", "--from-run", "run1", "--output", "e.yaml", cwd=tmp_path)
    assert english.stdout.strip() == "e.yaml: 1 sample recorded from run1"
    assert english.stderr.startswith("left out bad: errored in the run (")


ECHOER = """
import json, sys

request = json.loads(sys.stdin.readline())
print(json.dumps({"type": "tool_call", "id": "c1", "tool": "Read", "input": {"file_path": "log.txt"}}), flush=True)
log = json.loads(sys.stdin.readline())["output"]
print(json.dumps({"type": "response", "output": log + log}, ensure_ascii=False), flush=True)
"""


@pytest.mark.parametrize("piece", ["order shipped ", "订单已发货，"])
def test_a_tool_output_and_an_answer_over_the_cap_are_cut_by_bytes_between_characters(tmp_path, monkeypatch, piece):
    log = piece * 200  # 2,800 bytes in ASCII, 3,600 in Chinese (a character is three bytes)
    (tmp_path / "agent.py").write_text(ECHOER, encoding="utf-8")
    samples = {"samples": [{"sample_id": "long", "prompt": "Read the log", "mocks": [{"tool": "Read", "return": log}], "assertions": [{"type": "contains", "value": piece}]}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(samples, allow_unicode=True), encoding="utf-8")
    run = omk_cli("eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--no-judge", "--no-cache", "--out", "run1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    monkeypatch.setattr(from_run, "MAX_RECORDED_BYTES", 1000)
    made = from_run.samples_from_run(tmp_path / "run1")
    (tmp_path / "recorded.yaml").write_text(made.text, encoding="utf-8")
    (sample,) = yaml.safe_load(made.text)["samples"]
    cut_log, reference = sample["mocks"][0]["return"], sample["assertions"][-1]["reference"]
    for text in (cut_log, reference):
        assert text.endswith(from_run.CUT_MARK)
        assert 990 <= len(text.encode("utf-8")) <= 1000  # under the cap in bytes, not characters
        kept = text[: -len(from_run.CUT_MARK)]
        assert (log + log).startswith(kept)
        assert "\ufffd" not in kept
    doctor = omk_cli("doctor", "recorded.yaml", "--json", cwd=tmp_path)
    assert json.loads(doctor.stdout)["totals"]["errors"] == 0, doctor.stdout


def test_the_workspace_files_a_recorded_run_named_are_carried_over(tmp_path):
    """A Read then an Edit of a workspace file: the file is carried beside the samples written and
    the Read's mock lets the real Read run (`run: true`), so Claude Code lets the Edit reach its mock
    (the real CLI's replay: tests/test_sample_from_run_all_tools_claude_e2e.py). A file the agent
    created is not carried; one only read stays a mock's answer; one gone since is said in a comment."""
    from omk.authoring.carry import carried_files
    from omk.records import SampleResult, Trace

    (tmp_path / "repo" / "src").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (tmp_path / "repo" / "README.md").write_text("# 说明\n", encoding="utf-8")
    sample = {"sample_id": "edit/add", "prompt": "Fix it.", "workspace": "repo", "assertions": [{"type": "contains", "value": "ok"}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    work = "/tmp/omk-claude-ab12cd/work"
    calls = (
        ToolCall("Read", {"file_path": f"{work}/README.md"}, "     1\t# 说明", False, None, False, "ran"),
        ToolCall("Read", {"file_path": f"{work}/src/app.py"}, "     1\tdef add(a, b):", False, None, False, "ran"),
        ToolCall("Edit", {"file_path": f"{work}/src/app.py", "old_string": "a + b", "new_string": "a + b  # 加法"}, "updated", False, None, False, "ran"),
        ToolCall("Write", {"file_path": f"{work}/notes/new.md", "content": "x"}, "written", False, None, False, "ran"),
    )
    result = SampleResult("edit/add", "ok", "Fix it.", output="ok", trace=Trace(tool_calls=calls), source_file=str(tmp_path / "s.yaml"), source_line=2)

    carried = carried_files(result, tmp_path)
    assert carried.files == {"README.md": "# 说明\n".encode(), "src/app.py": b"def add(a, b):\n    return a + b\n"}
    written = from_run.sample_of(result, carried.files, "out.workspace/edit_add")
    assert written["workspace"] == "out.workspace/edit_add"
    assert [(m["tool"], m.get("run")) for m in written["mocks"]] == [("Read", None), ("Read", True), ("Edit", None), ("Write", None)]
    assert "workspace" not in from_run.sample_of(result)  # written to stdout: nothing carried, the sample as before
    from omk.core.secrets import Masker

    mask = Masker(["sk-carried-0123456789abcdef"])
    assert from_run._masked("key = 'sk-carried-0123456789abcdef' # 密钥\n".encode(), mask) == "key = '[redacted]' # 密钥\n".encode()
    assert from_run._masked(b"\xff\xfe sk-carried-0123456789abcdef", mask) == b"\xff\xfe sk-carried-0123456789abcdef"  # not text: as it is

    (tmp_path / "repo" / "src" / "app.py").unlink()
    (tmp_path / "repo" / "src" / "app.py").symlink_to(tmp_path / "s.yaml")
    assert carried_files(result, tmp_path).why_not == ["src/app.py: a link; not carried"]
    (tmp_path / "s.yaml").unlink()
    assert carried_files(result, tmp_path).why_not == [f"workspace not carried: the samples file {tmp_path / 's.yaml'} was not found"]


READS_TWO_FILES = """
import json, sys
json.loads(sys.stdin.readline())
for n, name in enumerate(["notes.txt", "kept.txt"]):
    print(json.dumps({"type": "tool_call", "id": f"c{n}", "tool": "Read", "input": {"file_path": f"/tmp/omk-cmd-ab12/work/{name}"}}), flush=True)
    json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "output": "ok"}), flush=True)
"""


def test_a_workspace_file_modified_since_the_run_is_carried_and_said_never_silently(tmp_path):
    """The run keeps no copy of the workspace, so `--from-run --output` reads the files as they are
    now. A file modified after the run started is carried as it is, and both the comment above the
    sample and a line on stderr say which file and when (in Chinese too); an untouched one is not named."""
    import os
    import time

    (tmp_path / "agent.py").write_text(READS_TWO_FILES, encoding="utf-8")
    (tmp_path / "ws").mkdir()
    for name in ("notes.txt", "kept.txt"):
        (tmp_path / "ws" / name).write_text(f"{name} as the run saw it\n", encoding="utf-8")
        os.utime(tmp_path / "ws" / name, (time.time() - 3600, time.time() - 3600))
    sample = {"sample_id": "reads", "prompt": "Read both.", "workspace": "ws", "mocks": [{"tool": "Read", "match": {"input_contains": ".txt"}, "return": "text"}],
              "assertions": [{"type": "contains", "value": "ok"}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    run = omk_cli("eval", "s.yaml", "--target", f"cmd:{sys.executable} {tmp_path / 'agent.py'}", "--no-judge", "--out", "run1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    (tmp_path / "ws" / "notes.txt").write_text("edited after the run\n", encoding="utf-8")
    os.utime(tmp_path / "ws" / "notes.txt", (time.time() + 60, time.time() + 60))  # after the run started, whatever the clock's grain

    made = omk_cli("sample", "--from-run", "run1", "--output", "recorded.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    said = [line for line in made.stderr.splitlines() if "modified" in line]
    assert len(said) == 1, made.stderr
    assert said[0].startswith("reads: workspace: notes.txt was modified ")
    assert "carried as it is now, which may not be what the agent saw" in said[0]
    text = (tmp_path / "recorded.yaml").read_text(encoding="utf-8")
    assert "# workspace: notes.txt was modified " in text
    assert "kept.txt was modified" not in text
    assert (tmp_path / "recorded.workspace" / "reads" / "notes.txt").read_text(encoding="utf-8") == "edited after the run\n"
    zh = omk_cli("sample", "--from-run", "run1", "--output", "zh.yaml", "--lang", "zh", cwd=tmp_path)
    assert "reads: 工作区：notes.txt 在 " in zh.stderr, zh.stderr


def test_samples_written_away_from_the_run_s_omk_yaml_get_the_command_that_writes_them_beside_it(tmp_path):
    """The run read its target from omk.yaml beside its samples file; `omk eval OUT` finds omk.yaml
    beside OUT (or in the current folder), so samples written elsewhere would run with no target or
    skills. The line on stderr names the file and the command that writes them beside it, which
    runs as printed; written there, the samples run and nothing more is said."""
    import shlex

    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "agent.py").write_text(READS_TWO_FILES, encoding="utf-8")
    (tmp_path / "suite" / "omk.yaml").write_text(f"target: cmd:{sys.executable} {tmp_path / 'suite' / 'agent.py'}\n", encoding="utf-8")
    sample = {"sample_id": "reads", "prompt": "Read both.", "mocks": [{"tool": "Read", "match": {"input_contains": ".txt"}, "return": "text"}],
              "assertions": [{"type": "contains", "value": "ok"}]}
    (tmp_path / "suite" / "s.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")
    run = omk_cli("eval", "suite/s.yaml", "--no-judge", "--out", "run1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr

    away = omk_cli("sample", "--from-run", "run1", "--output", "rec.yaml", cwd=tmp_path)
    assert away.returncode == 0, away.stderr
    (hint,) = [line for line in away.stderr.splitlines() if "will not read" in line]
    assert hint.startswith("omk eval rec.yaml will not read suite/omk.yaml, which gave the run its target and skills")
    command = hint.split("write the samples beside it: ", 1)[1]
    assert command == "omk sample --from-run run1 --output suite/rec.yaml"
    beside = omk_cli(*shlex.split(command)[1:], cwd=tmp_path)
    assert beside.returncode == 0, beside.stderr
    assert "will not read" not in beside.stderr
    replay = omk_cli("eval", "suite/rec.yaml", "--no-judge", "--out", "run2", cwd=tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr
