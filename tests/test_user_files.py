"""Every file a user or a sample names is read by the file rules, not only samples files: the
scripted model's script (`omk serve-model`), omk.yaml, a replay file, a skill file or folder
(`--ablate`, the agent targets' install and cache key), a file a `cmd:` command line names. A FIFO
there is a one-line error, never a hang; a link to /dev/zero never a MemoryError; a link out of a
skill folder is left out of what is read, hashed and copied."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.io.safe_files import copy_confined, file_sha256, regular_files, skill_notes
from omk.targets.claude.setup import tree_sha256


def _omk(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """omk in a child, bounded only as a guard: every case here ends by itself in well under a second."""
    return run_omk(*args, cwd=cwd, drop=(), columns=None, timeout=60)


def _one_line_refusal(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, err)
    assert "\n" not in err and "Traceback" not in err and "MemoryError" not in err, err
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc-environ"])
def test_serve_model_reads_its_script_by_the_file_rules(tmp_path, kind):
    script = tmp_path / "script.yaml"
    if kind == "fifo":
        os.mkfifo(script)
    else:
        script.symlink_to("/dev/zero" if kind == "dev-zero" else "/proc/self/environ")
    _one_line_refusal(_omk(tmp_path, "serve-model", str(script), "--port", "0"), "script.yaml", "cannot read")


SAMPLES = "samples:\n  - sample_id: a\n    prompt: p\n    assertions:\n      - {type: contains, value: hi}\n"


def test_an_omk_yaml_that_is_special_is_never_opened(tmp_path):
    """An omk.yaml that is a FIFO is not a settings file (the run goes on without it); one given by
    --config that is a FIFO or /dev/zero is a one-line error, never a hang."""
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES, encoding="utf-8")
    (tmp_path / "out.jsonl").write_text('{"sample_id": "a", "output": "hi"}\n', encoding="utf-8")
    os.mkfifo(tmp_path / "omk.yaml")
    proc = _omk(tmp_path, "eval", "eval-samples.yaml", "--target", "replay:out.jsonl", "--no-cache")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    from omk.core.errors import ConfigError
    from omk.settings.config import read_config

    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    for name in ("omk.yaml", "zero.yaml"):
        with pytest.raises(ConfigError, match="cannot read"):
            read_config(tmp_path / name)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_replay_file_that_is_special_is_one_line(tmp_path, kind):
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES, encoding="utf-8")
    replay = tmp_path / "out.jsonl"
    if kind == "fifo":
        os.mkfifo(replay)
    else:
        replay.symlink_to("/dev/zero")
    proc = _omk(tmp_path, "eval", "eval-samples.yaml", "--target", "replay:out.jsonl", "--no-cache")
    _one_line_refusal(proc, "out.jsonl", "cannot read replay file")


def _hostile_skill(tmp_path: Path) -> Path:
    """A skill folder with a FIFO, a link to /dev/zero and a link to a secret outside it."""
    skill = tmp_path / "skills" / "review"
    (skill / "refs").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: d\n---\n# One\nbody\n## Two\nmore\n", encoding="utf-8")
    (skill / "refs" / "guide.md").write_text("a guide", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET", encoding="utf-8")
    os.mkfifo(skill / "refs" / "pipe")
    (skill / "refs" / "zero").symlink_to("/dev/zero")
    (skill / "refs" / "leak.md").symlink_to(secret)
    return skill


def test_a_skill_folder_is_hashed_and_copied_without_what_is_not_its_own_regular_file(tmp_path):
    skill = _hostile_skill(tmp_path)
    assert [p.name for p in regular_files(skill)] == ["SKILL.md", "guide.md"]
    before = tree_sha256(skill)  # returns: neither the FIFO nor /dev/zero is opened
    (tmp_path / "secret.txt").write_text("ANOTHER SECRET", encoding="utf-8")
    assert tree_sha256(skill) == before  # what the link out points at is not part of the skill
    copy = tmp_path / "installed"
    left_out = copy_confined(skill, copy, skill)
    assert sorted(p.name for p in copy.rglob("*") if p.is_file()) == ["SKILL.md", "guide.md"]
    assert sorted(Path(n).name for n in left_out) == ["leak.md", "pipe", "zero"]
    assert all("left out" in note for note in skill_notes(left_out))


def test_an_ablation_of_a_hostile_skill_folder_neither_hangs_nor_reads_outside(tmp_path):
    skill = _hostile_skill(tmp_path)
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES, encoding="utf-8")
    (tmp_path / "out.jsonl").write_text('{"sample_id": "a", "output": "hi"}\n', encoding="utf-8")
    proc = _omk(tmp_path, "eval", "eval-samples.yaml", "--target", "replay:out.jsonl", "--ablate", str(skill),
                "--no-cache", "--dry-run")  # fmt: skip
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1, 2), proc.stderr
    copies = [p for p in (tmp_path / ".omk").rglob("*") if p.is_file()] if (tmp_path / ".omk").exists() else []
    assert not any("TOP-SECRET" in p.read_text(encoding="utf-8", errors="replace") for p in copies)


def test_file_hashes_are_read_in_pieces_and_capped(tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(3 * 1024 * 1024)  # sparse: three MB of zeros that take no disk
    assert file_sha256(big) == __import__("hashlib").sha256(b"\0" * (3 * 1024 * 1024)).hexdigest()
    with pytest.raises(OSError, match="larger than"):
        file_sha256(big, max_bytes=1024 * 1024)
