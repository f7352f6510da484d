"""A run folder is input like a samples file: it may come from a download or a pull request, be
edited by hand, or hold a FIFO, a device or a link into /proc. `--resume`, `omk report`,
`omk doctor --report` and `omk diff` read it through the file rules, name a broken line, and never
start a program it names unless the user gives that program again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_folder_support import AGENT, HOOK, HOOKED_SAMPLES, SAMPLES, TARGET, omk


def a_run(tmp: Path, name: str = "run") -> Path:
    (tmp / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    proc = omk("eval", "s.yaml", "--target", TARGET, "--out", name, "--no-cache", "--quiet", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp / name


def clean_failure(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


def test_a_hand_edited_results_line_is_dropped_with_its_line_and_field_and_runs_again(tmp_path):
    run = a_run(tmp_path)
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["scores"] = [1]
    second["scores"]["composite"] = "x"
    (run / "results.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    proc = omk("eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{run / 'results.jsonl'}:1: scores: expected an object or null, found a list" in proc.stderr
    assert f"{run / 'results.jsonl'}:2: scores.composite: expected a number or null, found 'x'" in proc.stderr
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert sorted(r["sample_id"] for r in report["results"]) == ["a", "b"]
    assert all(isinstance(r["scores"]["composite"], float | int) for r in report["results"])  # run again


def hostile_run(tmp: Path, *, cli_target: str | None, cwd: Path) -> Path:
    """A run folder as someone else could hand it over: run.json names a command to run."""
    (tmp / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    run = tmp / "run"
    run.mkdir()
    manifest = {
        "format": "omk-run/1", "run_id": "x", "started_at": "2025-01-01T00:00:00+00:00", "cwd": str(cwd),
        "samples_files": [str(tmp / "s.yaml")], "cli": {"samples": ["s.yaml"], "target": cli_target, "out": "run"},
    }  # fmt: skip
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run


EVIL = f"cmd:{sys.executable} -c \"open('pwned', 'w').write('x')\""


def test_a_command_target_in_someone_elses_run_json_is_not_run(tmp_path):
    run = hostile_run(tmp_path, cli_target=EVIL, cwd=tmp_path)
    proc = omk("eval", "--resume", str(run), "--no-cache", "--quiet", cwd=tmp_path)
    clean_failure(proc, f"{run / 'run.json'}: target:", "runs a command", "--target")
    assert not (tmp_path / "pwned").exists()


def test_a_command_target_from_the_omk_yaml_run_json_points_at_is_not_run_either(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "omk.yaml").write_text(f"target: {json.dumps(EVIL)}\n", encoding="utf-8")
    run = hostile_run(tmp_path, cli_target=None, cwd=elsewhere)
    proc = omk("eval", "--resume", str(run), "--no-cache", "--quiet", cwd=tmp_path)
    clean_failure(proc, "runs a command")
    assert not (elsewhere / "pwned").exists()
    assert not (tmp_path / "pwned").exists()


def test_giving_the_command_target_again_resumes_and_another_one_is_refused(tmp_path):
    run = a_run(tmp_path)
    (run / "results.jsonl").write_text("", encoding="utf-8")
    clean_failure(omk("eval", "--resume", "run", "--quiet", cwd=tmp_path), "runs a command")
    other = omk("eval", "--resume", "run", "--target", f"cmd:{sys.executable} other.py", "--quiet", cwd=tmp_path)
    clean_failure(other, "not the run's target")
    again = omk("eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr




def test_hooks_of_the_samples_someone_elses_run_json_points_at_are_not_run(tmp_path):
    run = a_run(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "s.yaml").write_text(HOOKED_SAMPLES, encoding="utf-8")
    (elsewhere / "hook.py").write_text(HOOK.replace("'hook-ran'", repr(str(tmp_path / "pwned"))), encoding="utf-8")
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    manifest["samples_files"] = [str(elsewhere / "s.yaml")]
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    (run / "results.jsonl").write_text("", encoding="utf-8")
    proc = omk("eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet", cwd=tmp_path)
    clean_failure(proc, f"{run / 'run.json'}: samples_files:", "custom hook 'hook.py'", "give the samples again")
    assert not (tmp_path / "pwned").exists()


def test_giving_the_samples_again_lets_their_hooks_run_on_resume_and_other_samples_are_refused(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(HOOKED_SAMPLES, encoding="utf-8")
    (tmp_path / "other.yaml").write_text(SAMPLES, encoding="utf-8")
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    first = omk("eval", "s.yaml", "--target", TARGET, "--out", "run", "--no-cache", "--quiet", cwd=tmp_path)
    assert first.returncode == 0 and (tmp_path / "hook-ran").exists(), first.stderr
    (tmp_path / "hook-ran").unlink()
    (tmp_path / "run" / "results.jsonl").write_text("", encoding="utf-8")
    resume = ["eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet"]
    clean_failure(omk(*resume, cwd=tmp_path), "samples_files:", f"omk eval --resume {tmp_path / 'run'} --target", str(tmp_path / 's.yaml'))
    clean_failure(omk(*resume, "other.yaml", cwd=tmp_path), "samples_files:", "give those again or none")
    assert not (tmp_path / "hook-ran").exists()
    again = omk(*resume, "s.yaml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "hook-ran").exists()


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


READERS = {
    "report": lambda run: ("report", str(run), "--format", "md"),
    "doctor --report": lambda run: ("doctor", "--report", str(run)),
    "diff": lambda run: ("diff", str(run), str(run)),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/proc/self/environ"])
def test_a_special_file_as_report_json_is_refused_without_hanging_or_reading_it(tmp_path, reader, kind):
    run = a_run(tmp_path)
    report = run / "report.json"
    if kind == "fifo":
        fifo(report)
    else:
        report.unlink()
        report.symlink_to(kind)
    secret = "sk-omk-test-environ-0123456789"
    proc = omk(*READERS[reader](run), cwd=tmp_path, extra={"OMK_TEST_TOKEN": secret})
    clean_failure(proc, str(report), "system file" if kind.startswith("/") else "not a regular file")
    assert secret not in proc.stdout + proc.stderr  # never read, so never shown


@pytest.mark.parametrize("name", ["run.json", "results.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_special_file_in_the_folder_to_resume_is_refused(tmp_path, name, kind):
    run = a_run(tmp_path)
    path = run / name
    if kind == "fifo":
        fifo(path)
    else:
        path.unlink()
        path.symlink_to(kind)
    proc = omk("eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet", cwd=tmp_path)
    clean_failure(proc, str(path))


def test_run_folder_files_are_read_up_to_the_cap(tmp_path):
    run = a_run(tmp_path)
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    (run / "run.json").write_text(json.dumps({**manifest, "pad": "x" * 5000}), encoding="utf-8")
    (run / "report.json").write_text("[\n" + "0,\n" * 2000 + "0]", encoding="utf-8")  # another layout: read whole
    small = {"OMK_MAX_SAMPLE_FILE_BYTES": "4096"}
    resumed = omk("eval", "--resume", "run", "--target", TARGET, "--quiet", cwd=tmp_path, extra=small)
    clean_failure(resumed, str(run / "run.json"), "larger than the 4096 bytes")
    clean_failure(omk("report", "run", "--format", "md", cwd=tmp_path, extra=small), "larger than the 4096 bytes")
    (run / "report.json").write_text("{" + " " * 5000 + "}", encoding="utf-8")  # one line past the cap
    clean_failure(omk("report", "run", "--format", "md", cwd=tmp_path, extra=small), "a line longer than the 4096 bytes")


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_report_json_that_links_out_of_its_folder_is_refused(tmp_path, reader):
    run = a_run(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    (run / "report.json").rename(elsewhere)  # a real report, but not this folder's
    (run / "report.json").symlink_to(elsewhere)
    clean_failure(omk(*READERS[reader](run), cwd=tmp_path), str(run / "report.json"), "outside its run folder")


@pytest.mark.parametrize("name", ["run.json", "results.jsonl"])
def test_a_file_of_the_folder_to_resume_that_links_out_is_neither_read_nor_written(tmp_path, name):
    run = a_run(tmp_path)
    elsewhere = tmp_path / f"elsewhere-{name}"
    (run / name).rename(elsewhere)
    (run / name).symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    proc = omk("eval", "--resume", "run", "--target", TARGET, "--no-cache", "--quiet", cwd=tmp_path)
    clean_failure(proc, str(run / name), "outside its run folder")
    assert elsewhere.read_bytes() == before


def test_a_new_run_into_a_folder_whose_files_link_out_writes_none_of_them(tmp_path):
    """A reused or downloaded run folder whose results.jsonl (or report.json, run.json) links to
    a file of the user's: a fresh run replaces the links with its own files, never writing through."""
    run = a_run(tmp_path)
    victims = {}
    for name in ("results.jsonl", "report.json", "run.json", "summary.md"):
        victim = tmp_path / f"victim-{name}"
        victim.write_text(f"precious {name}\n", encoding="utf-8")
        (run / name).unlink(missing_ok=True)
        (run / name).symlink_to(victim)
        victims[name] = victim
    proc = omk("eval", "s.yaml", "--target", TARGET, "--out", "run", "--no-cache", "--quiet", "--format", "json,md", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name, victim in victims.items():
        assert victim.read_text(encoding="utf-8") == f"precious {name}\n", name
        assert not (run / name).is_symlink() and (run / name).is_file(), name
