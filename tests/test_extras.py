"""The default install leaves the heavy parts out (the MCP SDK is the omk[mcp] extra; sacrebleu,
numpy and lxml are test-only). A subprocess whose sitecustomize blocks those modules stands for a
fresh `pip install omk`: the bundled samples still run, and a run that needs the SDK says in one
line which extra to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.core import extras

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("mcp", "mcp_types", "sacrebleu", "numpy", "lxml", "pydantic")
HINT = "needs the MCP SDK, an optional part of omk: pip install 'omk[mcp]'"


@pytest.fixture
def blocked_env(tmp_path):
    """Environment for a child Python in which the HEAVY modules cannot be imported."""
    site = tmp_path / "block"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import sys\nfor name in {HEAVY!r}:\n    sys.modules[name] = None  # import raises ImportError\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1", "COLUMNS": "200"}
    for key in ("OMK_TARGET", "OMK_JUDGE", "OMK_URL_ALLOW"):
        env.pop(key, None)
    return env


def omk(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=120)


def test_the_block_works(blocked_env):
    code = "import importlib.util, sys\nfrom omk.core import extras\nprint(extras.installed('mcp'))\nimport numpy"
    proc = subprocess.run([sys.executable, "-c", code], env=blocked_env, capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False"
    assert "ImportError" in proc.stderr or "ModuleNotFoundError" in proc.stderr
    assert extras.installed("mcp")  # here, with omk[test] installed, it is


def test_the_bundled_samples_run_without_the_optional_parts(blocked_env, tmp_path):
    # The README's first command; the bundled samples use bleu_min, counted without sacrebleu.
    proc = omk(["eval", "eval-samples.yaml", "--out", str(tmp_path / "run")], ROOT / "samples", blocked_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    checks = [a for r in report["results"] for a in r["assertions"] if a["type"] == "bleu_min"]
    assert checks
    assert all(a["passed"] for a in checks)
    assert not [r["sample_id"] for r in report["results"] if r.get("error")]


def write_project(tmp: Path, prompt: str) -> Path:
    docs = {"command": sys.executable, "args": ["-c", "pass"], "urlPatterns": ["docs.corp.internal"], "fetchTool": {"name": "fetch"}}
    (tmp / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": docs}}), encoding="utf-8")
    sample = {"sample_id": "s1", "prompt": prompt, "assertions": [{"type": "contains", "value": "recorded"}]}
    (tmp / "eval-samples.json").write_text(json.dumps({"samples": [sample]}), encoding="utf-8")
    (tmp / "responses.jsonl").write_text(json.dumps({"sample_id": "s1", "output": "recorded"}) + "\n", encoding="utf-8")
    (tmp / "omk.yaml").write_text("target: replay:responses.jsonl\n", encoding="utf-8")
    return tmp / "eval-samples.json"


def test_a_url_for_an_mcp_server_without_the_sdk_is_one_line_and_exit_2(blocked_env, tmp_path):
    samples = write_project(tmp_path, "Summarise https://docs.corp.internal/team/space/page")
    proc = omk(["eval", str(samples), "--out", str(tmp_path / "run")], tmp_path, blocked_env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == f"{tmp_path / '.mcp.json'}: URL inlining through the MCP servers here {HINT}"
    assert not (tmp_path / "run" / "report.json").exists()


def test_mcp_servers_no_url_needs_are_no_reason_to_stop(blocked_env, tmp_path):
    # The URL is an inside address (refused, never fetched) that no server's pattern matches.
    samples = write_project(tmp_path, "Summarise http://127.0.0.1:9/page")
    proc = omk(["eval", str(samples), "--out", str(tmp_path / "run")], tmp_path, blocked_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "omk[mcp]" not in proc.stderr


CLAUDE_WORKSPACE = """
import os, sys, tempfile
from pathlib import Path
from omk.samples.model import Sample
from omk.targets.base import TargetError
from omk.settings.target_settings import TargetSettings
from omk.targets.claude.setup import load_settings
from omk.targets.claude.workspace import Workspace
cfg = load_settings("sonnet", "claude:sonnet", TargetSettings())
mocks = sys.argv[1:]
sample = Sample(sample_id="s", prompt="p", base_dir=Path.cwd(), mocks=[{"tool": t, "response": "ok"} for t in mocks])
before = set(Path(tempfile.gettempdir()).glob("omk-claude-*"))
try:
    Workspace(cfg, sample).remove()
    print("ok")
except TargetError as exc:
    print(exc)
print(sorted(set(Path(tempfile.gettempdir()).glob("omk-claude-*")) - before))
"""


@pytest.mark.parametrize("mocks", [["mcp__github__create_issue"], ["Bash"]])
def test_the_claude_stand_in_mcp_server_without_the_sdk_errors_the_sample(blocked_env, tmp_path, mocks):
    fake = tmp_path / "claude"
    fake.write_text(f"#!{sys.executable}\nprint('2.1.0')\n")
    fake.chmod(0o755)
    env = {**blocked_env, "OMK_CLAUDE": str(fake), "TMPDIR": str(tmp_path), "ANTHROPIC_API_KEY": "sk-test"}
    proc = subprocess.run([sys.executable, "-c", CLAUDE_WORKSPACE, *mocks], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    message, leftovers = proc.stdout.strip().splitlines()
    if mocks[0].startswith("mcp__"):
        assert message == f"claude: the stand-in MCP server for the mocked github tools {HINT}"
    else:  # no MCP tool mocked: no stand-in server, no SDK needed
        assert message == "ok"
    assert leftovers == "[]"
