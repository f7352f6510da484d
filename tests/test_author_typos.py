"""What a new skill author mistypes gets an answer naming what to type: `--ablate` given the
SKILL.md file takes its folder, a misspelt skill path gets the near name sample paths get, a
misspelt target kind gets "did you mean", and `omk serve-model` on a busy port names --port."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

from cli_support import run_omk

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "samples" / "experiment"
SKILL = EXPERIMENT / "skills" / "support-tone"


def omk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, columns=200)


def test_ablate_takes_the_skill_md_file_as_its_folder(tmp_path: Path) -> None:
    proc = omk("eval", str(EXPERIMENT / "eval-samples.yaml"), "--ablate", str(SKILL / "SKILL.md"), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not a skill folder" not in proc.stderr
    assert " variants" in proc.stdout  # the whole skill and one without each part


def test_ablating_one_skill_of_a_library_keeps_the_others_installed(tmp_path: Path) -> None:
    """docs/skills.md's library (omk.yaml `skills: skills`, three skills): ablating release-notes
    keeps changelog and commit-message in every variant, so the samples that name them still load
    (before: `skill_used names 'changelog', which this run does not install`, exit 2)."""
    from claude_support import require_claude

    shutil.copytree(ROOT / "samples" / "skills", tmp_path / "skills")
    proc = run_omk("eval", "skills/eval-samples.yaml", "--ablate", "skills/skills/release-notes/SKILL.md", "--dry-run", "--no-judge",
                   cwd=tmp_path, env={"OMK_CLAUDE": require_claude(), "ANTHROPIC_API_KEY": "offline"}, columns=200)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "does not install" not in proc.stderr
    assert "over 2 variants" in proc.stdout, proc.stdout  # the whole skill, and it without its one section


def test_a_misspelt_skill_path_gets_the_near_name(tmp_path: Path) -> None:
    shutil.copytree(SKILL, tmp_path / "skills" / "support-tone")
    shutil.copy(EXPERIMENT / "eval-samples.yaml", tmp_path / "eval-samples.yaml")
    proc = omk("eval", "eval-samples.yaml", "--ablate", "skills/suport-tone", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"did you mean {tmp_path / 'skills' / 'support-tone'}?" in proc.stderr, proc.stderr
    proc = omk("eval", "eval-samples.yaml", "--control", "baseline", "--treatment", "skills/suport-tone", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2 and f"did you mean {tmp_path / 'skills' / 'support-tone'}?" in proc.stderr, proc.stderr


def test_a_misspelt_target_kind_gets_did_you_mean(tmp_path: Path) -> None:
    shutil.copy(EXPERIMENT / "eval-samples.yaml", tmp_path / "eval-samples.yaml")
    proc = omk("eval", "eval-samples.yaml", "--target", "claud:sonnet", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "did you mean claude:sonnet?" in proc.stderr


def test_serve_model_on_a_busy_port_names_the_port_option(tmp_path: Path) -> None:
    shutil.copy(ROOT / "samples" / "claude" / "model-script.yaml", tmp_path / "model.yaml")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = omk("serve-model", "model.yaml", "--port", str(port), cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"127.0.0.1:{port}" in proc.stderr
    assert "--port" in proc.stderr
