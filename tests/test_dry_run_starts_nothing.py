"""`omk eval --dry-run` starts no program at all: not the agent CLI omk.yaml names (not even for
its `--version`), not a `cmd:` target. It says which checks that left undone."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk


def _marker_script(folder: Path, name: str) -> tuple[Path, Path]:
    """An executable that, whenever it runs, leaves a marker file (and answers as a CLI would)."""
    marker = folder / f"{name}-RAN"
    script = folder / name
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\necho '9.9.9'\n", encoding="utf-8")
    script.chmod(0o755)
    return script, marker


def _dry_run(project: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "OPENAI_", "ANTHROPIC_", "CODEX_", "CLAUDE_"))}
    full.update(env)
    return run_omk(
        "eval", "eval-samples.yaml", "--dry-run", "--no-judge", *extra,
        cwd=project, base=full, drop=(), columns=None, timeout=120,
    )  # fmt: skip


def _samples(project: Path) -> None:
    sample = {"sample_id": "s1", "prompt": "Say hi.", "assertions": [{"type": "contains", "value": "hi"}]}
    (project / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": [sample]}), encoding="utf-8")


@pytest.mark.parametrize(("kind", "key"), [("claude", "ANTHROPIC_API_KEY"), ("codex", "OPENAI_API_KEY")])
def test_a_dry_run_never_runs_the_agent_cli_omk_yaml_names(tmp_path, kind, key):
    script, marker = _marker_script(tmp_path, f"fake-{kind}")
    _samples(tmp_path)
    (tmp_path / "omk.yaml").write_text(yaml.safe_dump({"target": f"{kind}:some-model", kind: {"path": str(script)}}), encoding="utf-8")
    proc = _dry_run(tmp_path, {key: "sk-dry-run-key", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists(), "the dry run started the CLI"
    assert "no program started" in proc.stdout
    assert f"not checked without running it: the {kind} CLI's version" in proc.stdout


def test_a_dry_run_never_runs_a_cmd_target(tmp_path):
    script, marker = _marker_script(tmp_path, "agent")
    _samples(tmp_path)
    proc = _dry_run(tmp_path, {}, "--target", f"cmd:{script}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()
    assert "no program started" in proc.stdout


def test_a_dry_run_with_no_known_price_says_the_cost_is_unknown_not_zero(tmp_path):
    """An unpriced model's calls are not counted: the total says so instead of `$0.0000`, which
    reads as free; a priced run still gives its sum."""
    _samples(tmp_path)
    unknown = _dry_run(tmp_path, {"OPENAI_API_KEY": "sk-dry-run-key"}, "--target", "openai:my-own-model")
    assert unknown.returncode == 0, unknown.stdout + unknown.stderr
    assert "estimated cost: unknown (no call of this run has a known price; see below)" in unknown.stdout
    assert "$0.0000" not in unknown.stdout
    priced = _dry_run(tmp_path, {"OPENAI_API_KEY": "sk-dry-run-key"}, "--target", "openai:gpt-4o")
    assert re.search(r"estimated cost: \$0\.\d{4}\n", priced.stdout), priced.stdout


@pytest.mark.parametrize(
    ("target", "key"),
    [("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"), ("claude:sonnet", "ANTHROPIC_API_KEY"), ("codex:", "OPENAI_API_KEY")],
)
def test_a_dry_run_needs_no_api_key_and_says_it_is_missing(tmp_path, target, key):
    """A dry run sends nothing, so a missing key does not stop it: the plan and its cost are
    printed, with a warning line naming the variable a run needs; the same command without
    --dry-run refuses, one line, exit 2."""
    script, marker = _marker_script(tmp_path, "fake-cli")
    _samples(tmp_path)
    env = {"OMK_CLAUDE": str(script), "OMK_CODEX": str(script)}
    proc = _dry_run(tmp_path, env, "--target", target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "estimated cost: $0.0" in proc.stdout  # a figure: every model here is priced
    warning = [line for line in proc.stdout.splitlines() if line.strip().startswith("warning:")]
    assert len(warning) == 1, proc.stdout
    assert f"no API key: set {key}" in warning[0]
    assert "a run stops here" in warning[0]
    assert not marker.exists()
    real = run_omk("eval", "eval-samples.yaml", "--no-judge", "--target", target, cwd=tmp_path,
                   base={k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "OPENAI_", "ANTHROPIC_", "CODEX_", "CLAUDE_"))} | env,
                   drop=(), columns=None, timeout=120)  # fmt: skip
    assert real.returncode == 2, real.stdout + real.stderr
    assert f"no API key: set {key}" in real.stderr
    assert not marker.exists()


def test_a_dry_run_with_a_judge_and_no_key_warns_in_the_run_s_language(tmp_path):
    _samples(tmp_path)
    (tmp_path / "omk.yaml").write_text("judge: openai:gpt-4o\n", encoding="utf-8")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "OPENAI_", "ANTHROPIC_", "CODEX_", "CLAUDE_"))}
    proc = run_omk("eval", "eval-samples.yaml", "--dry-run", "--target", "cmd:true", "--lang", "zh", cwd=tmp_path, base=full, drop=(), columns=None, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "警告：评委 'openai:gpt-4o'：没有 API 密钥：请设置 OPENAI_API_KEY" in proc.stdout, proc.stdout
