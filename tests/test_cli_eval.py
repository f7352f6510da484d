"""`omk eval` end to end, as a real subprocess, on the bundled samples and on broken input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "eval-samples.yaml"
RESPONSES = ROOT / "samples" / "responses.jsonl"


def omk(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, timeout=120)


def test_bundled_replay_run_matches_the_report_contract(tmp_path):
    out = tmp_path / "run"
    proc = omk("eval", str(SAMPLES), "--target", f"replay:{RESPONSES}", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["format"] == "omk-report/1"
    for key in ("run_id", "omk_version", "started_at", "finished_at", "samples_files", "target", "judge", "summary", "results"):
        assert key in report
    written = yaml.safe_load(SAMPLES.read_text(encoding="utf-8"))["samples"]
    assert [r["sample_id"] for r in report["results"]] == [s["sample_id"] for s in written]
    summary = report["summary"]
    assert summary["total"] == len(written) >= 10
    assert summary["errored"] == 0
    assert summary["failed"] == 0
    assert set(summary["scores"]) == {"fact", "behavior", "judge", "composite"}
    assert summary["scores"]["judge"] is None  # no judge configured
    for result, sample in zip(report["results"], written, strict=True):
        assert result["status"] == "ok"
        assert result["error"] is None
        # a conversation is checked turn by turn: the sample's assertions, then the turn's own
        checked = [(result, sample.get("assertions") or [])]
        if "turns" in sample:
            assert result["assertions"] == []
            assert len(result["turns"]) == len(sample["turns"])
            shared = sample.get("assertions") or []
            checked = [(t, shared + (w.get("assertions") or [])) for t, w in zip(result["turns"], sample["turns"], strict=True)]
        for unit, expected in checked:
            assert [a["type"] for a in unit["assertions"]] == [a["type"] for a in expected]  # the sample's order
            assert set(unit["trace"]) >= {"turns", "tool_calls", "cost_usd", "latency_ms", "tokens", "mock_stats"}
            for a in unit["assertions"]:
                assert set(a) >= {"type", "layer", "passed", "weight", "not", "metric", "score", "message", "children"}
                assert a["layer"] in ("fact", "behavior")
        assert result["scores"]["composite"] > 0
    by_id = {r["sample_id"]: r for r in report["results"]}
    # judge-scored assertions are reported as skipped, not failed and not dropped
    relevancy = by_id["cs-order-status-en"]["assertions"][-1]
    assert relevancy["type"] == "answer_relevancy"
    assert relevancy["status"] == "skipped"
    assert relevancy["passed"] is None
    # the slow order lookup fails latency_max but the sample still passes its layers
    latency = next(a for a in by_id["cs-order-status-en"]["assertions"] if a["type"] == "latency_max")
    assert latency["passed"] is False
    assert "9200" in latency["message"]
    assert by_id["cs-order-status-en"]["scores"]["behavior"] == 4.33
    # the composed prompt carries the fenced context
    assert by_id["cr-sql-injection-zh"]["prompt"].endswith("```")
    # the bundled conversations: every turn passed, and turn 2 refunded the order named in turn 1
    followup = by_id["cs-order-followup-en"]
    assert [t["passed"] for t in followup["turns"]] == [True, True, True]
    assert followup["turns"][1]["trace"]["tool_calls"][-1]["input"]["order_id"] == "A1001"
    assert "A1001" not in followup["turns"][1]["prompt"]
    assert [t["passed"] for t in by_id["cs-warranty-chat-zh"]["turns"]] == [True, True]
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(written)
    assert "judge items skipped" in proc.stdout


def test_omk_yaml_beside_the_samples_names_the_target(tmp_path):
    proc = omk("eval", str(SAMPLES), "--out", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gate passed" in proc.stdout


def test_missing_recorded_response_errors_that_sample_only(tmp_path):
    responses = tmp_path / "partial.jsonl"
    kept = RESPONSES.read_text(encoding="utf-8").splitlines()[1:]
    responses.write_text("\n".join(kept) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    proc = omk("eval", str(SAMPLES), "--target", f"replay:{responses}", "--out", str(out))
    assert proc.returncode == 1
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    first, *rest = report["results"]
    assert first["status"] == "error"
    assert "no recorded response" in first["error"]
    assert first["passed"] is False
    assert first["assertions"] == []
    assert all(r["status"] == "ok" for r in rest)
    assert report["summary"]["errored"] == 1


def test_failing_sample_gives_exit_1_and_names_the_assertion(tmp_path):
    samples = tmp_path / "s.yaml"
    samples.write_text(
        "- sample_id: a\n  prompt: hi\n  assertions:\n    - {type: contains, value: bonjour}\n", encoding="utf-8"
    )
    (tmp_path / "r.jsonl").write_text('{"sample_id": "a", "output": "hello"}\n', encoding="utf-8")
    proc = omk("eval", str(samples), "--target", "replay:r.jsonl", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert proc.returncode == 1
    assert "contains" in proc.stdout
    assert "bonjour" in proc.stdout
    assert "gate failed" in proc.stdout


def test_five_mistakes_give_five_lines_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "samples:\n"
        "  - sample_id: a\n"
        "    prompt: hi\n"
        "    assertions:\n"
        "      - {type: containz, value: x}\n"  # line 5: unknown type
        "  - sample_id: a\n"  # line 6: duplicate id
        "    prompt: again\n"
        "  - sample_id: c\n"
        "    prompt: ''\n"  # line 9: empty prompt
        "    difficulty: extreme\n"  # line 10: bad enum
        "  - sample_id: d\n"
        "    prompt: ok\n"
        "    assertions:\n"
        "      - {type: regex, pattern: '(unclosed'}\n",  # line 14: invalid regex
        encoding="utf-8",
    )
    proc = omk("eval", str(bad), "--target", "replay:x.jsonl")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 5, proc.stderr
    assert all(line.startswith(f"{bad}:") for line in lines)
    assert [int(line.split(":")[1]) for line in lines] == [5, 6, 9, 10, 14]
    assert 'did you mean "contains"' in proc.stderr


def test_configuration_errors_exit_2_without_traceback(tmp_path):
    (tmp_path / "s.yaml").write_text("- {sample_id: a, prompt: hi}\n", encoding="utf-8")
    for args in (["--target", "nope:x"], ["--target", "replay:missing.jsonl"], []):
        proc = omk("eval", "s.yaml", *args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert proc.stderr.strip()
    (tmp_path / "omk.yaml").write_text("targt: replay:r.jsonl\n", encoding="utf-8")
    proc = omk("eval", "s.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "omk.yaml:1: targt: unknown setting (did you mean \"target\"?)"


def test_filter_selects_by_glob(tmp_path):
    out = tmp_path / "run"
    proc = omk("eval", str(SAMPLES), "--filter", "cs-*", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    ids = [r["sample_id"] for r in json.loads((out / "report.json").read_text())["results"]]
    assert ids
    assert all(i.startswith("cs-") for i in ids)
    assert omk("eval", str(SAMPLES), "--filter", "zz-*").returncode == 2


def test_help_and_doctor_counts():
    assert omk("--help").returncode == 0
    proc = omk("doctor", str(SAMPLES), "--json")
    assert proc.returncode == 0, proc.stderr
    cov = json.loads(proc.stdout)["coverage"]
    assert cov["samples"] >= 10
    assert cov["assertion_types"]["contains"] >= 5
    assert "security-review" in cov["capability"]


def test_init_writes_a_runnable_starter_with_its_schema(tmp_path):
    proc = omk("init", "proj", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proj = tmp_path / "proj"
    first = (proj / "eval-samples.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=eval-samples.schema.json"
    schema = json.loads((proj / "eval-samples.schema.json").read_text(encoding="utf-8"))
    assert "contains" in json.dumps(schema)
    run = omk("eval", "eval-samples.yaml", "--out", str(tmp_path / "out"), cwd=proj)
    assert run.returncode == 0, run.stdout + run.stderr
    again = omk("init", "proj", cwd=tmp_path)
    assert again.returncode == 2
    assert "already exist" in again.stderr


def test_init_keeps_the_omk_folder_out_of_git_creating_or_appending_to_gitignore(tmp_path):
    assert omk("init", "new", cwd=tmp_path).returncode == 0
    assert (tmp_path / "new" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == ".omk/"
    old = tmp_path / "old"
    old.mkdir()
    (old / ".gitignore").write_text("node_modules/", encoding="utf-8")  # no newline at the end
    proc = omk("init", "old", cwd=tmp_path)
    assert proc.returncode == 0 and ".gitignore" in proc.stdout, proc.stderr
    lines = (old / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "node_modules/"
    assert lines[-1] == ".omk/"
    for name in ("eval-samples.yaml", "responses.jsonl", "omk.yaml", "eval-samples.schema.json"):
        (old / name).unlink()
    assert omk("init", "old", cwd=tmp_path).returncode == 0
    assert (old / ".gitignore").read_text(encoding="utf-8").count(".omk/") == 1  # not twice


def test_report_files_are_readable_like_any_file_the_user_writes(tmp_path):
    """Atomic writes go through a temporary file; CI artifact uploaders run as other users."""
    out = tmp_path / "run"
    proc = omk("eval", str(SAMPLES), "--target", f"replay:{ROOT / 'samples' / 'responses.jsonl'}",
               "--out", str(out), "--format", "junit,md")
    assert proc.returncode == 0, proc.stderr
    expected = (out / "results.jsonl").stat().st_mode & 0o777  # plain open(): 0o666 & ~umask
    for name in ("report.json", "junit.xml", "summary.md"):
        assert (out / name).stat().st_mode & 0o777 == expected, name


def test_a_reader_that_leaves_early_gets_no_traceback():
    """`omk doctor --json | head -c 10`: the pipe closes before omk writes; it stops quietly."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(  # not run_omk: stdout is a pipe whose reader has gone
            [sys.executable, "-m", "omk", "doctor", str(SAMPLES), "--json"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0
    assert proc.stderr == ""


def _eval_into_a_closed_pipe(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(  # not run_omk: stdout is a pipe whose reader has gone
            [sys.executable, "-m", "omk", "eval", str(SAMPLES), "--target", f"replay:{RESPONSES}",
             "--out", str(tmp_path / "run"), *extra],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("quiet", [(), ("--quiet",)], ids=["summary table", "quiet line"])
def test_a_reader_that_leaves_during_the_summary_does_not_change_the_gate_verdict(tmp_path, quiet):
    """`omk eval … | head -3` in CI: the output stops, the exit code is still the gate's."""
    passed = _eval_into_a_closed_pipe(tmp_path, *quiet)
    assert passed.returncode == 0 and "Traceback" not in passed.stderr, passed.stderr
    failed = _eval_into_a_closed_pipe(tmp_path, "--threshold", "4.5", *quiet)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["summary"]["gate_passed"] is False


def test_a_quiet_replay_of_a_json_file_loads_neither_rich_nor_httpx_nor_pyyaml(tmp_path):
    """What a run does not use is not imported (docs/benchmarks.md, the cached rerun: its start-up)."""
    (tmp_path / "samples.json").write_text(
        json.dumps({"samples": [{"sample_id": "s1", "prompt": "hi", "assertions": [{"type": "contains", "value": "hi"}]}]}),
        encoding="utf-8",
    )
    (tmp_path / "out.jsonl").write_text(json.dumps({"sample_id": "s1", "output": "hi there"}) + "\n", encoding="utf-8")
    proc = subprocess.run(  # not run_omk: the interpreter runs with -X importtime
        [sys.executable, "-X", "importtime", "-m", "omk", "eval", "samples.json", "--target", "replay:out.jsonl",
         "--quiet", "--out", "run"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "omk.loader" in loaded
    assert "omk.runner.sample_run" in loaded  # the listing is real
    assert not {m for m in loaded if m.split(".")[0] in ("rich", "httpx", "yaml", "click", "pygments")}


def test_httpx_imported_by_the_omk_process_leaves_its_command_line_client_out():
    code = (
        "import sys\nfrom omk.cli.main import main\n"
        "try:\n    main(['doctor', '--help'])\nexcept SystemExit:\n    pass\n"
        "import httpx\nprint(sorted(n for n in ('click', 'pygments') if n in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
