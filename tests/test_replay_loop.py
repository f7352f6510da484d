"""Record → replay: a run's own results.jsonl (conversations and repeats included) replays as it
is, and a replay file that records none of the samples is refused before the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_support import run_omk

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "eval-samples.yaml"


def _omk(*args: str) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=ROOT, columns=None)


def _outputs(report: dict) -> dict:
    return {(r["sample_id"], r["repeat"]): (r["output"], [t["output"] for t in r.get("turns") or []]) for r in report["results"]}


def test_a_recorded_run_with_conversations_and_repeats_replays_the_same(tmp_path):
    recorded = _omk("eval", str(SAMPLES), "--no-judge", "--no-cache", "--repeat", "2", "--quiet", "--out", str(tmp_path / "rec"))
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    lines = [json.loads(line) for line in (tmp_path / "rec" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(line.get("turns") and line.get("output") for line in lines), "the bundled set has a conversation"
    results = tmp_path / "rec" / "results.jsonl"
    replayed = _omk("eval", str(SAMPLES), "--no-judge", "--target", f"replay:{results}", "--quiet", "--out", str(tmp_path / "rep"))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    before = json.loads((tmp_path / "rec" / "report.json").read_text(encoding="utf-8"))
    after = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    first_runs = {k: v for k, v in _outputs(before).items() if k[1] == 0}
    assert _outputs(after) == first_runs
    assert [r["passed"] for r in after["results"]] == [r["passed"] for r in before["results"] if r["repeat"] == 0]


def test_a_replay_file_that_matches_no_sample_is_an_error_naming_some_ids(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({"sample_id": f"old-{i}", "output": "x"}) + "\n" for i in range(5)), encoding="utf-8")
    proc = _omk("eval", str(SAMPLES), "--no-judge", "--target", f"replay:{other}", "--out", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f'{other}: no recorded response matches any sample: it records "old-0", "old-1", "old-2" and 2 more; '
        'the samples are "cr-sql-injection-zh", "cr-read-before-review", "cr-json-findings" and 11 more '
        "(was this file recorded from other samples?)"
    )
    assert not (tmp_path / "run").exists()


def test_a_replay_file_matching_some_samples_runs_and_errors_the_rest(tmp_path):
    some = tmp_path / "some.jsonl"
    some.write_text(json.dumps({"sample_id": "cr-sql-injection-zh", "output": "SQL 注入 参数化"}) + "\n", encoding="utf-8")
    proc = _omk("eval", str(SAMPLES), "--no-judge", "--target", f"replay:{some}", "--quiet", "--out", str(tmp_path / "run"))
    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["errored"] == report["summary"]["total"] - 1
